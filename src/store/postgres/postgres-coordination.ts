import { BucketRequest, BucketState, SharedBucketStore } from '../coordination-store';
import { SqlLeaseStore } from '../sql-lease-store';
import { DB_CLOCK, DB_NOW_MS, PostgresDatabase } from './postgres-database';
import { replicaLockHeld } from './postgres-replica-registry';
import { runsWithoutRepeats, StatementGroup } from './statement-group';

/** One portal's `take`. */
interface TakeRequest extends BucketRequest {
  portalId: string;
}

/** One portal's `refund` (`units` -1) or `spentLate` (`units` the extra, 0 to 1). */
interface AdjustRequest {
  portalId: string;
  ratePerSec: number;
  units: number;
}

/**
 * Delivery leases in PostgreSQL, timed by the database's clock. Anyone may also take over the lease of a
 * registered replica whose liveness lock is gone (it died: docs/decisions/sharding.md), one epoch higher
 * as for an expired lease; an owner never registered keeps the lease until it expires.
 */
export class PostgresLeaseStore extends SqlLeaseStore {
  constructor(db: PostgresDatabase) {
    super(db, {
      clock: () => DB_CLOCK,
      pairs: (held) => (q) =>
        `SELECT * FROM unnest(${q.value(held.map((lease) => lease.portalId))}::text[],
           ${q.value(held.map((lease) => lease.epoch))}::bigint[])`,
      takeOver: `EXISTS (SELECT 1 FROM bridge_replicas r
        WHERE r.replica_id = portal_leases.owner AND NOT ${replicaLockHeld('r')})`,
    });
  }
}

/**
 * The portal's leaky bucket in one row per portal. Each statement drains the level by the time passed on
 * the database clock, at the shared rate factor, then changes it; the row lock makes replicas take turns.
 */
export class PostgresBucketStore extends SharedBucketStore {
  private readonly takes = new StatementGroup<TakeRequest, BucketState & { waitMs: number }>((asked) =>
    this.takeUnits(asked),
  );
  /**
   * Refunds and late spends, many portals' in one statement under load: on a busy replica most requests
   * leave more than SEND_GUARD_SEC after their grant, one late spend each, as many as the takes.
   */
  private readonly adjustments = new StatementGroup<AdjustRequest, undefined>((asked) =>
    this.adjustUnits(asked),
  );

  constructor(private readonly db: PostgresDatabase) {
    super();
  }

  /** Many portals' units are taken in one statement under load (`StatementGroup`). */
  take(portalId: string, request: BucketRequest): Promise<BucketState & { waitMs: number }> {
    return this.takes.run({ portalId, ...request });
  }

  /**
   * Takes a unit for each request (a portal named twice waits for the statement before), as `change`
   * does for one: drained to now, one more when it stays within the request's limit; a portal without a
   * row yet gets one.
   */
  private async takeUnits(asked: readonly TakeRequest[]): Promise<(BucketState & { waitMs: number })[]> {
    const answers: (BucketState & { waitMs: number })[] = [];
    for (const round of runsWithoutRepeats(asked, (request) => [request.portalId])) {
      answers.push(...(await this.takeRound(round)));
    }
    return answers;
  }

  private async takeRound(round: readonly TakeRequest[]): Promise<(BucketState & { waitMs: number })[]> {
    const drained = new Map<string, BucketState>();
    for (;;) {
      const missing = round.filter((request) => !drained.has(request.portalId));
      if (missing.length === 0) break;
      const rows = await this.db.query<BucketState & { portal_id: string }>(
        `WITH q AS (
           SELECT * FROM unnest($1::text[], $2::float8[], $3::float8[]) AS q(portal_id, rate, lim)
         ), d AS (
           SELECT b.portal_id, q.lim,
             GREATEST(0, b.level - GREATEST(0, ${DB_NOW_MS} - b.updated_at) / 1000 * q.rate * b.rate_factor) AS level,
             b.rate_factor AS factor, GREATEST(b.updated_at, ${DB_NOW_MS}) AS ms
           FROM portal_budget b JOIN q ON q.portal_id = b.portal_id
           ORDER BY b.portal_id FOR UPDATE OF b
         )
         UPDATE portal_budget SET level = CASE WHEN d.level + 1 <= d.lim THEN d.level + 1 ELSE d.level END,
           updated_at = d.ms
         FROM d WHERE portal_budget.portal_id = d.portal_id
         RETURNING d.portal_id, d.level, d.factor`,
        [
          missing.map((request) => request.portalId),
          missing.map((request) => request.ratePerSec),
          missing.map((request) => request.limit),
        ],
        'take-units',
      );
      for (const row of rows) {
        drained.set(row.portal_id, { level: Number(row.level), factor: Number(row.factor) });
      }
      const absent = missing.filter((request) => !drained.has(request.portalId));
      if (absent.length === 0) break;
      await this.addBuckets(absent.map((request) => request.portalId));
    }
    return round.map((request) => {
      const { level, factor } = drained.get(request.portalId)!;
      if (level + 1 <= request.limit) return { level: level + 1, factor, waitMs: 0 };
      const waitMs = Math.ceil(((level + 1 - request.limit) / (request.ratePerSec * factor)) * 1000);
      return { level, factor, waitMs: Math.max(1, waitMs) };
    });
  }

