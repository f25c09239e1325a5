import { randomUUID } from 'node:crypto';
import { PoolClient } from 'pg';
import { CallEvent, CallRecord, CallState, idempotencyKey } from '../../calls/call';
import { deliveryPriority } from '../../calls/call-lifecycle';
import { awaitingCallback } from '../../calls/missed-call-task';
import {
  AnsweredCall,
  CallMutator,
  CallStore,
  EventApplier,
  IngestResult,
  QueueStats,
  RecordingContent,
  RecordingQuotaError,
  StagedRecording,
  deepestQueuesOf,
  DueLook,
  DueWorkOf,
  rechunk,
} from '../call-store';
import { ClickLedger, ClickRow, clickKeysOf } from '../../calls/click-ledger';
import { assertLeaseHeld, DeliveryLease, LeaseLostError } from '../coordination-store';
import { Fence } from '../fence';
import { CommitNotices, POSTGRES_DIALECT, PostgresDatabase, TransactionOptions } from './postgres-database';
import { runsWithoutRepeats, StatementGroup } from './statement-group';

/** NOTIFY channel on which a replica that stored work tells the others (payload: schema, portal id). */
const NEW_WORK_CHANNEL = 'bridge_new_work';

/**
 * Whatever the server's or role's default, `synchronous_commit = on`: intake's 202 (events, a pushed
 * recording, the callbacks its answered calls end) promises what it stored survives a database crash.
 */
const DURABLE: TransactionOptions = { synchronousCommit: true };

/** One portal's `lookDue` or `dueCalls`. */
interface LookRequest {
  portalId: string;
  now: number;
  limit: number;
  skip: ReadonlySet<string>;
  exceptSteps: readonly string[];
}

/** One portal's `ingest`. */
interface Intake {
  portalId: string;
  submissions: CallEvent[][];
  apply: EventApplier;
}

/** One portal's `updateCallsFrom`: the calls with the version they were read at, and what to write. */
interface FencedWrite {
  portalId: string;
  fence: DeliveryLease;
  known: [callId: string, version: string][];
  rows: CallRecord[];
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

interface CallRow {
  call_id: string;
  data: string;
  /** The row version (`xmin`): any write of the row changes it. */
  version?: string;
}

/**
 * The store for several replicas: PostgreSQL, one transaction per intake batch or delivery update, each
 * committed (and so on disk, synchronous_commit on) before its promise resolves. Replicas write the same
 * calls concurrently, so every read-modify-write locks what it changes: a call not yet stored is locked
 * by an advisory lock on its key, a stored one by its row; locks are always taken in call id order.
 */
export class PostgresCallStore extends CallStore {
  /**
   * The row version each call this store returned was read or written at (`updateCallsFrom`): a write naming
   * it changes the row only while no other write came between.
   */
  private readonly versions = new WeakMap<CallRecord, string>();

  /**
   * Who listens for a portal's new work, by NOTIFY payload: one handler on the channel for the whole store,
   * so a notification costs one map look, not a comparison per listening portal.
   */
  private readonly workListeners = new Map<string, Set<() => void>>();
  private readonly anyWorkListeners = new Set<(portalId: string) => void>();
  private stopListening?: () => void;

  /** Delivery loops' looks, many portals' in one statement under load. */
  private readonly looks = new StatementGroup<LookRequest, DueLook>((asked) => this.lookDueOf(asked));
  /** Intake transactions, many portals' in one under load. */
  private readonly intakes = new StatementGroup<Intake, IngestResult[]>((asked) => this.ingestAll(asked), 2);
  /** Delivery's fenced batch writes ("sent", the answer), many portals' in one statement under load. */
  private readonly marks = new StatementGroup<FencedWrite, Map<string, string>>((asked) =>
    this.writeFrom(asked),
  );

  constructor(private readonly db: PostgresDatabase) {
    super();
  }

  /**
   * Stores each event not seen before and applies it to its call, in one synced transaction shared with
   * the other portals' intakes asked while one was at the database (`StatementGroup`, two at a time so a
   * commit's sync overlaps the next group's work). A group that fails is tried again portal by portal, so
   * one portal's failure is its own.
   */
  ingest(portalId: string, submissions: CallEvent[][], apply: EventApplier): Promise<IngestResult[]> {
    return this.intakes.run({ portalId, submissions, apply });
  }

  private async ingestAll(asked: readonly Intake[]): Promise<(IngestResult[] | Error)[]> {
    const answers: (IngestResult[] | Error)[] = [];
    // A portal asked twice goes in the next transaction: each sees what the one before it stored.
    for (const round of runsWithoutRepeats(asked, (intake) => [intake.portalId])) {
      try {
        answers.push(...(await this.ingestRound(round)));
      } catch (error) {
        // An Error, whatever was thrown: DataLoader would hand any other value to the caller as its answer.
        if (round.length === 1) answers.push(asError(error));
        else {
          for (const one of round) {
            answers.push(
              await this.ingestRound([one]).then(
                ([result]) => result,
                (failed: unknown) => asError(failed),
              ),
            );
          }
        }
      }
    }
    return answers;
  }

