import { readFileSync } from 'node:fs';
import { CallStore } from '../../src/store/call-store';
import { SeededRuntime } from '../../src/tenancy/single-portal';
import {
  ADMIN_TOKEN,
  ended,
  eventually,
  Harness,
  PBX_TOKEN,
  started,
  startHarness,
} from '../support/bridge-harness';
import { injectFault, sandboxTranscripts } from '../support/sandbox-inspect';
import { SpeechFixtures, speechFixtures, SpeechRecording } from '../support/speech-audio';
import {
  clearTranscribeFaults,
  injectTranscribeFault,
  resetTranscribeServer,
  transcribeRequests,
  transcribeStats,
} from '../support/transcribe-inspect';
import { TranscribeServer } from '../support/transcribe-server';

/**
 * Transcripts (SPEC §12) through the real interfaces: PBX events and a pushed recording into the bridge
 * over HTTP, the OpenAI-compatible test server (pocketsphinx recognising espeak-ng's sentences) and the
 * sandbox portal over real HTTP out.
 */
describe('transcripts of recorded calls', () => {
  const key = 'sk-transcripts-0123456789abcdef';
  let server: TranscribeServer;
  let fixtures: SpeechFixtures;
  let h: Harness;

  beforeAll(async () => {
    fixtures = await speechFixtures();
    server = await TranscribeServer.start({ sentences: fixtures.sentences, apiKey: key });
    h = await startHarness({
      TRANSCRIBE_URL: server.endpoint,
      TRANSCRIBE_AUTH: `bearer:${key}`,
      TRANSCRIBE_LANGUAGE: 'en',
      TRANSCRIBE_WAIT_SEC: '60',
      DELIVERY_MAX_BACKOFF_SEC: '1',
    });
  });
  afterAll(async () => {
    await h?.close();
    await server?.close();
  });
  afterEach(async () => {
    await clearTranscribeFaults(server);
  });

  const post = (events: unknown[]) =>
    h.http.post('/v1/calls/events').set('Authorization', `Bearer ${PBX_TOKEN}`).send(events).expect(202);
  const status = async (callId: string) =>
    (await h.http.get(`/v1/calls/${callId}`).set('Authorization', `Bearer ${PBX_TOKEN}`)).body;
  const push = (callId: string, recording: SpeechRecording) =>
    h.http
      .put(`/v1/calls/${encodeURIComponent(callId)}/recording`)
      .set('Authorization', `Bearer ${PBX_TOKEN}`)
      .set('Content-Type', recording.format === 'mp3' ? 'audio/mpeg' : 'audio/wav')
      .send(readFileSync(recording.path))
      .expect(202);
  /** An answered call of `direction` with `recording` pushed by the PBX. */
  const recordedCall = async (callId: string, recording: SpeechRecording, direction = 'inbound') => {
    await post([started(callId, { direction }), ended(callId)]);
    await push(callId, recording);
  };
  /** The call's status once its transcript has left `pending`. */
  const settled = (callId: string) =>
    eventually(async () => {
      const body = await status(callId);
      return body.transcript && body.transcript.state !== 'pending' ? body : undefined;
    }, 60_000);
  const requestsFor = async (callId: string) =>
    (await transcribeRequests(server)).filter((request) => request.file?.name.startsWith(callId));

  it("puts each side's words on its side, within a second of where they are in the file", async () => {
    const callId = `tr-sides-${Date.now()}`;
    await recordedCall(callId, fixtures.stereoWav);
    const done = await settled(callId);
    expect(done).toMatchObject({ state: 'finished', recording: 'attached' });
    expect(done.transcript).toEqual({ state: 'attached', messages: 4 });
    const [transcript, ...more] = await sandboxTranscripts(h.sandbox, done.crm.callId);
    expect(more).toEqual([]);
    // Inbound: the caller (first channel) is the client, the second channel the employee.
    const sideOf = { 1: 'Client', 2: 'User' } as const;
    expect(transcript.MESSAGES.map((m) => [m.SIDE, m.MESSAGE])).toEqual(
      fixtures.stereoWav.lines.map((line) => [sideOf[line.channel], line.text]),
    );
    transcript.MESSAGES.forEach((message, index) => {
      const line = fixtures.stereoWav.lines[index];
      // Whole seconds (start rounded down, stop up), each within a second of the sentence's.
      expect(Math.abs(message.START_TIME - Math.floor(line.startSec))).toBeLessThanOrEqual(1);
      expect(Math.abs(message.STOP_TIME - Math.ceil(line.endSec))).toBeLessThanOrEqual(1);
    });
    // One mono file per channel, with the fields the interface names.
    const requests = await requestsFor(callId);
    expect(requests.map((request) => [request.file?.channels, request.status])).toEqual([
      [1, 200],
      [1, 200],
    ]);
    expect(requests[0].authorized).toBe(true);
    expect(requests[0].fields).toMatchObject({
      model: 'whisper-1',
      response_format: 'verbose_json',
      'timestamp_granularities[]': 'segment',
      language: 'en',
    });
    // The held recording goes once the messages are stored.
    expect(await h.app.get(CallStore).getRecording('sandbox', callId)).toBeUndefined();
  });

  it('splits a two-channel mp3 the same way, each channel sent as its own file', async () => {
    const callId = `tr-mp3-${Date.now()}`;
    await recordedCall(callId, fixtures.stereoMp3);
    const done = await settled(callId);
    expect(done.transcript).toEqual({ state: 'attached', messages: 4 });
    const [transcript] = await sandboxTranscripts(h.sandbox, done.crm.callId);
    const sideOf = { 1: 'Client', 2: 'User' } as const;
    expect(transcript.MESSAGES.map((m) => [m.SIDE, m.MESSAGE])).toEqual(
      fixtures.stereoMp3.lines.map((line) => [sideOf[line.channel], line.text]),
    );
    expect((await requestsFor(callId)).map((request) => request.file?.channels)).toEqual([1, 1]);
  });

  it('sends exactly one transcript when the portal answer is lost; an outbound caller is the employee', async () => {
    const callId = `tr-lost-${Date.now()}`;
    await injectFault(h.sandbox, {
      kind: 'lose-answer',
      method: 'telephony.call.attachTranscription',
      times: 1,
    });
    await recordedCall(callId, fixtures.stereoWav, 'outbound');
    const done = await settled(callId);
    expect(done.transcript).toEqual({ state: 'attached', messages: 4 });
    const transcripts = await sandboxTranscripts(h.sandbox, done.crm.callId);
    expect(transcripts).toHaveLength(1);
    expect(transcripts[0].MESSAGES.map((m) => m.SIDE)).toEqual(['User', 'Client', 'User', 'Client']);
    const stored = await h.app.get(CallStore).findCall('sandbox', callId);
    expect(stored?.transcript).toMatchObject({ id: transcripts[0].TRANSCRIPT_ID, sends: 1 });
    // The attach went once; after its answer was lost the call's statistics were asked instead of a repeat.
    expect(stored?.delivery.stepsSent).toMatchObject({ attachTranscription: 1, findTranscript: 1 });
  });

  it('retries a service answering 503 and 429 (Retry-After), then attaches', async () => {
    const callId = `tr-busy-${Date.now()}`;
    await injectTranscribeFault(server, { kind: 'status', status: 503, times: 1 });
    await injectTranscribeFault(server, { kind: 'status', status: 429, retryAfterSec: 1, times: 1 });
    await recordedCall(callId, fixtures.monoWav);
    const done = await settled(callId);
    expect(done.transcript).toEqual({ state: 'attached', messages: 2 });
    expect(done.lastError).toBeNull();
    // One channel: the service cannot tell the voices apart, every message is the client's.
    const [transcript] = await sandboxTranscripts(h.sandbox, done.crm.callId);
    expect(transcript.MESSAGES.map((m) => [m.SIDE, m.MESSAGE])).toEqual(
      fixtures.monoWav.lines.map((line) => ['Client', line.text]),
    );
    const statuses = (await transcribeRequests(server)).map((request) => request.status);
    expect(statuses).toEqual(expect.arrayContaining([503, 429]));
  });

  it('gives up a file the service refuses at once; the call stays finished with the reason', async () => {
    const callId = `tr-refused-${Date.now()}`;
    await injectTranscribeFault(server, { kind: 'refuse', fileName: callId });
    await recordedCall(callId, fixtures.monoWav);
    const done = await settled(callId);
    expect(done).toMatchObject({ state: 'finished', transcript: { state: 'failed', messages: 0 } });
    expect(done.lastError).toMatch(/^transcript: the service answered HTTP 400/);
    expect(JSON.stringify(done)).not.toContain(key);
    expect((await requestsFor(callId)).map((request) => request.status)).toEqual([400]);
    expect(await sandboxTranscripts(h.sandbox, done.crm.callId)).toEqual([]);
    expect(await h.app.get(CallStore).getRecording('sandbox', callId)).toBeUndefined();
  });

  it('a silent recording gets no transcript, and the call says none', async () => {
    const callId = `tr-silent-${Date.now()}`;
    await recordedCall(callId, fixtures.silentWav);
    const done = await settled(callId);
    expect(done.transcript).toEqual({ state: 'none', messages: 0 });
    expect(await sandboxTranscripts(h.sandbox, done.crm.callId)).toEqual([]);
  });

  it('a recording the bridge never held (RECORD_URL) is not transcribed', async () => {
    const callId = `tr-url-${Date.now()}`;
    await post([started(callId), ended(callId, { recordingUrl: 'https://recordings.example.com/a.mp3' })]);
    const done = await eventually(async () => {
      const body = await status(callId);
      return body.recording === 'attached' ? body : undefined;
    });
    expect(done.transcript).toBeUndefined();
    expect(done.nextStep).toBeNull();
    expect(await requestsFor(callId)).toEqual([]);
  });

  it("registers a ringing call's card while a transcript waits for a slow service", async () => {
    const slowId = `tr-slow-${Date.now()}`;
    await injectTranscribeFault(server, { kind: 'slow', ms: 4000, times: 1 });
    await recordedCall(slowId, fixtures.silentWav);
    // The service has the file: the transcript is under way.
    await eventually(async () => ((await transcribeStats(server)).inFlight > 0 ? true : undefined));
    const ringingId = `tr-ring-${Date.now()}`;
    await post([started(ringingId)]);
    const ringing = await eventually(async () => {
      const body = await status(ringingId);
      return body.state === 'registered' ? body : undefined;
    });
    expect(ringing.crm.callId).toEqual(expect.any(String));
    // Registered while the slow transcript was still pending.
    expect((await status(slowId)).transcript.state).toBe('pending');
    expect((await settled(slowId)).transcript.state).toBe('none');
  });

  it('keeps at most TRANSCRIBE_CONCURRENCY recordings at the service, whatever the backlog', async () => {
    await resetTranscribeServer(server);
    await injectTranscribeFault(server, { kind: 'slow', ms: 300, times: 5 });
    const ids = Array.from({ length: 5 }, (_, index) => `tr-many-${Date.now()}-${index}`);
    for (const callId of ids) await recordedCall(callId, fixtures.silentWav);
    for (const callId of ids) expect((await settled(callId)).transcript.state).toBe('none');
    const stats = await transcribeStats(server);
    expect(stats.transcribed).toBe(5);
    expect(stats.maxInFlight).toBe(2);
  });

  it("shows today's transcripts on the page, and the page's switch turns them off", async () => {
    const signedIn = await h.http.post('/app').type('form').send({ token: ADMIN_TOKEN, LANG: 'en' });
    const session = /name="session" value="([^"]+)"/.exec(signedIn.text)![1];
    const page = await h.http.post('/app/view').type('form').send({ session });
    // Earlier in this file: four attached (wav and mp3 sides, lost answer, 503/429), one refused.
    expect(page.text).toContain('transcripts attached: <strong>4</strong>');
    expect(page.text).toContain('transcripts failed: <strong>1</strong>');
    expect(page.text).toContain('<select id="transcribe" name="transcribe"');
    expect(page.text).not.toContain(key);
    const metrics = (await h.http.get('/metrics')).text;
    expect(metrics).toMatch(/bridge_transcripts_total\{[^}]*outcome="attached"[^}]*\} 4\b/);
    expect(metrics).toMatch(/bridge_transcripts_total\{[^}]*outcome="failed"[^}]*\} 1\b/);
    expect(metrics).toMatch(/bridge_transcribe_service_seconds_total\{[^}]*\} [1-9]/);
    const saved = await h.http.post('/app/settings').type('form').send({
      session,
      defaultUserId: '',
      defaultCountry: '',
      missedCallTask: '',
      transcribe: 'off',
      DIAL_MODE: '',
    });
    expect(saved.text).toContain('Saved.');
    const seeded = h.app.get(SeededRuntime);
    await eventually(async () => (seeded.current.scoped.transcribe ? undefined : true));
    const callId = `tr-page-off-${Date.now()}`;
    await recordedCall(callId, fixtures.silentWav);
    const done = await eventually(async () => {
      const body = await status(callId);
      return body.recording === 'attached' ? body : undefined;
    });
    expect(done.transcript).toBeUndefined();
    expect(await h.app.get(CallStore).getRecording('sandbox', callId)).toBeUndefined();
  });
});