  /** Empty buckets for portals that have none yet (a concurrent insert of the same portal is kept). */
  private async addBuckets(portalIds: string[]): Promise<void> {
    await this.db.query(
      `INSERT INTO portal_budget (portal_id, level, updated_at, rate_factor)
       SELECT portal_id, 0, ${DB_NOW_MS}, 1 FROM unnest($1::text[]) AS a(portal_id)
       ON CONFLICT (portal_id) DO NOTHING`,
      [portalIds],
    );
  }

  async refund(portalId: string, ratePerSec: number): Promise<void> {
    await this.adjustments.run({ portalId, ratePerSec, units: -1 });
  }

  async spentLate(portalId: string, ratePerSec: number, extra: number): Promise<void> {
    const units = Math.min(1, Math.max(0, Number(extra) || 0));
    await this.adjustments.run({ portalId, ratePerSec, units });
  }

  /**
   * Each request's units added to its portal's level drained to now (never below 0), as `change` does for
   * one; a portal named twice waits for the statement before, a portal without a row yet gets one.
   */
  private async adjustUnits(asked: readonly AdjustRequest[]): Promise<undefined[]> {
    for (const round of runsWithoutRepeats(asked, (request) => [request.portalId])) {
      let missing: readonly AdjustRequest[] = round;
      for (;;) {
        const rows = await this.db.query<{ portal_id: string }>(
          `WITH q AS (
             SELECT * FROM unnest($1::text[], $2::float8[], $3::float8[]) AS q(portal_id, rate, units)
           ), d AS (
             SELECT b.portal_id, q.units,
               GREATEST(0, b.level - GREATEST(0, ${DB_NOW_MS} - b.updated_at) / 1000 * q.rate * b.rate_factor) AS level,
               GREATEST(b.updated_at, ${DB_NOW_MS}) AS ms
             FROM portal_budget b JOIN q ON q.portal_id = b.portal_id
             ORDER BY b.portal_id FOR UPDATE OF b
           )
           UPDATE portal_budget SET level = GREATEST(0, d.level + d.units), updated_at = d.ms
           FROM d WHERE portal_budget.portal_id = d.portal_id
           RETURNING d.portal_id`,
          [
            missing.map((request) => request.portalId),
            missing.map((request) => request.ratePerSec),
            missing.map((request) => request.units),
          ],
          'adjust-units',
        );
        const adjusted = new Set(rows.map((row) => row.portal_id));
        missing = missing.filter((request) => !adjusted.has(request.portalId));
        if (missing.length === 0) break;
        await this.addBuckets(missing.map((request) => request.portalId));
      }
    }
    return asked.map(() => undefined);
  }

  async rejected(portalId: string, ratePerSec: number, capacity: number, minFactor: number): Promise<void> {
    await this.change(
      portalId,
      ratePerSec,
      `GREATEST(d.level, ${Number(capacity)})`,
      `GREATEST(${Number(minFactor)}, d.factor / 2)`,
    );
  }

  async accepted(portalId: string, step: number): Promise<void> {
    await this.db.query(
      'UPDATE portal_budget SET rate_factor = LEAST(1, rate_factor + $2) WHERE portal_id = $1 AND rate_factor < 1',
      [portalId, step],
    );
  }

  /**
   * Drains the portal's row to now, then sets its level and factor from the drained values (`d.level`,
   * `d.factor`), in one statement holding the row lock. Returns the drained values (before the change).
   */
  private async change(
    portalId: string,
    ratePerSec: number,
    level: string,
    factor: string,
  ): Promise<BucketState> {
    for (;;) {
      const rows = await this.db.query<BucketState>(
        `WITH d AS (
           SELECT GREATEST(0, level - GREATEST(0, ${DB_NOW_MS} - updated_at) / 1000 * $2 * rate_factor) AS level,
                  rate_factor AS factor, GREATEST(updated_at, ${DB_NOW_MS}) AS ms
           FROM portal_budget WHERE portal_id = $1 FOR UPDATE
         )
         UPDATE portal_budget SET level = ${level}, rate_factor = ${factor}, updated_at = d.ms
         FROM d WHERE portal_budget.portal_id = $1
         RETURNING d.level, d.factor`,
        [portalId, ratePerSec],
      );
      if (rows[0]) return rows[0];
      await this.addBuckets([portalId]);
    }
  }
}
