import { randomUUID } from 'node:crypto';
import { CallRecord, CallState } from '../calls/call';
import { ClickRow } from '../calls/click-ledger';
import { callOf, ClickDbRow, clickOf } from './call-rows';
import {
  CallStore,
  deepestQueuesOf,
  DueWorkOf,
  LineCalls,
  QueueRow,
  QueueStats,
  RecordingContent,
  RecordingGoneError,
  StagedRecording,
  rechunk,
} from './call-store';
import { SqlRunner } from './fence';
import { queueStatements as s } from './queue-statements';

/**
 * What both engines' call stores do alike, from the statements defined once (`queueStatements`): the reads
 * of the queue, clicks, staging and reading recordings a chunk at a time, the probe. Each engine adds
 * intake, fenced writes and the transactions of several statements with its own locking.
 */
export abstract class SqlCallStore extends CallStore {
  constructor(protected readonly runner: SqlRunner) {
    super();
  }

  private get d() {
    return this.runner.dialect;
  }

  async findCall(portalId: string, callId: string): Promise<CallRecord | undefined> {
    const [row] = await this.runner.all<{ data: string }>(s.findCall(this.d, portalId, callId));
    return row && callOf(row);
  }

  async saveClick(portalId: string, click: ClickRow): Promise<void> {
    await this.runner.all(s.saveClick(this.d, portalId, click, Date.now()));
  }

  async findClick(portalId: string, portalCallId: string): Promise<ClickRow | undefined> {
    const [row] = await this.runner.all<ClickDbRow>(s.findClick(this.d, portalId, portalCallId));
    return row && clickOf(row);
  }

  async listCalls(portalId: string, state: CallState, limit: number): Promise<CallRecord[]> {
    return (await this.runner.all<{ data: string }>(s.listCalls(this.d, portalId, state, limit))).map(callOf);
  }

  async callsByLine(portalId: string, since: number): Promise<LineCalls[]> {
    const rows = await this.runner.all<{ line: string | null; calls: number | string }>(
      s.callsByLine(this.d, portalId, since),
    );
    return rows.map((row) => ({ line: row.line ?? undefined, calls: Number(row.calls) }));
  }

  async nextDueAt(portalId: string): Promise<number | undefined> {
    const [row] = await this.runner.all<{ due: number | null }>(s.nextDueAt(this.d, portalId));
    return row?.due ?? undefined;
  }

  async queueStats(portalId: string): Promise<QueueStats> {
    const [row] = await this.runner.all<{ depth: number; oldest: number | null; failed: number }>(
      s.queueStats(this.d, portalId),
    );
    return { depth: Number(row.depth), oldestCreatedAt: row.oldest ?? undefined, failed: Number(row.failed) };
  }

  async deepestQueues(
    limit: number,
  ): Promise<{ total: QueueStats; top: (QueueStats & { portalId: string })[] }> {
    const [total] = await this.runner.all<QueueRow>(s.queueTotal(this.d));
    // Readiness asks for the top portals; the gauges only for the total.
    const top = limit === 0 ? [] : await this.runner.all<QueueRow>(s.deepestQueues(this.d, limit));
    return deepestQueuesOf(total, top);
  }

  async portalsWithDueWork(now: number, limit: number): Promise<DueWorkOf[]> {
    const rows = await this.runner.all<{ portal_id: string; kind: DueWorkOf['kind'] }>(
      s.portalsWithDueWork(this.d, now, limit),
    );
    return rows.map((row) => ({ portalId: row.portal_id, kind: row.kind }));
  }

  /**
   * One chunk per statement: the most a write holds (and, on SQLite, blocks the loop for) is one chunk.
   * On PostgreSQL each commits on its own (no connection held for the transfer); putRecording's synced
   * commit comes after them in the log, so once it is durable they are too.
   */
  async stageRecording(portalId: string, source: AsyncIterable<Buffer>): Promise<StagedRecording> {
    const staged = { blobId: randomUUID(), bytes: 0 };
    let seq = 0;
    try {
      for await (const content of rechunk(source)) {
        await this.runner.all(s.insertChunk(this.d, { blobId: staged.blobId, seq, portalId, content }));
        seq += 1;
        staged.bytes += content.length;
      }
    } catch (error) {
      await this.discardStagedRecording(portalId, staged).catch(() => undefined);
      throw error;
    }
    return staged;
  }

  async discardStagedRecording(_portalId: string, staged: StagedRecording): Promise<void> {
    await this.runner.all(s.deleteChunks(this.d, staged.blobId));
  }

  /**
   * One chunk per read; the loop gets a turn between two. A recording forgotten while it is read (the portal
   * got it, or retention took it) ends the read with `RecordingGoneError`, never as a shorter file.
   */
  async readRecording(portalId: string, callId: string): Promise<RecordingContent | undefined> {
    const [row] = await this.runner.all<{ bytes: number; blob_id: string | null }>(
      s.recording(this.d, portalId, callId),
    );
    if (!row) return undefined;
    const { runner, d } = this;
    const bytes = Number(row.bytes);
    async function* chunks(): AsyncIterable<Buffer> {
      if (row.blob_id === null) {
        // Stored before recordings were chunked: one read, as then.
        const [inline] = await runner.all<{ content: Buffer }>(s.inlineRecording(d, portalId, callId));
        if (!inline) throw new RecordingGoneError(callId);
        yield inline.content;
        return;
      }
      let read = 0;
      for (let seq = 0; ; seq += 1) {
        const [chunk] = await runner.all<{ content: Buffer }>(s.chunk(d, row.blob_id, seq));
        if (!chunk) {
          if (read < bytes) throw new RecordingGoneError(callId);
          return;
        }
        read += chunk.content.length;
        yield chunk.content;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    return { bytes, chunks: chunks() };
  }

  async recordingBytes(portalId: string): Promise<number> {
    const [row] = await this.runner.all<{ bytes: number }>(s.recordingBytes(this.d, portalId));
    return Number(row.bytes);
  }

  async checkWritable(): Promise<void> {
    await this.runner.all(s.probe(this.d, Date.now()));
  }
}
