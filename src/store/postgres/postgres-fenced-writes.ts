import { CallRecord } from '../../calls/call';
import { callColumnsOf } from '../call-rows';
import { DeliveryLease, LeaseLostError } from '../coordination-store';
import { compareIds } from './postgres-call-rows';
import { PostgresDatabase } from './postgres-database';
import { runsWithoutRepeats, StatementGroup } from './statement-group';

/** One portal's `updateCallsFrom`: the calls with the version they were read at, and what to write. */
export interface FencedWrite {
  portalId: string;
  fence: DeliveryLease;
  known: [callId: string, version: string][];
  rows: CallRecord[];
}

/**
 * Delivery's fenced batch writes ("sent", the answer) on PostgreSQL, many portals' in one statement under
 * load (`StatementGroup`): the lease row share-locked (a takeover waits for this write, or this write sees
 * it), the calls still at the version they were read at locked in id order, and those written. Answers
 * each call's new row version; a call written by anyone else since is left out (the caller reads it again).
 */
export class PostgresFencedWrites {
  private readonly marks = new StatementGroup<FencedWrite, Map<string, string>>((asked) =>
    this.writeFrom(asked),
  );

  constructor(private readonly db: PostgresDatabase) {}

  run(write: FencedWrite): Promise<Map<string, string>> {
    return this.marks.run(write);
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
    const columns = rows.map((row) => callColumnsOf(row.call));
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
        ...(
          [
            'state',
            'next_step',
            'due_at',
            'updated_at',
            'data',
            'priority',
            'callback_phone',
            'callback_until',
          ] as const
        ).map((name) => columns.map((column) => column[name])),
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
}