  /** One transaction for several portals' intakes (each portal once). */
  private async ingestRound(round: readonly Intake[]): Promise<IngestResult[][]> {
    const now = Date.now();
    // Locks in one order for every transaction: portal, calls before clicks, id.
    const ordered = [...round].sort((a, b) => compareIds(a.portalId, b.portalId));
    const keys = ordered.map((intake) => {
      const events = intake.submissions.flat();
      return {
        intake,
        callIds: [...new Set(events.map((event) => event.callId))].sort(),
        clickKeys: clickKeysOf(events),
      };
    });
    const answers = new Map<Intake, IngestResult[]>();
    await this.db.transaction(async (client, atCommit) => {
      // The calls' advisory locks, then the clicks' their events carry (an advisory lock covers a click not
      // stored yet), each in sorted order, so every intake transaction takes them in one order. A statement
      // of its own, before the reads: in READ COMMITTED a statement reads a snapshot taken when it starts, so
      // a read in this statement would miss what a transaction we waited for committed.
      const locks = keys.flatMap(({ intake, callIds, clickKeys }) => [
        ...callIds.map((id) => [intake.portalId, id, false] as const),
        ...clickKeys.portalCallIds.map((id) => [intake.portalId, id, true] as const),
      ]);
      await client.query({
        name: 'intake-locks',
        text: `SELECT pg_advisory_xact_lock(hashtextextended(
           CASE WHEN k.click THEN 'click' || chr(31) ELSE '' END || k.portal_id || chr(31) || k.id, 0))
         FROM unnest($1::text[], $2::text[], $3::boolean[]) AS k(portal_id, id, click)`,
        values: [
          locks.map(([portal]) => portal),
          locks.map(([, id]) => id),
          locks.map(([, , click]) => click),
        ],
      });
      const read = await this.readLocked(client, keys);
      const saved: CallRecord[] = [];
      const fresh: { portalId: string; event: CallEvent; key: string }[] = [];
      const claimed: { portalId: string; portalCallId: string; matchedCallId?: string }[] = [];
      for (const { intake } of keys) {
        const { known, calls, clicks } = read.get(intake.portalId)!;
        const changed = new Map<string, CallRecord>();
        const results = intake.submissions.map((list) => {
          const result: IngestResult = { accepted: 0, duplicates: 0 };
          for (const event of list) {
            // The key may depend on the call as it stands (a later call.started naming new phones), so
            // events are keyed one after the other; a key stored before or earlier in this batch is a
            // duplicate.
            const key = idempotencyKey(event, calls.get(event.callId));
            if (known.has(eventKey(event.callId, key))) {
              result.duplicates += 1;
              continue;
            }
            known.add(eventKey(event.callId, key));
            fresh.push({ portalId: intake.portalId, event, key });
            result.accepted += 1;
            const call = intake.apply(calls.get(event.callId), event, clicks);
            calls.set(event.callId, call);
            changed.set(event.callId, call);
          }
          return result;
        });
        answers.set(intake, results);
        saved.push(...changed.values());
        for (const row of clicks.changed) claimed.push({ portalId: intake.portalId, ...row });
        this.announceWork(atCommit, intake.portalId, [...changed.values()]);
      }
      // The new event keys and the calls they changed, in one statement (an event changes its call).
      if (fresh.length > 0) {
        await this.saveCalls(client, saved, {
          portalIds: fresh.map(({ portalId }) => portalId),
          callIds: fresh.map(({ event }) => event.callId),
          keys: fresh.map(({ key }) => key),
          payloads: fresh.map(({ event }) => JSON.stringify(event)),
          receivedAt: now,
        });
      }
      if (claimed.length > 0) {
        await client.query(
          `INSERT INTO clicks (portal_id, portal_call_id, matched_call_id, created_at)
           SELECT c.portal_id, c.id, c.call_id, $4 FROM unnest($1::text[], $2::text[], $3::text[]) AS c(portal_id, id, call_id)
           ON CONFLICT (portal_id, portal_call_id) DO UPDATE SET matched_call_id = excluded.matched_call_id`,
          [
            claimed.map((row) => row.portalId),
            claimed.map((row) => row.portalCallId),
            claimed.map((row) => row.matchedCallId),
            now,
          ],
        );
      }
    }, DURABLE);
    return round.map((intake) => answers.get(intake)!);
  }

