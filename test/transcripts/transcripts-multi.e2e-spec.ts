import { readFileSync } from 'node:fs';
import { SandboxPortal, SandboxTenant } from '../../sandbox';
import { ADMIN_TOKEN, ended, eventually, started } from '../support/bridge-harness';
import { install, MultiBridge, pbxTokenFor, startMultiBridge, tempDir } from '../support/multi-harness';
import { SpeechFixtures, speechFixtures } from '../support/speech-audio';
import { transcribeRequests } from '../support/transcribe-inspect';
import { TranscribeServer } from '../support/transcribe-server';

/**
 * Many portals (SPEC §12): the transcription service is the deployment's, and each portal's admin turns
 * transcripts on for their own portal (`transcribe`, default off) through `PATCH /v1/admin/portals/:id`.
 */
describe('transcripts with many portals', () => {
  const key = 'sk-multi-0123456789abcdef';
  let sandbox: SandboxPortal;
  let server: TranscribeServer;
  let fixtures: SpeechFixtures;
  let bridge: MultiBridge;
  let temp: { dir: string; remove(): void };
  let alpha: SandboxTenant;
  let beta: SandboxTenant;

  beforeAll(async () => {
    fixtures = await speechFixtures();
    server = await TranscribeServer.start({ sentences: fixtures.sentences, apiKey: key });
    sandbox = await SandboxPortal.start();
    alpha = sandbox.addPortal({ name: 'alpha' });
    beta = sandbox.addPortal({ name: 'beta' });
    temp = tempDir();
    bridge = await startMultiBridge(sandbox, temp.dir, {
      TRANSCRIBE_URL: server.endpoint,
      TRANSCRIBE_AUTH: `bearer:${key}`,
    });
    expect(await install(alpha, bridge.url)).toBe(200);
    expect(await install(beta, bridge.url)).toBe(200);
  });
  afterAll(async () => {
    await bridge?.close();
    await sandbox?.close();
    await server?.close();
    temp?.remove();
  });

  const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
  const patch = (tenant: SandboxTenant, body: object) =>
    bridge.http.patch(`/v1/admin/portals/${tenant.memberId}`).set(admin).send(body);

  /** An answered call with a pushed recording on the tenant's PBX token; its status once the upload is done. */
  async function recordedCall(tenant: SandboxTenant, callId: string) {
    const token = await pbxTokenFor(bridge, tenant.memberId);
    const auth = { Authorization: `Bearer ${token}` };
    await bridge.http
      .post('/v1/calls/events')
      .set(auth)
      .send([started(callId), ended(callId)])
      .expect(202);
    await bridge.http
      .put(`/v1/calls/${callId}/recording`)
      .set(auth)
      .set('Content-Type', 'audio/wav')
      .send(readFileSync(fixtures.silentWav.path))
      .expect(202);
    return eventually(async () => {
      const { body } = await bridge.http.get(`/v1/calls/${callId}`).set(auth);
      const done = body.recording === 'attached' && body.transcript?.state !== 'pending';
      return done ? body : undefined;
    }, 30_000);
  }

  it('refuses a transcribe that is not a boolean, naming the field', async () => {
    const refused = await patch(beta, { transcribe: 'yes' });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain('transcribe');
  });

  it('transcribes only the calls of the portal that turned transcripts on', async () => {
    const on = await patch(beta, { transcribe: true });
    expect(on.status).toBe(200);
    expect(on.body.settings).toMatchObject({ transcribe: true });
    expect(JSON.stringify(on.body)).not.toContain(key);
    const offCall = await recordedCall(alpha, `multi-off-${Date.now()}`);
    const onCall = await recordedCall(beta, `multi-on-${Date.now()}`);
    expect(offCall.transcript).toBeUndefined();
    expect(onCall.transcript).toEqual({ state: 'none', messages: 0 });
    const files = (await transcribeRequests(server)).map((request) => request.file?.name);
    expect(files).toEqual([`${onCall.callId}.wav`]);
  });
});
