import { PoolClient } from 'pg';
import { CallEvent, CallRecord } from '../../calls/call';
import { ClickLedger, ClickRow, clickKeysOf } from '../../calls/click-ledger';
import { callOf, ClickDbRow, clickOf, eventKey, IntakeRead, takeEvents } from '../call-rows';
import { EventApplier, IngestResult } from '../call-store';
import { announceWork, asError, compareIds, DURABLE, saveCalls } from './postgres-call-rows';
import { PostgresDatabase } from './postgres-database';
import { runsWithoutRepeats, StatementGroup } from './statement-group';

/** One portal's `ingest`. */
interface Intake {
  portalId: string;
  submissions: CallEvent[][];
  apply: EventApplier;
}

/**
 * PostgreSQL's intake (`CallStore.ingest`): replicas write the same calls concurrently, so it locks what it
 * changes: a call not yet stored by an advisory lock on its key, a stored one by its row, always in call id
 * order; what it does with the events is the duplicate-dropping intake both engines share (`takeEvents`).
 */
export class PostgresIntake {
  /** Intake transactions, many portals' in one under load. */
  private readonly intakes = new StatementGroup<Intake, IngestResult[]>((asked) => this.ingestAll(asked), 2);

  constructor(private readonly db: PostgresDatabase) {}

  /**
   * Stores each event not seen before and applies it to its call, in one synced transaction shared with
   * the other portals' intakes asked while one was at the database (`StatementGroup`, two at a time so a
   * commit's sync overlaps the next group's work). A group that fails is tried again portal by portal, so
   * one portal's failure is its own.
   */
  run(portalId: string, submissions: CallEvent[][], apply: EventApplier): Promise<IngestResult[]> {
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
        const { clicks } = read.get(intake.portalId)!;
        const outcome = takeEvents(intake.submissions, intake.apply, read.get(intake.portalId)!);
        answers.set(intake, outcome.results);
        saved.push(...outcome.changed);
        for (const { event, key } of outcome.fresh) fresh.push({ portalId: intake.portalId, event, key });
        for (const row of clicks.changed) claimed.push({ portalId: intake.portalId, ...row });
        announceWork(atCommit, this.db.schema, intake.portalId, outcome.changed);
      }
      // The new event keys and the calls they changed, in one statement (an event changes its call).
      if (fresh.length > 0) {
        await saveCalls(client, saved, {
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
  ): Promise<Map<string, IntakeRead>> {
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
      else if (row.kind === 'call') read.calls.set(row.id, callOf({ data: row.body }));
      else read.clicks.push(clickOf(JSON.parse(row.body) as ClickDbRow));
    }
    return new Map(
      [...byPortal].map(([portalId, read]) => [
        portalId,
        { known: read.known, calls: read.calls, clicks: new ClickLedger(read.clicks) },
      ]),
    );
  }
}