  /**
   * One statement, once the advisory locks are held, for each portal: the event keys stored for its calls
   * (nobody else stores events of them until this commits), the stored calls row-locked in id order, and
   * the clicks this batch may take, row-locked until the commit: the CALL_IDs its events carry and the open
   * clicks to its numbers. A replica waiting on a click row another took sees it taken once that one
   * commits (the row no longer qualifies), so no click is taken twice. Each portal's part is the statement
   * one portal alone would send (its ids as one JSON array), so each uses the same indexes.
   */
  private async readLocked(
    client: PoolClient,
    keys: readonly {
      intake: Intake;
      callIds: string[];
      clickKeys: { portalCallIds: string[]; phones: string[] };
    }[],
  ): Promise<Map<string, { known: Set<string>; calls: Map<string, CallRecord>; clicks: ClickLedger }>> {
    // A CTE with FOR UPDATE is run once, whole (never folded into the query), locking its rows as it reads
    // them: the calls' in portal and id order, then the clicks' (none without keys: an index look that
    // finds nothing).
    const rows = await client.query<{
      portal_id: string;
      kind: 'event' | 'call' | 'click';
      id: string;
      body: string;
    }>({
      name: 'intake-read',
      text: `WITH q AS (
         SELECT portal_id, ARRAY(SELECT jsonb_array_elements_text(calls::jsonb)) AS calls,
           ARRAY(SELECT jsonb_array_elements_text(clicks::jsonb)) AS clicks,
           ARRAY(SELECT jsonb_array_elements_text(phones::jsonb)) AS phones
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS q(portal_id, calls, clicks, phones)
       ), stored AS (
         SELECT e.portal_id, e.call_id, e.event FROM q
         JOIN call_events e ON e.portal_id = q.portal_id AND e.call_id = ANY(q.calls)
       ), locked_calls AS (
         SELECT c.portal_id, c.call_id, c.data FROM q
         JOIN calls c ON c.portal_id = q.portal_id AND c.call_id = ANY(q.calls)
         ORDER BY c.portal_id, c.call_id FOR UPDATE OF c
       ), locked_clicks AS (
         SELECT k.portal_id, k.portal_call_id, k.user_id, k.phone_number, k.clicked_at, k.matched_call_id
         FROM q JOIN clicks k ON k.portal_id = q.portal_id AND (k.portal_call_id = ANY(q.clicks)
           OR (k.matched_call_id IS NULL AND k.phone_number = ANY(q.phones)))
         ORDER BY k.portal_id, k.portal_call_id FOR UPDATE OF k
       )
       SELECT portal_id, 'call' AS kind, call_id AS id, data AS body FROM locked_calls
       UNION ALL SELECT portal_id, 'click', portal_call_id,
         json_build_object('portal_call_id', portal_call_id, 'user_id', user_id, 'phone_number', phone_number,
           'clicked_at', clicked_at, 'matched_call_id', matched_call_id)::text
       FROM locked_clicks
       UNION ALL SELECT portal_id, 'event', call_id, event FROM stored`,
      values: [
        keys.map(({ intake }) => intake.portalId),
        keys.map(({ callIds }) => JSON.stringify(callIds)),
        keys.map(({ clickKeys }) => JSON.stringify(clickKeys.portalCallIds)),
        keys.map(({ clickKeys }) => JSON.stringify(clickKeys.phones)),
      ],
    });
    const byPortal = new Map(
      keys.map(({ intake }) => [
        intake.portalId,
        { known: new Set<string>(), calls: new Map<string, CallRecord>(), clicks: [] as ClickRow[] },
      ]),
    );
    for (const row of rows.rows) {
      const read = byPortal.get(row.portal_id)!;
      if (row.kind === 'event') read.known.add(eventKey(row.id, row.body));
      else if (row.kind === 'call') read.calls.set(row.id, parse({ call_id: row.id, data: row.body }));
      else read.clicks.push(clickOf(JSON.parse(row.body) as ClickDbRow));
    }
    return new Map(
      [...byPortal].map(([portalId, read]) => [
        portalId,
        { known: read.known, calls: read.calls, clicks: new ClickLedger(read.clicks) },
      ]),
    );
  }

  async saveClick(portalId: string, click: ClickRow): Promise<void> {
    await this.db.query(
      `INSERT INTO clicks (portal_id, portal_call_id, user_id, phone_number, clicked_at, created_at)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (portal_id, portal_call_id) DO UPDATE SET user_id = excluded.user_id,
         phone_number = excluded.phone_number, clicked_at = excluded.clicked_at
       WHERE clicks.clicked_at IS NULL`,
      [
        portalId,
        click.portalCallId,
        click.userId ?? null,
        click.phoneNumber ?? null,
        click.clickedAt ?? null,
        Date.now(),
      ],
    );
  }

  async findClick(portalId: string, portalCallId: string): Promise<ClickRow | undefined> {
    const rows = await this.db.query<ClickDbRow>(
      `SELECT portal_call_id, user_id, phone_number, clicked_at, matched_call_id FROM clicks
       WHERE portal_id = $1 AND portal_call_id = $2`,
      [portalId, portalCallId],
    );
    return rows[0] && clickOf(rows[0]);
  }

  async findCall(portalId: string, callId: string): Promise<CallRecord | undefined> {
    const rows = await this.db.query<CallRow>(
      'SELECT call_id, data FROM calls WHERE portal_id = $1 AND call_id = $2',
      [portalId, callId],
    );
    return rows[0] && parse(rows[0]);
  }

  /** The look's statement (`lookDue`), many portals' in one under load; the earliest due time goes unread. */
  async dueCalls(
    portalId: string,
    now: number,
    limit: number,
    skip: ReadonlySet<string>,
    exceptSteps: readonly string[] = [],
  ): Promise<CallRecord[]> {
    return (await this.looks.run({ portalId, now, limit, skip, exceptSteps })).due;
  }

  /**
   * The due calls as dueCalls reads them, and with none, the earliest due time of all: one statement for
   * every portal's look made while the previous one was at the database (`StatementGroup`).
   */
  override lookDue(
    portalId: string,
    now: number,
    limit: number,
    skip: ReadonlySet<string>,
  ): Promise<DueLook> {
    return this.looks.run({ portalId, now, limit, skip, exceptSteps: [] });
  }

