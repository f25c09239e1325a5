import { SqlLeaseStore } from '../sql-lease-store';
import { SqliteDatabase } from './sqlite-database';

/** Delivery leases in the SQLite file: several processes on one file still deliver each portal once. */
export class SqliteLeaseStore extends SqlLeaseStore {
  /** `now`: the host's clock, the same for every process on the file (specs hand in their own). */
  constructor(database: SqliteDatabase, now: () => number = Date.now) {
    super(database, {
      clock: now,
      pairs: (held) => (q) =>
        `SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]')
         FROM json_each(${q.value(JSON.stringify(held.map((lease) => [lease.portalId, lease.epoch])))})`,
    });
  }
}
