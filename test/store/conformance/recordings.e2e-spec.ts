import { CallRecord, RecordingUpload, withRecording } from '../../../src/calls/call';
import { applyEvent, newCall } from '../../../src/calls/call-lifecycle';
import {
  RECORDING_CHUNK_BYTES,
  RecordingGoneError,
  RecordingQuotaError,
} from '../../../src/store/call-store';
import { LeaseLostError } from '../../../src/store/coordination-store';
import { endedEvent, startedEvent } from '../../support/call-events';
import { TEST_ENGINES } from '../../support/test-database';
import { storesPerTest } from './engines';

const P = 'portal-a';

async function* pieces(...buffers: Buffer[]): AsyncIterable<Buffer> {
  for (const buffer of buffers) yield buffer;
}

/** Recordings: staged in chunks, taken by their call in one transaction, read a chunk at a time. */
describe.each(TEST_ENGINES)('recordings (%s)', (_name, engineOf) => {
  const { stores } = storesPerTest(engineOf);
  const calls = () => stores().calls;
  const storedAt =
    (at: number) =>
    (call: CallRecord): CallRecord =>
      withRecording(call, { file: { storedAt: at } as RecordingUpload });

  beforeEach(async () => {
    const now = Date.now();
    await calls().ingest(P, [[startedEvent('c1'), endedEvent('c1')], [startedEvent('c2')]], (call, event) =>
      applyEvent(call ?? newCall(P, event.callId, now), event, { now, holdEndedWithoutStartMs: 60_000 }),
    );
  });

  it('stages in chunks, makes them the call’s, reads them back whole and a chunk at a time', async () => {
    const content = Buffer.alloc(RECORDING_CHUNK_BYTES + 10, 7);
    const staged = await calls().stageRecording(P, pieces(content.subarray(0, 5), content.subarray(5)));
    expect(staged.bytes).toBe(content.length);
    const put = await calls().putRecording({
      portalId: P,
      callId: 'c1',
      staged: staged,
      mutate: storedAt(1000),
    });
    expect(put?.recording.file).toMatchObject({ storedAt: 1000 });
    const read = (await calls().readRecording(P, 'c1'))!;
    expect(read.bytes).toBe(content.length);
    const chunks: Buffer[] = [];
    for await (const chunk of read.chunks) chunks.push(chunk);
    expect(chunks.map((chunk) => chunk.length)).toEqual([RECORDING_CHUNK_BYTES, 10]);
    expect((await calls().getRecording(P, 'c1'))!.equals(content)).toBe(true);
    expect(await calls().recordingBytes(P)).toBe(content.length);
    // Only the content stored then goes; without storedAt, whatever is held.
    await calls().deleteRecording(P, 'c1', 999);
    expect(await calls().recordingBytes(P)).toBe(content.length);
    await calls().deleteRecording(P, 'c1', 1000);
    expect(await calls().readRecording(P, 'c1')).toBeUndefined();
  });

  it('a recording forgotten while it is read ends the read with an error, never as a shorter file', async () => {
    const content = Buffer.alloc(RECORDING_CHUNK_BYTES * 2 + 10, 3);
    const staged = await calls().stageRecording(P, pieces(content));
    await calls().putRecording({ portalId: P, callId: 'c1', staged, mutate: storedAt(1000) });
    const read = (await calls().readRecording(P, 'c1'))!;
    const chunks = read.chunks[Symbol.asyncIterator]();
    expect((await chunks.next()).value).toHaveLength(RECORDING_CHUNK_BYTES);
    // The portal got it (or retention took it) meanwhile.
    await calls().deleteRecording(P, 'c1');
    await expect(chunks.next()).rejects.toBeInstanceOf(RecordingGoneError);
    expect(await calls().getRecording(P, 'c1')).toBeUndefined();
  });

  it('a new push replaces the held one; a quota that would be passed stores nothing', async () => {
    await calls().putRecording({
      portalId: P,
      callId: 'c1',
      staged: await calls().stageRecording(P, pieces(Buffer.alloc(600, 1))),
      mutate: storedAt(1),
    });
    await calls().putRecording({
      portalId: P,
      callId: 'c1',
      staged: await calls().stageRecording(P, pieces(Buffer.alloc(400, 2))),
      mutate: storedAt(2),
    });
    expect(await calls().recordingBytes(P)).toBe(400);
    const staged = await calls().stageRecording(P, pieces(Buffer.alloc(700, 3)));
    await expect(
      calls().putRecording({
        portalId: P,
        callId: 'c2',
        staged: staged,
        mutate: storedAt(3),
        quotaBytes: 1000,
      }),
    ).rejects.toBeInstanceOf(RecordingQuotaError);
    await calls().discardStagedRecording(P, staged);
    expect(await calls().readRecording(P, 'c2')).toBeUndefined();
    // The call's own previous recording does not count against its replacement.
    const replacement = await calls().stageRecording(P, pieces(Buffer.alloc(900, 4)));
    await calls().putRecording({
      portalId: P,
      callId: 'c1',
      staged: replacement,
      mutate: storedAt(4),
      quotaBytes: 1000,
    });
    expect(await calls().recordingBytes(P)).toBe(900);
    // Unknown call: nothing stored.
    const orphan = await calls().stageRecording(P, pieces(Buffer.alloc(10)));
    expect(
      await calls().putRecording({ portalId: P, callId: 'nobody', staged: orphan, mutate: storedAt(5) }),
    ).toBeUndefined();
  });

  it('a stale fence stores nothing; a source that throws leaves nothing behind', async () => {
    const ours = (await stores().leases.acquireLease(P, 'me', 60_000))!;
    await stores().leases.releaseLease(ours);
    await stores().leases.acquireLease(P, 'other', 60_000);
    const staged = await calls().stageRecording(P, pieces(Buffer.alloc(10)));
    await expect(
      calls().putRecording({ portalId: P, callId: 'c1', staged: staged, mutate: storedAt(1), fence: ours }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    expect(await calls().readRecording(P, 'c1')).toBeUndefined();
    async function* broken(): AsyncIterable<Buffer> {
      yield Buffer.alloc(RECORDING_CHUNK_BYTES + 1);
      throw new Error('cut off');
    }
    await expect(calls().stageRecording(P, broken())).rejects.toThrow('cut off');
  });

  it('retention expires recordings stored before the cut-off, and staged chunks nobody took', async () => {
    await calls().putRecording({
      portalId: P,
      callId: 'c1',
      staged: await calls().stageRecording(P, pieces(Buffer.alloc(10))),
      mutate: storedAt(1),
    });
    await calls().putRecording({
      portalId: P,
      callId: 'c2',
      staged: await calls().stageRecording(P, pieces(Buffer.alloc(20))),
      mutate: storedAt(Date.now() + 60_000),
    });
    await calls().stageRecording(P, pieces(Buffer.alloc(30)));
    expect(await calls().expireRecordings(Date.now(), Date.now() + 60_000, 10)).toBe(1);
    expect(await calls().readRecording(P, 'c1')).toBeUndefined();
    expect(await calls().recordingBytes(P)).toBe(20);
  });
});