  /**
   * One statement for the looks of several portals: each portal's due calls (less its own `skip`, and those
   * whose next step is one of its `exceptSteps`), oldest first within its limit, then a row with its
   * earliest due time.
   */
  private async lookDueOf(asked: readonly LookRequest[]): Promise<DueLook[]> {
    const skipped = asked.flatMap((look, index) =>
      [...look.skip].map((callId) => [index + 1, callId] as const),
    );
    const steps = asked.flatMap((look, index) => look.exceptSteps.map((step) => [index + 1, step] as const));
    const rows = await this.db.query<CallRow & { look: number; next_due: number | null }>(
      `WITH q AS (
         SELECT * FROM unnest($1::text[], $2::bigint[], $3::int[]) WITH ORDINALITY AS q(portal_id, now, lim, look)
       ), s AS (
         SELECT * FROM unnest($4::int[], $5::text[]) AS s(look, call_id)
       ), x AS (
         SELECT * FROM unnest($6::int[], $7::text[]) AS x(look, step)
       )
       SELECT look, call_id, data, version, next_due FROM (
         SELECT q.look, c.call_id, c.data, c.version, NULL::bigint AS next_due, c.priority, c.due_at
         FROM q CROSS JOIN LATERAL (
           SELECT call_id, data, xmin::text AS version, priority, due_at FROM calls
           WHERE portal_id = q.portal_id AND due_at IS NOT NULL AND due_at <= q.now
             AND NOT EXISTS (SELECT 1 FROM s WHERE s.look = q.look AND s.call_id = calls.call_id)
             AND NOT EXISTS (SELECT 1 FROM x WHERE x.look = q.look AND x.step = calls.next_step)
           ORDER BY priority, due_at LIMIT q.lim
         ) AS c
         UNION ALL
         SELECT q.look, NULL, NULL, NULL,
           (SELECT MIN(due_at) FROM calls WHERE portal_id = q.portal_id AND due_at IS NOT NULL), NULL, NULL
         FROM q
       ) AS looked ORDER BY look, call_id IS NULL, priority, due_at`,
      [
        asked.map((look) => look.portalId),
        asked.map((look) => look.now),
        asked.map((look) => look.limit),
        skipped.map(([index]) => index),
        skipped.map(([, callId]) => callId),
        steps.map(([index]) => index),
        steps.map(([, step]) => step),
      ],
      'look-due',
    );
    const looks = asked.map((): DueLook => ({ due: [] }));
    for (const row of rows) {
      const look = looks[Number(row.look) - 1];
      if (row.call_id !== null) look.due.push(this.versioned(row));
      else if (look.due.length === 0) look.nextDueAt = row.next_due ?? undefined;
    }
    return looks;
  }

  async updateCalls(
    portalId: string,
    callIds: string[],
    mutate: CallMutator,
    fence?: DeliveryLease,
  ): Promise<CallRecord[]> {
    return this.db.transaction(async (client, atCommit) => {
      if (fence) await this.checkFence(client, portalId, fence);
      const calls = await this.lockCalls(client, portalId, [...new Set(callIds)].sort());
      const updated = callIds.flatMap((callId) => {
        const call = calls.get(callId);
        if (!call) return [];
        const next = mutate(call);
        calls.set(callId, next);
        return [next];
      });
      await this.saveCalls(client, updated);
      // Delivery's own writes (fenced) concern only the deliverer; an operator's re-queue wakes it.
      if (!fence) this.announceWork(atCommit, portalId, updated);
      return updated;
    });
  }

  /**
   * One statement for the batch (shared with other portals' batches written at the same moment:
   * `StatementGroup`): the lease row share-locked (a takeover waits for this write, or this write sees it),
   * the calls still at the version they were read at locked in id order, and those written. A call written
   * by anyone else since is left for updateCalls' read-modify-write (fenced again).
   */
  override async updateCallsFrom(
    portalId: string,
    calls: readonly CallRecord[],
    mutate: CallMutator,
    fence: DeliveryLease,
  ): Promise<CallRecord[]> {
    const known = calls.filter((call) => this.versions.has(call));
    const next = new Map<string, CallRecord>();
    for (const call of known) next.set(call.callId, mutate(call));
    const written = new Map<string, CallRecord>();
    if (known.length > 0) {
      const versions = await this.marks.run({
        portalId,
        fence,
        known: known.map((call) => [call.callId, this.versions.get(call)!]),
        rows: [...next.values()],
      });
      for (const [callId, version] of versions) {
        const call = next.get(callId)!;
        this.versions.set(call, version);
        written.set(callId, call);
      }
    }
    // Calls read without a version, or written by someone else since: read, changed and written again.
    const rest = calls.filter((call) => !written.has(call.callId)).map((call) => call.callId);
    const again = rest.length > 0 ? await this.updateCalls(portalId, rest, mutate, fence) : [];
    const byId = new Map(again.map((call) => [call.callId, call]));
    return calls.flatMap((call) => {
      const updated = written.get(call.callId) ?? byId.get(call.callId);
      return updated ? [updated] : [];
    });
  }

  /**
   * Several portals' fenced batch writes in one statement, each as `updateCallsFrom` describes: a batch
   * whose lease is not held writes nothing (LeaseLostError for it alone); a call named twice goes in a
   * statement of its own, one after the other, so each write sees the one before.
   */
  private async writeFrom(asked: readonly FencedWrite[]): Promise<(Map<string, string> | Error)[]> {
    const answers: (Map<string, string> | Error)[] = [];
    const callsOf = (write: FencedWrite) => write.rows.map((call) => `${write.portalId}\u001f${call.callId}`);
    for (const round of runsWithoutRepeats(asked, callsOf)) answers.push(...(await this.writeRound(round)));
    return answers;
  }

