import { Logger } from '@nestjs/common';
import { randomInt } from 'node:crypto';
import { Client } from 'pg';
import { ReplicaRegistry } from '../coordination-store';
import { PostgresDatabase } from './postgres-database';

/**
 * The first key of every replica's liveness lock, `pg_advisory_lock(REPLICA_LOCK_CLASS, lock_key)`: the
 * two-int4 form, so pg_locks shows it with objsubid 2, classid this class and objid the replica's key.
 */
export const REPLICA_LOCK_CLASS = 72_405_310;

/**
 * SQL: whether the bridge_replicas row `alias` holds its liveness lock now. Keys are chosen in 1..2^31-1,
 * so the int4 key and pg_locks' objid (an unsigned oid) compare as the same number. Locks are per database
 * and schemas share it, so only this schema's rows give the keys meaning.
 */
export function replicaLockHeld(alias: string): string {
  return `EXISTS (SELECT 1 FROM pg_locks k
    WHERE k.locktype = 'advisory' AND k.granted AND k.objsubid = 2
      AND k.database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND k.classid = ${REPLICA_LOCK_CLASS}::oid AND k.objid = ${alias}.lock_key::oid)`;
}

/** A row whose lock has been gone this long is deleted (a replica that will not come back). */
const FORGET_AFTER_MS = 60_000;

export interface ReplicaRegistryOptions {
  /** How often the dedicated connection is asked `SELECT 1`, to notice a connection that died silently. */
  heartbeatMs?: number;
  /** No answer to a heartbeat within this long: the connection is taken for lost. */
  heartbeatTimeoutMs?: number;
  /** Pause between attempts to take the mark again after it was lost. */
  rejoinMs?: number;
}

/**
 * Liveness of replicas sharing one PostgreSQL database (docs/decisions/sharding.md). A joined replica
 * holds a session advisory lock on a dedicated connection (not from the pool) for its whole life; the
 * server releases it the moment that connection's backend ends, which a kill -9 causes at once (the kernel
 * closes the socket). `bridge_replicas` maps replica ids to lock keys, so the others read who is alive from
 * pg_locks, and a lease whose owner's lock is gone can be taken over without waiting for its expiry.
 */
export class PostgresReplicaRegistry extends ReplicaRegistry {
  private readonly logger = new Logger('Replicas');
  private readonly heartbeatMs: number;
  private readonly heartbeatTimeoutMs: number;
  private readonly rejoinMs: number;
  private replicaId?: string;
  private lockKey?: number;
  private client?: Client;
  private heartbeat?: NodeJS.Timeout;
  private heartbeatInFlight = false;
  private rejoining?: Promise<void>;
  private readonly listeners = new Set<(held: boolean) => void>();
  /** When this process first saw each dead row (`id/key`), for the housekeeping delete. */
  private readonly deadSince = new Map<string, number>();

  constructor(
    private readonly db: PostgresDatabase,
    options: ReplicaRegistryOptions = {},
  ) {
    super();
    this.heartbeatMs = options.heartbeatMs ?? 2000;
    this.heartbeatTimeoutMs = options.heartbeatTimeoutMs ?? 5000;
    this.rejoinMs = options.rejoinMs ?? 1000;
  }

  async join(replicaId: string): Promise<void> {
    if (this.replicaId !== undefined) throw new Error(`already joined as ${this.replicaId}`);
    this.replicaId = replicaId;
    try {
      await this.takeMark(replicaId);
    } catch (error) {
      this.replicaId = undefined;
      throw error;
    }
  }

  async liveReplicas(): Promise<string[]> {
    const rows = await this.db.query<{ replica_id: string; lock_key: number; live: boolean }>(
      `SELECT r.replica_id, r.lock_key, ${replicaLockHeld('r')} AS live FROM bridge_replicas r`,
    );
    await this.forgetDead(rows);
    // Sorted here rather than by the database's collation, so every replica sorts alike.
    return rows
      .filter((row) => row.live)
      .map((row) => row.replica_id)
      .sort();
  }

  async leave(): Promise<void> {
    this.replicaId = undefined;
    this.stopHeartbeat();
    const client = this.client;
    const key = this.lockKey;
    this.client = undefined;
    await this.rejoining;
    if (!client) return;
    // Unlocked before the connection ends: the backend may take a moment to exit after the socket closes.
    await client.query('SELECT pg_advisory_unlock($1, $2)', [REPLICA_LOCK_CLASS, key]).catch(() => undefined);
    await client.end().catch(() => undefined);
  }

  holdsMark(): boolean {
    return this.client !== undefined;
  }

