import { CallStore } from '../../src/store/call-store';
import { eventually, Harness, PBX_TOKEN, started, ended, startHarness } from '../support/bridge-harness';
import { RecordingServer, REC_PASSWORD, REC_USER, sha256, wavFile } from './recording-server';

/**
 * Recordings the portal cannot reach (docs/API.md): the bridge downloads them from a private file server
 * (Basic auth, 127.0.0.1) and uploads their bytes to the sandbox portal over real HTTP, on the real store.
 */
describe('recordings: downloaded by the bridge', () => {
  let server: RecordingServer;
  let h: Harness;

  beforeAll(async () => {
    server = await RecordingServer.start();
    h = await startHarness({
      RECORDING_FETCH_HOSTS: `127.0.0.1:${server.port}`,
      RECORDING_FETCH_AUTH: `basic:${REC_USER}:${REC_PASSWORD}`,
      RECORDING_MAX_MB: '2',
      RECORDING_REQUEST_MAX_MB: '1',
      RECORDING_WAIT_SEC: '30',
      DELIVERY_MAX_BACKOFF_SEC: '1',
    });
  });
  afterAll(async () => {
    await h.close();
    await server.close();
  });

  async function callWith(callId: string, recordingUrl: string): Promise<void> {
    const response = await h.http
      .post('/v1/calls/events')
      .set('Authorization', `Bearer ${PBX_TOKEN}`)
      .send([started(callId), ended(callId, { recordingUrl })]);
    expect(response.status).toBe(202);
  }

  /** The call's status once its recording is settled (attached or failed). */
  const settled = (callId: string) =>
    eventually(async () => {
      const { body } = await h.http.get(`/v1/calls/${callId}`).set('Authorization', `Bearer ${PBX_TOKEN}`);
      return body.state === 'finished' && ['attached', 'failed'].includes(body.recording) ? body : undefined;
    }, 30000);

  const recordsOf = (callId: string) => h.sandbox.calls({ EXTERNAL_CALL_ID: callId })[0]?.records ?? [];

  it('retries a file that is not there yet, then uploads its exact bytes as FILE_CONTENT', async () => {
    const callId = `rec-late-${Date.now()}`;
    const file = wavFile(200_000, 2);
    const url = server.serve(`/rec/${callId}.wav`, { file, type: 'audio/wav', readyAt: Date.now() + 2000 });
    await callWith(callId, url);
    const status = await settled(callId);
    expect(status).toMatchObject({
      recording: 'attached',
      recordingDetail: { via: 'fetch', bytes: 200_000, upload: 'content' },
      lastError: null,
    });
    expect(server.hits.get(`/rec/${callId}.wav`)).toBeGreaterThan(1);
    expect(recordsOf(callId)).toEqual([
      expect.objectContaining({
        FILENAME: `${callId}.wav`,
        bytes: 200_000,
        sha256: sha256(file),
        via: 'content',
      }),
    ]);
    // Delivered: the store no longer holds the content.
    expect(await h.app.get(CallStore).getRecording('sandbox', callId)).toBeUndefined();
  });

  it('sends a file too big for one request through the uploadUrl, bytes intact', async () => {
    const callId = `rec-big-${Date.now()}`;
    const file = wavFile(1_500_000, 3);
    await callWith(callId, server.serve(`/rec/${callId}.wav`, { file, type: 'application/octet-stream' }));
    const status = await settled(callId);
    expect(status).toMatchObject({ recording: 'attached', recordingDetail: { upload: 'url' } });
    expect(recordsOf(callId)).toEqual([
      expect.objectContaining({ bytes: 1_500_000, sha256: sha256(file), via: 'upload' }),
    ]);
  });

  it('follows a redirect that stays on an allowed host', async () => {
    const callId = `rec-moved-${Date.now()}`;
    const file = wavFile(50_000, 4);
    const target = server.serve(`/store/${callId}.wav`, { file, type: 'audio/x-wav' });
    await callWith(callId, server.serve(`/rec/${callId}.wav`, { redirect: target }));
    expect((await settled(callId)).recording).toBe('attached');
    expect(recordsOf(callId)[0]).toMatchObject({ sha256: sha256(file), via: 'content' });
  });

  it('refuses a redirect to a host that is not allowed', async () => {
    const callId = `rec-off-${Date.now()}`;
    const file = wavFile(50_000, 5);
    server.serve(`/store/${callId}.wav`, { file, type: 'audio/wav' });
    const elsewhere = `http://localhost:${server.port}/store/${callId}.wav`;
    await callWith(callId, server.serve(`/rec/${callId}.wav`, { redirect: elsewhere }));
    const status = await settled(callId);
    expect(status.recording).toBe('failed');
    expect(status.lastError).toMatch(/redirect to localhost:\d+ is not in RECORDING_FETCH_HOSTS/);
    expect(server.hits.get(`/store/${callId}.wav`)).toBeUndefined();
    // The download credentials never show.
    expect(JSON.stringify(status)).not.toContain(REC_PASSWORD);
    expect(recordsOf(callId)).toEqual([]);
  });

  it('leaves a file over RECORDING_MAX_MB finished with the reason, uploading nothing', async () => {
    const callId = `rec-huge-${Date.now()}`;
    await callWith(
      callId,
      server.serve(`/rec/${callId}.wav`, { file: wavFile(2_500_000), type: 'audio/wav' }),
    );
    const status = await settled(callId);
    expect(status).toMatchObject({ state: 'finished', recording: 'failed' });
    expect(status.lastError).toMatch(/RECORDING_MAX_MB/);
    expect(recordsOf(callId)).toEqual([]);
  });

  it('refuses what is not wav or mp3: an HTML page, an ogg file', async () => {
    const html = `rec-html-${Date.now()}`;
    await callWith(
      html,
      server.serve(`/rec/${html}.wav`, { file: Buffer.from('<html>login</html>'), type: 'text/html' }),
    );
    const ogg = `rec-ogg-${Date.now()}`;
    const oggFile = Buffer.concat([Buffer.from('OggS\0\x02'), wavFile(5000).subarray(6)]);
    await callWith(ogg, server.serve(`/rec/${ogg}.ogg`, { file: oggFile, type: 'application/octet-stream' }));
    for (const callId of [html, ogg]) {
      const status = await settled(callId);
      expect(status).toMatchObject({ state: 'finished', recording: 'failed' });
      expect(status.lastError).toMatch(/not wav or mp3/);
      expect(recordsOf(callId)).toEqual([]);
    }
  });

  it('passes a URL on another host to the portal as RECORD_URL, downloading nothing', async () => {
    const callId = `rec-public-${Date.now()}`;
    const url = `https://recordings.example.com/${callId}.mp3`;
    await callWith(callId, url);
    const status = await settled(callId);
    expect(status).toMatchObject({ recording: 'attached', recordingDetail: { via: 'url' } });
    expect(recordsOf(callId)).toEqual([expect.objectContaining({ RECORD_URL: url, via: 'url' })]);
  });
});