  private async writeRound(round: readonly FencedWrite[]): Promise<(Map<string, string> | Error)[]> {
    const known = round.flatMap((write, index) =>
      write.known.map(([callId, version]) => ({ r: index + 1, portalId: write.portalId, callId, version })),
    );
    // Locked in the same order by every writer: portal, then call id.
    const rows = round
      .flatMap((write, index) => write.rows.map((call) => ({ r: index + 1, portalId: write.portalId, call })))
      .sort((a, b) => compareIds(a.portalId, b.portalId) || compareIds(a.call.callId, b.call.callId));
    const result = await this.db.query<{ r: number; call_id: string | null; version: string | null }>(
      `WITH fence AS (
         SELECT f.r FROM portal_leases l
           JOIN unnest($1::text[], $2::text[], $3::bigint[]) WITH ORDINALITY AS f(portal_id, owner, epoch, r)
           ON l.portal_id = f.portal_id AND l.owner = f.owner AND l.epoch = f.epoch
         ORDER BY l.portal_id FOR SHARE OF l
       ), target AS (
         SELECT c.portal_id, c.call_id FROM calls c
           JOIN unnest($4::int[], $5::text[], $6::text[], $7::text[]) AS v(r, portal_id, call_id, version)
           ON c.portal_id = v.portal_id AND c.call_id = v.call_id
         WHERE c.xmin::text = v.version AND EXISTS (SELECT 1 FROM fence WHERE fence.r = v.r)
         ORDER BY c.portal_id, c.call_id FOR UPDATE OF c
       ), saved AS (
         UPDATE calls AS c SET state = n.state, next_step = n.next_step, due_at = n.due_at,
           updated_at = n.updated_at, data = n.data, priority = n.priority,
           callback_phone = n.callback_phone, callback_until = n.callback_until
         FROM unnest($8::int[], $9::text[], $10::text[], $11::text[], $12::text[], $13::bigint[], $14::bigint[],
           $15::text[], $16::smallint[], $17::text[], $18::bigint[])
           AS n(r, portal_id, call_id, state, next_step, due_at, updated_at, data, priority, callback_phone,
             callback_until)
         JOIN target t ON t.portal_id = n.portal_id AND t.call_id = n.call_id
         WHERE c.portal_id = n.portal_id AND c.call_id = n.call_id
         RETURNING n.r, c.call_id, c.xmin::text AS version
       )
       SELECT r::int, NULL::text AS call_id, NULL::text AS version FROM fence
       UNION ALL SELECT r, call_id, version FROM saved`,
      [
        round.map((write) => write.portalId),
        round.map((write) => write.fence.owner),
        round.map((write) => write.fence.epoch),
        known.map((row) => row.r),
        known.map((row) => row.portalId),
        known.map((row) => row.callId),
        known.map((row) => row.version),
        rows.map((row) => row.r),
        rows.map((row) => row.portalId),
        rows.map((row) => row.call.callId),
        rows.map((row) => row.call.state),
        rows.map((row) => row.call.nextStep ?? null),
        rows.map((row) => row.call.dueAt ?? null),
        rows.map((row) => row.call.updatedAt),
        rows.map((row) => JSON.stringify(row.call)),
        rows.map((row) => deliveryPriority(row.call)),
        rows.map((row) => awaitingCallback(row.call)?.phone ?? null),
        rows.map((row) => awaitingCallback(row.call)?.until ?? null),
      ],
      'write-from',
    );
    const held = new Set<number>();
    const written = round.map(() => new Map<string, string>());
    for (const row of result) {
      const r = Number(row.r);
      if (row.call_id === null || row.version === null) held.add(r);
      else written[r - 1].set(row.call_id, row.version);
    }
    return round.map((write, index) =>
      held.has(index + 1) ? written[index] : new LeaseLostError(write.fence),
    );
  }

  async stageRecording(portalId: string, source: AsyncIterable<Buffer>): Promise<StagedRecording> {
    const staged = { blobId: randomUUID(), bytes: 0 };
    let seq = 0;
    try {
      // Each chunk commits on its own (no connection held for the whole transfer); putRecording's synced
      // commit comes after them in the log, so once it is durable they are too.
      for await (const chunk of rechunk(source)) {
        await this.db.query(
          'INSERT INTO recording_chunks (blob_id, seq, portal_id, created_at, content) VALUES ($1, $2, $3, $4, $5)',
          [staged.blobId, seq, portalId, Date.now(), chunk],
        );
        seq += 1;
        staged.bytes += chunk.length;
      }
    } catch (error) {
      await this.discardStagedRecording(portalId, staged).catch(() => undefined);
      throw error;
    }
    return staged;
  }

  async discardStagedRecording(_portalId: string, staged: StagedRecording): Promise<void> {
    await this.db.query('DELETE FROM recording_chunks WHERE blob_id = $1', [staged.blobId]);
  }

