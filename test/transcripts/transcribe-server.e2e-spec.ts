import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { channelFile, SpeechFixtures, speechFixtures, SpokenLine } from '../support/speech-audio';
import {
  injectTranscribeFault,
  resetTranscribeServer,
  transcribeRequests,
  transcribeStats,
} from '../support/transcribe-inspect';
import { TranscribeServer } from '../support/transcribe-server';

/**
 * The transcription test server itself: OpenAI's interface over real HTTP, real recognition by pocketsphinx
 * of espeak-ng's sentences, and the faults the bridge's transcript specs rely on.
 */
describe('transcription test server (pocketsphinx behind an OpenAI-compatible endpoint)', () => {
  const key = 'sk-test-0123456789abcdef';
  let server: TranscribeServer;
  let fixtures: SpeechFixtures;

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  type Json = any;
  const transcribe = async (
    path: string,
    fields: Record<string, string | string[]> = {},
    auth: string | null = `Bearer ${key}`,
  ): Promise<{ status: number; body: Json; headers: Headers }> => {
    const form = new FormData();
    const type = path.endsWith('.mp3') ? 'audio/mpeg' : 'audio/wav';
    form.append('file', new Blob([readFileSync(path)], { type }), basename(path));
    const all = {
      model: 'whisper-1',
      response_format: 'verbose_json',
      'timestamp_granularities[]': 'segment',
      ...fields,
    };
    for (const [name, value] of Object.entries(all)) {
      for (const one of Array.isArray(value) ? value : [value]) form.append(name, one);
    }
    const response = await fetch(server.endpoint, {
      method: 'POST',
      body: form,
      headers: auth === null ? {} : { Authorization: auth },
    });
    const text = await response.text();
    return {
      status: response.status,
      body: text.startsWith('{') ? JSON.parse(text) : text,
      headers: response.headers,
    };
  };
  /** The segments as [text, start, end], and each within a second of where the fixture put it. */
  const expectSpoken = (segments: Json[], lines: SpokenLine[]) => {
    expect(segments.map((segment: Json) => segment.text.trim())).toEqual(lines.map((line) => line.text));
    segments.forEach((segment: Json, index: number) => {
      expect(Math.abs(segment.start - lines[index].startSec)).toBeLessThan(1);
      expect(Math.abs(segment.end - lines[index].endSec)).toBeLessThan(1);
    });
  };

  beforeAll(async () => {
    fixtures = await speechFixtures();
    server = await TranscribeServer.start({ sentences: fixtures.sentences, apiKey: key });
  });
  afterAll(() => server.close());
  beforeEach(() => resetTranscribeServer(server));

  it("recognises each channel's sentences exactly, in OpenAI's verbose_json, times within a second", async () => {
    const left = await transcribe(await channelFile(fixtures.stereoWav, 1), { language: 'en' });
    expect(left.status).toBe(200);
    expect(left.body).toMatchObject({
      task: 'transcribe',
      language: 'english',
      duration: fixtures.stereoWav.durationSec,
      text: 'good morning thank you for calling your order will arrive on monday',
    });
    expect(left.body.segments[0]).toEqual({
      id: 0,
      seek: 0,
      start: expect.any(Number),
      end: expect.any(Number),
      text: ' good morning thank you for calling',
      tokens: [],
      temperature: 0,
      avg_logprob: expect.any(Number),
      compression_ratio: expect.any(Number),
      no_speech_prob: expect.any(Number),
    });
    expectSpoken(
      left.body.segments,
      fixtures.stereoWav.lines.filter((line) => line.channel === 1),
    );

    // The other side as mp3, with word times too.
    const right = await transcribe(await channelFile(fixtures.stereoMp3, 2), {
      'timestamp_granularities[]': ['segment', 'word'],
    });
    expectSpoken(
      right.body.segments,
      fixtures.stereoMp3.lines.filter((line) => line.channel === 2),
    );
    expect(right.body.words.map((word: Json) => word.word).join(' ')).toBe(right.body.text);

    // One channel with both voices; then the received files as the server saw them.
    const mono = await transcribe(fixtures.monoWav.path);
    expectSpoken(mono.body.segments, fixtures.monoWav.lines);
    const received = await transcribeRequests(server);
    expect(received.map((entry) => [entry.status, entry.file?.name, entry.file?.channels])).toEqual([
      [200, 'stereo-channel1.wav', 1],
      [200, 'stereo-mp3-channel2.mp3', 1],
      [200, 'mono.wav', 1],
    ]);
    expect(received[0]).toMatchObject({
      authorized: true,
      fields: {
        model: 'whisper-1',
        response_format: 'verbose_json',
        'timestamp_granularities[]': 'segment',
        language: 'en',
      },
      file: { type: 'audio/wav', sampleRate: 16000, durationSec: fixtures.stereoWav.durationSec },
      segments: 2,
    });
    expect(received[1].fields['timestamp_granularities[]']).toEqual(['segment', 'word']);
    const stats = await transcribeStats(server);
    expect(stats).toMatchObject({ requests: 3, transcribed: 3, byStatus: { '200': 3 }, lost: 0 });
    expect(stats.audioSeconds).toBeCloseTo(
      2 * fixtures.stereoWav.durationSec + fixtures.monoWav.durationSec,
      0,
    );
  });

  it('answers a recording without speech with no segments and empty text', async () => {
    const silent = await transcribe(fixtures.silentWav.path);
    expect(silent).toMatchObject({
      status: 200,
      body: { task: 'transcribe', duration: fixtures.silentWav.durationSec, text: '', segments: [] },
    });
  });

  it('wants the Bearer key as OpenAI does, and never shows it', async () => {
    const missing = await transcribe(fixtures.silentWav.path, {}, null);
    expect(missing).toMatchObject({ status: 401, body: { error: { type: 'invalid_request_error' } } });
    expect(missing.body.error.message).toMatch(/didn't provide an API key/);
    const wrong = await transcribe(fixtures.silentWav.path, {}, 'Bearer sk-wrong');
    expect(wrong).toMatchObject({ status: 401, body: { error: { code: 'invalid_api_key' } } });
    expect(JSON.stringify(wrong.body)).not.toContain('sk-wrong');
    const received = await transcribeRequests(server);
    expect(received.map((entry) => [entry.status, entry.authorized])).toEqual([
      [401, false],
      [401, false],
    ]);
    expect(JSON.stringify(received)).not.toMatch(/sk-/);
    expect((await transcribeStats(server)).transcribed).toBe(0);
  });

  it('refuses bad requests with 400 naming the field', async () => {
    const silent = fixtures.silentWav.path;
    expect(await transcribe(silent, { model: '' })).toMatchObject({
      status: 400,
      body: { error: { param: 'model' } },
    });
    expect(await transcribe(silent, { response_format: 'srt' })).toMatchObject({
      status: 400,
      body: { error: { param: 'response_format' } },
    });
    expect(await transcribe(silent, { response_format: 'json' })).toMatchObject({
      status: 400,
      body: { error: { param: 'timestamp_granularities' } },
    });
    expect(await transcribe(silent, { language: 'english' })).toMatchObject({
      status: 400,
      body: { error: { param: 'language' } },
    });
    const noFile = await fetch(server.endpoint, {
      method: 'POST',
      body: (() => {
        const form = new FormData();
        form.append('model', 'whisper-1');
        return form;
      })(),
      headers: { Authorization: `Bearer ${key}` },
    });
    expect(noFile.status).toBe(400);
    expect((await noFile.json()).error.param).toBe('file');
    expect((await transcribeStats(server)).transcribed).toBe(0);
  });

  it('answers 503 and 429 (with Retry-After) for the next requests, then works again', async () => {
    const silent = fixtures.silentWav.path;
    await injectTranscribeFault(server, { kind: 'status', status: 503, times: 1 });
    await injectTranscribeFault(server, { kind: 'status', status: 429, retryAfterSec: 7, times: 1 });
    const overloaded = await transcribe(silent);
    expect(overloaded).toMatchObject({ status: 503, body: { error: { type: 'server_error' } } });
    const limited = await transcribe(silent);
    expect(limited).toMatchObject({ status: 429, body: { error: { code: 'rate_limit_exceeded' } } });
    expect(limited.headers.get('retry-after')).toBe('7');
    expect((await transcribe(silent)).status).toBe(200);
    // For a time: every request within it is refused.
    await injectTranscribeFault(server, { kind: 'status', status: 500, forMs: 60_000 });
    expect((await transcribe(silent)).status).toBe(500);
    expect((await transcribe(silent)).status).toBe(500);
    // What each refused request carried is still listed.
    const received = await transcribeRequests(server);
    expect(received[0]).toMatchObject({
      status: 503,
      file: { name: 'silent.wav', bytes: fixtures.silentWav.bytes },
    });
    expect(await transcribeStats(server)).toMatchObject({
      requests: 5,
      transcribed: 1,
      byStatus: { '503': 1, '429': 1, '200': 1, '500': 2 },
    });
  });

  it('refuses a chosen file with 400 without recognising it; others pass', async () => {
    await injectTranscribeFault(server, { kind: 'refuse', fileName: 'mono' });
    const refused = await transcribe(fixtures.monoWav.path);
    expect(refused).toMatchObject({ status: 400, body: { error: { type: 'invalid_request_error' } } });
    expect((await transcribe(fixtures.silentWav.path)).status).toBe(200);
    expect((await transcribe(fixtures.monoWav.path)).status).toBe(400);
    expect(await transcribeStats(server)).toMatchObject({ transcribed: 1, byStatus: { '400': 2, '200': 1 } });
  });

  it('is slow when told, and loses an answer after doing the work', async () => {
    await injectTranscribeFault(server, { kind: 'slow', ms: 800, times: 1 });
    const started = Date.now();
    expect((await transcribe(fixtures.silentWav.path)).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(800);

    await injectTranscribeFault(server, { kind: 'lose-answer', times: 1 });
    const lost = await transcribe(fixtures.silentWav.path).catch((error: unknown) => error);
    expect((lost as Error).message).toMatch(/fetch failed/);
    expect(await transcribeStats(server)).toMatchObject({
      transcribed: 2,
      lost: 1,
      byStatus: { '200': 1, lost: 1 },
    });
    expect((await transcribe(fixtures.silentWav.path)).status).toBe(200);
  });

  it('counts requests in flight at once, and tells when a number of them has been answered', async () => {
    await injectTranscribeFault(server, { kind: 'slow', ms: 500, times: 2 });
    const both = Promise.all([transcribe(fixtures.silentWav.path), transcribe(fixtures.silentWav.path)]);
    await server.answered(2);
    expect((await both).map((one) => one.status)).toEqual([200, 200]);
    expect(await transcribeStats(server)).toMatchObject({ requests: 2, inFlight: 0, maxInFlight: 2 });
  });

  it('names a wrong fault field in its control API', async () => {
    const bad = await fetch(`${server.url}/_transcribe/faults`, {
      method: 'POST',
      body: JSON.stringify({ kind: 'status', status: 200 }),
    });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatch(/^status must be/);
  });
});