  onMarkChange(listener: (held: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Opens the dedicated connection, registers a lock key for `replicaId` (a fresh one when another replica
   * has it) and takes the lock, both in one transaction: a key this process holds never names another
   * replica's row, and no other replica sees the row before its lock is held.
   */
  private async takeMark(replicaId: string): Promise<void> {
    await this.db.open();
    const client = this.db.dedicatedClient();
    client.on('error', (error) => this.markLost(client, error.message));
    client.on('end', () => this.markLost(client, 'the connection closed'));
    try {
      await client.connect();
      // The server's side of the keepalive: a replica whose host vanished loses its lock in tens of
      // seconds rather than at the kernel's two-hour default. Best effort (ignored on a Unix socket).
      await client
        .query(
          'SET tcp_keepalives_idle = 10; SET tcp_keepalives_interval = 5; SET tcp_keepalives_count = 3; SET tcp_user_timeout = 15000',
        )
        .catch(() => undefined);
      for (let attempt = 0; ; attempt++) {
        if (attempt >= 20) throw new Error('no free replica lock key after 20 attempts');
        const key = attempt === 0 && this.lockKey !== undefined ? this.lockKey : randomInt(1, 2 ** 31);
        // Row and lock in one transaction: the others see the row only once its lock is held, so a replica
        // joining is never read as a dead one whose lease may be taken (a lease it holds from before the
        // join would otherwise change hands in that gap, and two replicas would both deliver a moment).
        await client.query('BEGIN');
        try {
          await client.query(
            `INSERT INTO bridge_replicas (replica_id, lock_key, joined_at) VALUES ($1, $2, $3)
             ON CONFLICT (replica_id) DO UPDATE SET lock_key = excluded.lock_key, joined_at = excluded.joined_at`,
            [replicaId, key, Date.now()],
          );
        } catch (error) {
          await client.query('ROLLBACK');
          // Another replica's row has this key: draw another.
          if ((error as { code?: string }).code === '23505') continue;
          throw error;
        }
        // A session lock: it outlives the transaction and ends with the connection.
        const taken = await client.query<{ taken: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS taken', [
          REPLICA_LOCK_CLASS,
          key,
        ]);
        // Held by another session: a replica of another schema, or our own old session not yet ended.
        if (!taken.rows[0].taken) {
          await client.query('ROLLBACK');
          continue;
        }
        await client.query('COMMIT');
        this.lockKey = key;
        break;
      }
    } catch (error) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.replicaId !== replicaId) {
      // Left meanwhile.
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.heartbeat = setInterval(() => void this.beat(client), this.heartbeatMs);
    this.heartbeat.unref();
  }

  /** Asks the dedicated connection for an answer: a connection that died silently is noticed here. */
  private async beat(client: Client): Promise<void> {
    if (this.heartbeatInFlight || this.client !== client) return;
    this.heartbeatInFlight = true;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        client.query('SELECT 1'),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error('no answer to the heartbeat')), this.heartbeatTimeoutMs);
        }),
      ]);
    } catch (error) {
      this.markLost(client, (error as Error).message);
    } finally {
      clearTimeout(timer);
      this.heartbeatInFlight = false;
    }
  }

  /** The dedicated connection is gone: this replica counts as dead until it takes a mark again. */
  private markLost(client: Client, reason: string): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.stopHeartbeat();
    client.removeAllListeners('end');
    void client.end().catch(() => undefined);
    // pg's messages name host and port at most, never the URL with its password.
    this.logger.warn(
      `lost the replica liveness connection (${reason}): this replica takes no portals until it is back`,
    );
    this.emit(false);
    this.rejoining ??= this.rejoin().finally(() => (this.rejoining = undefined));
  }

  private async rejoin(): Promise<void> {
    while (this.replicaId !== undefined && !this.client) {
      await new Promise((resolve) => setTimeout(resolve, this.rejoinMs).unref());
      const replicaId = this.replicaId;
      if (replicaId === undefined) return;
      try {
        await this.takeMark(replicaId);
      } catch {
        // Still unreachable: the loss was logged once; try again.
        continue;
      }
      if (this.client) {
        this.logger.log('replica liveness connection back');
        this.emit(true);
      }
    }
  }

  private emit(held: boolean): void {
    for (const listener of this.listeners) listener(held);
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }

  /** Housekeeping: rows whose lock this process has seen gone for a minute are deleted (if still gone). */
  private async forgetDead(rows: { replica_id: string; lock_key: number; live: boolean }[]): Promise<void> {
    const now = Date.now();
    const dead = new Set<string>();
    for (const row of rows) {
      if (row.live) continue;
      const key = `${row.replica_id}/${row.lock_key}`;
      dead.add(key);
      const since = this.deadSince.get(key);
      if (since === undefined) {
        this.deadSince.set(key, now);
      } else if (now - since > FORGET_AFTER_MS) {
        this.deadSince.delete(key);
        await this.db.query(
          `DELETE FROM bridge_replicas r WHERE r.replica_id = $1 AND r.lock_key = $2 AND NOT ${replicaLockHeld('r')}`,
          [row.replica_id, row.lock_key],
        );
      }
    }
    for (const key of this.deadSince.keys()) if (!dead.has(key)) this.deadSince.delete(key);
  }
}
