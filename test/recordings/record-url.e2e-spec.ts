import { ended, eventually, Harness, PBX_TOKEN, started, startHarness } from '../support/bridge-harness';
import { RecordingServer, sha256, wavFile } from './recording-server';

/**
 * Without RECORDING_FETCH_HOSTS the URL goes as RECORD_URL, and a portal that tries it once while answering
 * (the sandbox with `downloadRecordUrls`) gets a public file but not a private one: the call then stays
 * finished with the portal's reason. This is why the bridge can fetch recordings itself.
 */
describe('recordings: RECORD_URL tried by the portal', () => {
  let server: RecordingServer;
  let h: Harness;

  beforeAll(async () => {
    server = await RecordingServer.start();
    h = await startHarness({ DELIVERY_MAX_BACKOFF_SEC: '1' }, { downloadRecordUrls: true });
  });
  afterAll(async () => {
    await h.close();
    await server.close();
  });

  const settled = (callId: string) =>
    eventually(async () => {
      const { body } = await h.http.get(`/v1/calls/${callId}`).set('Authorization', `Bearer ${PBX_TOKEN}`);
      return ['attached', 'failed'].includes(body.recording) ? body : undefined;
    });

  it('a public file reaches the portal through RECORD_URL; a private one fails with the reason', async () => {
    const open = `url-public-${Date.now()}`;
    const file = wavFile(40_000, 21);
    const openUrl = server.serve(`/public/${open}.wav`, { file, type: 'audio/wav' });
    const closed = `url-private-${Date.now()}`;
    const closedUrl = server.serve(`/rec/${closed}.wav`, { file, type: 'audio/wav' });
    const response = await h.http
      .post('/v1/calls/events')
      .set('Authorization', `Bearer ${PBX_TOKEN}`)
      .send([
        started(open),
        ended(open, { recordingUrl: openUrl }),
        started(closed),
        ended(closed, { recordingUrl: closedUrl }),
      ]);
    expect(response.status).toBe(202);
    expect((await settled(open)).recording).toBe('attached');
    expect(h.sandbox.calls({ EXTERNAL_CALL_ID: open })[0].records).toEqual([
      expect.objectContaining({ RECORD_URL: openUrl, sha256: sha256(file), via: 'url' }),
    ]);
    const failed = await settled(closed);
    expect(failed).toMatchObject({ state: 'finished', recording: 'failed' });
    expect(failed.lastError).toMatch(/Could not download the file from RECORD_URL: HTTP 401/);
    expect(h.sandbox.calls({ EXTERNAL_CALL_ID: closed })[0].records).toEqual([]);
  });
});
