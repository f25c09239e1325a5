import { CallStore } from '../../src/store/call-store';
import { ended, eventually, Harness, PBX_TOKEN, started, startHarness } from '../support/bridge-harness';
import { clearFaults, injectFault } from '../support/sandbox-inspect';
import { sha256, wavFile } from './recording-server';

/** `PUT /v1/calls/:callId/recording` (docs/API.md): a PBX pushes the file; the bridge stores, then uploads it. */
describe('recordings: pushed by the PBX', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({
      RECORDING_MAX_MB: '1',
      RECORDING_REQUEST_MAX_MB: '1',
      DELIVERY_MAX_BACKOFF_SEC: '1',
    });
  });
  afterAll(async () => {
    await h.close();
  });

  const put = (callId: string, type: string, body: Buffer, token = PBX_TOKEN) =>
    h.http
      .put(`/v1/calls/${encodeURIComponent(callId)}/recording`)
      .set('Authorization', `Bearer ${token}`)
      .set('Content-Type', type)
      .send(body);
  const post = (events: unknown[]) =>
    h.http.post('/v1/calls/events').set('Authorization', `Bearer ${PBX_TOKEN}`).send(events);
  const status = async (callId: string) =>
    (await h.http.get(`/v1/calls/${callId}`).set('Authorization', `Bearer ${PBX_TOKEN}`)).body;

  it('answers 404 for a call the bridge never heard of, and 401 without a PBX token', async () => {
    const unknown = await put('never-heard-of', 'audio/wav', wavFile(1000));
    expect(unknown.status).toBe(404);
    const callId = `push-auth-${Date.now()}`;
    await post([started(callId)]);
    expect((await put(callId, 'audio/wav', wavFile(1000), 'wrong-token')).status).toBe(401);
  });

  it('answers 415 for other types and for a body that is not the type it says, 413 past RECORDING_MAX_MB', async () => {
    const callId = `push-bad-${Date.now()}`;
    await post([started(callId)]);
    expect((await put(callId, 'text/plain', Buffer.from('hello'))).status).toBe(415);
    expect((await put(callId, 'audio/ogg', Buffer.from('OggS\0\x02\0\0\0\0\0\0'))).status).toBe(415);
    expect((await put(callId, 'audio/wav', Buffer.from('<html>not a wav</html>'))).status).toBe(415);
    const big = await put(callId, 'audio/wav', wavFile(1_200_000)).catch((error: Error) => error);
    // The bridge answers 413 before reading the whole body (it may close the connection while we send).
    expect(big instanceof Error ? 413 : big.status).toBe(413);
    expect(await h.app.get(CallStore).getRecording('sandbox', callId)).toBeUndefined();
    expect((await status(callId)).recording).toBe('none');
  });

  it('stores a pushed file (202), uploads it after finish instead of the recordingUrl, then forgets it', async () => {
    const callId = `push-ok-${Date.now()}`;
    const file = wavFile(300_000, 7);
    await post([started(callId)]);
    await injectFault(h.sandbox, { kind: 'outage' });
    const pushed = await put(callId, 'audio/x-wav', file);
    expect(pushed.status).toBe(202);
    expect(pushed.body).toEqual({ callId, bytes: 300_000, filename: `${callId}.wav` });
    expect(await h.app.get(CallStore).getRecording('sandbox', callId)).toEqual(file);
    await post([ended(callId, { recordingUrl: 'https://recordings.example.com/x.mp3' })]);
    await clearFaults(h.sandbox);
    const done = await eventually(async () => {
      const body = await status(callId);
      return body.recording === 'attached' ? body : undefined;
    });
    expect(done).toMatchObject({ state: 'finished', recordingDetail: { via: 'push', bytes: 300_000 } });
    const records = h.sandbox.calls({ EXTERNAL_CALL_ID: callId })[0].records;
    expect(records).toEqual([
      expect.objectContaining({ sha256: sha256(file), via: 'content', bytes: 300_000 }),
    ]);
    expect(await h.app.get(CallStore).getRecording('sandbox', callId)).toBeUndefined();
  });

  it('takes an mp3 too', async () => {
    const callId = `push-mp3-${Date.now()}`;
    const mp3 = Buffer.concat([
      Buffer.from('ID3\x04\0\0\0\0\0\0', 'latin1'),
      wavFile(20_000, 9).subarray(10),
    ]);
    await post([started(callId), ended(callId)]);
    expect((await put(callId, 'audio/mpeg', mp3)).status).toBe(202);
    const records = await eventually(async () => {
      const found = h.sandbox.calls({ EXTERNAL_CALL_ID: callId })[0]?.records ?? [];
      return found.length > 0 ? found : undefined;
    });
    expect(records).toEqual([expect.objectContaining({ FILENAME: `${callId}.mp3`, sha256: sha256(mp3) })]);
  });
});