  async putRecording(
    portalId: string,
    callId: string,
    staged: StagedRecording,
    mutate: CallMutator,
    fence?: DeliveryLease,
    quotaBytes?: number,
  ): Promise<CallRecord | undefined> {
    return this.db.transaction(async (client, atCommit) => {
      if (fence) await this.checkFence(client, portalId, fence);
      const call = (await this.lockCalls(client, portalId, [callId])).get(callId);
      if (!call) return undefined;
      if (quotaBytes !== undefined) {
        // Pushes to one portal at once are counted one after the other.
        await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 26))', [portalId]);
        const held = await client.query<{ bytes: number }>(
          'SELECT COALESCE(SUM(bytes), 0)::bigint AS bytes FROM recordings WHERE portal_id = $1 AND call_id <> $2',
          [portalId, callId],
        );
        if (Number(held.rows[0].bytes) + staged.bytes > quotaBytes) throw new RecordingQuotaError(quotaBytes);
      }
      const next = mutate(call);
      await client.query(
        `DELETE FROM recording_chunks WHERE blob_id IN
           (SELECT blob_id FROM recordings WHERE portal_id = $1 AND call_id = $2)`,
        [portalId, callId],
      );
      await client.query(
        `INSERT INTO recordings (portal_id, call_id, bytes, stored_at, content, blob_id)
         VALUES ($1, $2, $3, $4, '', $5)
         ON CONFLICT (portal_id, call_id) DO UPDATE SET bytes = excluded.bytes, stored_at = excluded.stored_at,
           content = excluded.content, blob_id = excluded.blob_id`,
        [portalId, callId, staged.bytes, next.recording?.storedAt ?? Date.now(), staged.blobId],
      );
      await this.saveCalls(client, [next]);
      if (!fence) this.announceWork(atCommit, portalId, [next]);
      return next;
    }, DURABLE);
  }

  /** FOR SHARE: a takeover (an UPDATE of the lease row) waits for this transaction, or this one sees it. */
  private async checkFence(client: PoolClient, portalId: string, fence: DeliveryLease): Promise<void> {
    const holder = await client.query<Fence>(
      'SELECT owner, epoch FROM portal_leases WHERE portal_id = $1 FOR SHARE',
      [portalId],
    );
    assertLeaseHeld(holder.rows[0], fence);
  }

  /**
   * One chunk per query: its hex text (twice its size) is the most a read holds, never a whole file's.
   * (pg's binary result mode decodes every field as UTF-8 text, which corrupts bytea, so text it is.)
   */
  async readRecording(portalId: string, callId: string): Promise<RecordingContent | undefined> {
    const rows = await this.db.query<{ bytes: number; blob_id: string | null }>(
      'SELECT bytes, blob_id FROM recordings WHERE portal_id = $1 AND call_id = $2',
      [portalId, callId],
    );
    const row = rows[0];
    if (!row) return undefined;
    const db = this.db;
    async function* chunks(): AsyncIterable<Buffer> {
      if (row.blob_id === null) {
        // Stored before recordings were chunked: one read, as then.
        const inline = await db.query<{ content: Buffer }>(
          'SELECT content FROM recordings WHERE portal_id = $1 AND call_id = $2',
          [portalId, callId],
        );
        if (inline[0]) yield inline[0].content;
        return;
      }
      for (let seq = 0; ; seq += 1) {
        const chunk = await db.query<{ content: Buffer }>(
          'SELECT content FROM recording_chunks WHERE blob_id = $1 AND seq = $2',
          [row.blob_id, seq],
        );
        if (!chunk[0]) return;
        yield chunk[0].content;
      }
    }
    return { bytes: Number(row.bytes), chunks: chunks() };
  }

  async recordingBytes(portalId: string): Promise<number> {
    const rows = await this.db.query<{ bytes: number }>(
      'SELECT COALESCE(SUM(bytes), 0)::bigint AS bytes FROM recordings WHERE portal_id = $1',
      [portalId],
    );
    return Number(rows[0].bytes);
  }

  async deleteRecording(portalId: string, callId: string, storedAt?: number): Promise<void> {
    await this.db.query(
      `WITH gone AS (
         DELETE FROM recordings WHERE portal_id = $1 AND call_id = $2 AND ($3::bigint IS NULL OR stored_at = $3)
         RETURNING blob_id
       )
       DELETE FROM recording_chunks c USING gone WHERE c.blob_id = gone.blob_id`,
      [portalId, callId, storedAt ?? null],
    );
  }

  async expireRecordings(storedBefore: number, orphanedBefore: number, limit: number): Promise<number> {
    const expired = await this.db.query<{ call_id: string }>(
      `WITH stale AS (
         SELECT portal_id, call_id FROM recordings WHERE stored_at < $1 ORDER BY stored_at LIMIT $2
         FOR UPDATE SKIP LOCKED
       ), gone AS (
         DELETE FROM recordings r USING stale s WHERE r.portal_id = s.portal_id AND r.call_id = s.call_id
         RETURNING r.call_id, r.blob_id
       ), chunks AS (
         DELETE FROM recording_chunks c USING gone WHERE c.blob_id = gone.blob_id
       )
       SELECT call_id FROM gone`,
      [storedBefore, limit],
    );
    await this.db.query(
      `DELETE FROM recording_chunks WHERE (blob_id, seq) IN (
         SELECT c.blob_id, c.seq FROM recording_chunks c
         WHERE c.created_at < $1 AND NOT EXISTS (SELECT 1 FROM recordings r WHERE r.blob_id = c.blob_id)
         LIMIT $2)`,
      [orphanedBefore, limit],
    );
    return expired.length;
  }

  /**
   * Not fenced (intake runs it on any replica, like `ingest`): the rows are locked in id order, so delivery's
   * fenced writes to the same calls wait for it or it for them.
   */
  async updateCallsAwaitingCallback(
    portalId: string,
    answered: readonly AnsweredCall[],
    mutate: CallMutator,
  ): Promise<CallRecord[]> {
    return this.db.transaction(async (client, atCommit) => {
      const rows = await client.query<CallRow>(
        `SELECT call_id, data FROM calls c
         WHERE c.portal_id = $1 AND c.callback_phone IS NOT NULL AND EXISTS (
           SELECT 1 FROM unnest($2::text[], $3::bigint[]) AS a(phone, answered_at)
           WHERE c.callback_phone = a.phone AND c.callback_until > a.answered_at)
         ORDER BY call_id FOR UPDATE`,
        [portalId, answered.map((answer) => answer.phone), answered.map((answer) => answer.answeredAt)],
      );
      const calls = rows.rows.map(parse);
      const updated = calls.map((call) => mutate(call));
      const changed = updated.filter((call, index) => call !== calls[index]);
      await this.saveCalls(client, changed);
      this.announceWork(atCommit, portalId, changed);
      return updated;
    }, DURABLE);
  }

  watchNewWork(portalId: string, listener: () => void): () => void {
    const key = workPayload(this.db.schema, portalId);
    let listeners = this.workListeners.get(key);
    if (!listeners) this.workListeners.set(key, (listeners = new Set()));
    listeners.add(listener);
    this.listenForWork();
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0 && this.workListeners.get(key) === listeners) this.workListeners.delete(key);
    };
  }

  override watchAnyNewWork(listener: (portalId: string) => void): () => void {
    this.anyWorkListeners.add(listener);
    this.listenForWork();
    return () => this.anyWorkListeners.delete(listener);
  }

  private listenForWork(): void {
    const prefix = workPayload(this.db.schema, '');
    this.stopListening ??= this.db.listen(NEW_WORK_CHANNEL, (payload, own) => {
      // Sent by this process: whatever stored that work woke delivery here itself (intake, a re-queue, a
      // pushed recording); hearing it again would only make the loop look at the queue once more.
      if (own) return;
      for (const listener of this.workListeners.get(payload) ?? []) listener();
      if (this.anyWorkListeners.size === 0 || !payload.startsWith(prefix)) return;
      const portalId = payload.slice(prefix.length);
      for (const listener of this.anyWorkListeners) listener(portalId);
    });
  }

  async listCalls(portalId: string, state: CallState, limit: number): Promise<CallRecord[]> {
    const rows = await this.db.query<CallRow>(
      'SELECT call_id, data FROM calls WHERE portal_id = $1 AND state = $2 ORDER BY updated_at DESC LIMIT $3',
      [portalId, state, limit],
    );
    return rows.map(parse);
  }

  async nextDueAt(portalId: string): Promise<number | undefined> {
    const rows = await this.db.query<{ due: number | null }>(
      'SELECT MIN(due_at) AS due FROM calls WHERE portal_id = $1 AND due_at IS NOT NULL',
      [portalId],
    );
    return rows[0].due ?? undefined;
  }

  async portalsWithDueWork(now: number, limit: number): Promise<DueWorkOf[]> {
    const rows = await this.db.query<{ portal_id: string; kind: DueWorkOf['kind'] }>(
      `SELECT portal_id, 'call' AS kind FROM calls WHERE due_at IS NOT NULL AND due_at <= $1
       UNION SELECT portal_id, 'dial' FROM dial_requests
         WHERE state IN ('pending', 'sending') AND due_at <= ${POSTGRES_DIALECT.nowMs}
       UNION SELECT portal_id, 'event' FROM portal_events WHERE state = 'pending' AND due_at <= ${POSTGRES_DIALECT.nowMs}
       LIMIT $2`,
      [now, limit],
    );
    return rows.map((row) => ({ portalId: row.portal_id, kind: row.kind }));
  }

  async deepestQueues(
    limit: number,
  ): Promise<{ total: QueueStats; top: (QueueStats & { portalId: string })[] }> {
    const [total] = await this.db.query<{ depth: number; oldest: number | null }>(
      'SELECT COUNT(*)::int AS depth, MIN(created_at) AS oldest FROM calls WHERE due_at IS NOT NULL',
    );
    // Readiness asks for the top portals; the gauges only for the total.
    const top =
      limit === 0
        ? []
        : await this.db.query<{ portal_id: string; depth: number; oldest: number | null }>(
            `SELECT portal_id, COUNT(*)::int AS depth, MIN(created_at) AS oldest FROM calls WHERE due_at IS NOT NULL
       GROUP BY portal_id ORDER BY depth DESC, portal_id LIMIT $1`,
            [limit],
          );
    return deepestQueuesOf(total, top);
  }

  async queueStats(portalId: string): Promise<QueueStats> {
    const rows = await this.db.query<{ depth: number; oldest: number | null; failed: number }>(
      `SELECT (SELECT COUNT(*)::int FROM calls WHERE portal_id = $1 AND due_at IS NOT NULL) AS depth,
              (SELECT MIN(created_at) FROM calls WHERE portal_id = $1 AND due_at IS NOT NULL) AS oldest,
              (SELECT COUNT(*)::int FROM calls WHERE portal_id = $1 AND state = 'failed') AS failed`,
      [portalId],
    );
    const row = rows[0];
    return { depth: row.depth, oldestCreatedAt: row.oldest ?? undefined, failed: row.failed };
  }

  /**
   * One statement: the calls are row-locked before they go, so a call intake or an operator is changing
   * right now is skipped (and re-checked: a call re-queued meanwhile no longer qualifies). Replicas running
   * this at once skip each other's rows, so every replica may run it.
   */
  async deleteSettledCalls(before: number, limit: number): Promise<number> {
    const deleted = await this.db.query<{ call_id: string }>(
      `WITH settled AS (
         SELECT portal_id, call_id FROM calls
         WHERE due_at IS NULL AND state IN ('finished', 'failed') AND updated_at < $1
         ORDER BY updated_at LIMIT $2
         FOR UPDATE SKIP LOCKED
       ), events AS (
         DELETE FROM call_events e USING settled s WHERE e.portal_id = s.portal_id AND e.call_id = s.call_id
       ), recordings AS (
         DELETE FROM recordings r USING settled s WHERE r.portal_id = s.portal_id AND r.call_id = s.call_id
         RETURNING r.blob_id
       ), chunks AS (
         DELETE FROM recording_chunks c USING recordings r WHERE c.blob_id = r.blob_id
       )
       DELETE FROM calls c USING settled s WHERE c.portal_id = s.portal_id AND c.call_id = s.call_id
       RETURNING c.call_id`,
      [before, limit],
    );
    // Clicks (click-to-call) older than the retention: matched long ago, or never dialled.
    await this.db.query(
      `DELETE FROM clicks WHERE (portal_id, portal_call_id) IN
         (SELECT portal_id, portal_call_id FROM clicks WHERE created_at < $1 LIMIT $2)`,
      [before, limit],
    );
    return deleted.length;
  }

  async checkWritable(): Promise<void> {
    await this.db.query(
      'INSERT INTO probe (id, at) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET at = excluded.at',
      [Date.now()],
    );
  }

  async close(): Promise<void> {
    await this.db.close();
  }

  /** The stored calls among `sortedIds`, row-locked in id order until the transaction ends. */
  /** The call of `row`, its row version kept for updateCallsFrom. */
  private versioned(row: CallRow): CallRecord {
    const call = parse(row);
    if (row.version) this.versions.set(call, row.version);
    return call;
  }

  private async lockCalls(
    client: PoolClient,
    portalId: string,
    sortedIds: string[],
  ): Promise<Map<string, CallRecord>> {
    const rows = await client.query<CallRow>(
      'SELECT call_id, data FROM calls WHERE portal_id = $1 AND call_id = ANY($2::text[]) ORDER BY call_id FOR UPDATE',
      [portalId, sortedIds],
    );
    return new Map(rows.rows.map((row) => [row.call_id, parse(row)]));
  }

  /**
   * Tells every replica's listener, once this transaction commits (PostgreSQL delivers a NOTIFY only then,
   * and one per payload however often it is sent), that calls of the portal are due.
   */
  private announceWork(atCommit: CommitNotices, portalId: string, calls: CallRecord[]): void {
    if (!calls.some((call) => call.dueAt !== undefined)) return;
    // Sent with the COMMIT, in its round trip.
    atCommit.notify(NEW_WORK_CHANNEL, workPayload(this.db.schema, portalId));
  }

  /**
   * Upserts `calls`; with `events` (intake), their new event keys are inserted by the same statement (a
   * data-modifying CTE: one round trip, and a key stored twice still fails the whole statement).
   */
  private async saveCalls(client: PoolClient, calls: CallRecord[], events?: NewEvents): Promise<void> {
    if (!calls.length) return;
    await client.query({
      name: events ? 'save-calls-events' : 'save-calls',
      text: `${
        events
          ? `WITH stored_events AS (
               INSERT INTO call_events (portal_id, call_id, event, payload, received_at)
               SELECT e.portal_id, e.call_id, e.event, e.payload, $16
               FROM unnest($12::text[], $13::text[], $14::text[], $15::text[]) AS e(portal_id, call_id, event, payload)
             ) `
          : ''
      }INSERT INTO calls (portal_id, call_id, state, next_step, due_at, created_at, updated_at, data, priority,
         callback_phone, callback_until)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[],
         $7::bigint[], $8::text[], $9::smallint[], $10::text[], $11::bigint[])
       ON CONFLICT (portal_id, call_id) DO UPDATE SET state = excluded.state, next_step = excluded.next_step,
         due_at = excluded.due_at, updated_at = excluded.updated_at, data = excluded.data,
         priority = excluded.priority, callback_phone = excluded.callback_phone,
         callback_until = excluded.callback_until`,
      values: [
        calls.map((call) => call.portalId),
        calls.map((call) => call.callId),
        calls.map((call) => call.state),
        calls.map((call) => call.nextStep ?? null),
        calls.map((call) => call.dueAt ?? null),
        calls.map((call) => call.createdAt),
        calls.map((call) => call.updatedAt),
        calls.map((call) => JSON.stringify(call)),
        calls.map((call) => deliveryPriority(call)),
        calls.map((call) => awaitingCallback(call)?.phone ?? null),
        calls.map((call) => awaitingCallback(call)?.until ?? null),
        ...(events
          ? [events.portalIds, events.callIds, events.keys, events.payloads, events.receivedAt]
          : []),
      ],
    });
  }
}

/** Intake's new event keys, stored with their calls (`saveCalls`). */
interface NewEvents {
  portalIds: string[];
  callIds: string[];
  keys: string[];
  payloads: string[];
  receivedAt: number;
}

function workPayload(schema: string, portalId: string): string {
  return `${schema}\u001f${portalId}`;
}

interface ClickDbRow {
  portal_call_id: string;
  user_id: string | number | null;
  phone_number: string | null;
  clicked_at: string | number | null;
  matched_call_id: string | null;
}

/** bigint columns arrive as strings. */
function clickOf(row: ClickDbRow): ClickRow {
  return {
    portalCallId: row.portal_call_id,
    userId: row.user_id === null ? undefined : Number(row.user_id),
    phoneNumber: row.phone_number ?? undefined,
    clickedAt: row.clicked_at === null ? undefined : Number(row.clicked_at),
    matchedCallId: row.matched_call_id ?? undefined,
  };
}

function eventKey(callId: string, event: string): string {
  return `${event}\u001f${callId}`;
}

function parse(row: CallRow): CallRecord {
  return JSON.parse(row.data) as CallRecord;
}
