import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { resolve } from 'node:path';
import { AppConfig } from '../config/app-config';
import { RecordingSettings, StoreSettings, storeSettingsOf } from '../config/settings';
import { BridgeMetrics } from '../metrics/bridge-metrics';
import { CallRetention } from './call-retention';
import { CallStore } from './call-store';
import { LeaseStore, ReplicaRegistry, SharedBucketStore } from './coordination-store';
import { LocalReplicaRegistry } from './local-replica-registry';
import { PostgresReplicaRegistry } from './postgres/postgres-replica-registry';
import { PostgresCallStore } from './postgres/postgres-call-store';
import { PostgresBucketStore, PostgresLeaseStore } from './postgres/postgres-coordination';
import { DB_CLOCK, PostgresDatabase } from './postgres/postgres-database';
import { SqliteCallStore } from './sqlite/sqlite-call-store';
import { SqliteDatabase } from './sqlite/sqlite-database';
import { SqliteLeaseStore } from './sqlite/sqlite-lease-store';
import { TokenStore } from './token-store';
import { DialStore, SqlDialStore } from './dial-store';
import { PortalEventStore } from './portal-event-store';
import { SqlitePortalEventStore } from './sqlite/sqlite-portal-event-store';
import { PostgresPortalEventStore } from './postgres/postgres-portal-event-store';
import { PortalStore } from './portal-store';
import { SqlPortalStore } from './sql-portal-store';
import { SqlTokenStore } from './sql-token-store';
import { PostgresPortalStore } from './postgres/postgres-portal-store';
import { FollowPositionStore, SqlFollowPositionStore } from './follow-position-store';
import { LineStore, SqlLineStore } from './line-store';

/** The stores of one database engine, sharing its connection. */
export interface Stores {
  calls: CallStore;
  tokens: TokenStore;
  leases: LeaseStore;
  /** Which replicas are alive, for sharding portals over them (one process on SQLite: itself). */
  replicas: ReplicaRegistry;
  dials: DialStore;
  /** The portal's event posts (docs/API.md). */
  events: PortalEventStore;
  /** The installed portals and their PBX tokens (docs/API.md). */
  portals: PortalStore;
  /** Ledger positions of the followed PBX (docs/API.md). */
  followPositions: FollowPositionStore;
  /** The lines added to each portal's own list (docs/API.md "Lines"). */
  lines: LineStore;
  /** Only where replicas can share the database (PostgreSQL); one SQLite process keeps its bucket in memory. */
  bucket?: SharedBucketStore;
}

const STORES = Symbol('Stores');

/** The stores for a whole configuration: for specs and tools that hold one rather than the store's view. */
export function createStores(config: AppConfig): Promise<Stores> {
  return openStores(storeSettingsOf(config));
}

/**
 * `sqlite:PATH`, relative to the working directory (DATABASE_URL unset: ./data/bridge.sqlite);
 * `postgres://…`: PostgreSQL, connected and migrated before the application starts.
 */
export async function openStores(settings: StoreSettings): Promise<Stores> {
  const url = settings.databaseUrl;
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    const database = new SqliteDatabase(path === ':memory:' ? path : resolve(process.cwd(), path));
    return {
      calls: new SqliteCallStore(database),
      tokens: new SqlTokenStore(database),
      leases: new SqliteLeaseStore(database),
      replicas: new LocalReplicaRegistry(),
      dials: new SqlDialStore(database),
      events: new SqlitePortalEventStore(database),
      portals: new SqlPortalStore(database),
      followPositions: new SqlFollowPositionStore(database),
      lines: new SqlLineStore(database),
    };
  }
  const database = new PostgresDatabase(url, settings.poolSize);
  try {
    await database.open();
  } catch (error) {
    await database.close().catch(() => undefined);
    // The URL carries the password: name the variable, never echo it.
    throw new Error(`DATABASE_URL: cannot open the PostgreSQL database: ${(error as Error).message}`);
  }
  return {
    calls: new PostgresCallStore(database),
    tokens: new SqlTokenStore(database, DB_CLOCK),
    leases: new PostgresLeaseStore(database),
    replicas: new PostgresReplicaRegistry(database),
    dials: new SqlDialStore(database),
    events: new PostgresPortalEventStore(database),
    portals: new PostgresPortalStore(database),
    followPositions: new SqlFollowPositionStore(database),
    lines: new SqlLineStore(database),
    bucket: new PostgresBucketStore(database),
  };
}

@Global()
@Module({
  providers: [
    { provide: STORES, useFactory: openStores, inject: [StoreSettings] },
    { provide: CallStore, useFactory: (stores: Stores) => stores.calls, inject: [STORES] },
    { provide: TokenStore, useFactory: (stores: Stores) => stores.tokens, inject: [STORES] },
    { provide: LeaseStore, useFactory: (stores: Stores) => stores.leases, inject: [STORES] },
    { provide: ReplicaRegistry, useFactory: (stores: Stores) => stores.replicas, inject: [STORES] },
    { provide: DialStore, useFactory: (stores: Stores) => stores.dials, inject: [STORES] },
    { provide: PortalEventStore, useFactory: (stores: Stores) => stores.events, inject: [STORES] },
    { provide: PortalStore, useFactory: (stores: Stores) => stores.portals, inject: [STORES] },
    {
      provide: FollowPositionStore,
      useFactory: (stores: Stores) => stores.followPositions,
      inject: [STORES],
    },
    { provide: LineStore, useFactory: (stores: Stores) => stores.lines, inject: [STORES] },
    { provide: SharedBucketStore, useFactory: (stores: Stores) => stores.bucket ?? null, inject: [STORES] },
    {
      provide: CallRetention,
      useFactory: (
        stores: Stores,
        settings: StoreSettings,
        metrics: BridgeMetrics,
        recordings?: RecordingSettings,
      ) => new CallRetention(stores, settings, metrics, recordings),
      inject: [STORES, StoreSettings, BridgeMetrics, { token: RecordingSettings, optional: true }],
    },
  ],
  exports: [
    CallStore,
    TokenStore,
    LeaseStore,
    ReplicaRegistry,
    PortalEventStore,
    PortalStore,
    SharedBucketStore,
    DialStore,
    FollowPositionStore,
    LineStore,
  ],
})
export class StoreModule implements OnApplicationShutdown {
  constructor(
    @Inject(CallStore) private readonly store: CallStore,
    @Inject(ReplicaRegistry) private readonly replicas: ReplicaRegistry,
  ) {}

  /**
   * The store closes last, after delivery and intake have stopped; the call store owns the connection.
   * The replica's liveness mark goes with it (its own connection), if nothing gave it up before.
   */
  async onApplicationShutdown(): Promise<void> {
    await this.replicas.leave();
    await this.store.close();
  }
}
