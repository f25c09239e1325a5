import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { resolve } from 'node:path';
import { AppConfig } from '../config/app-config';
import { CallStore } from './call-store';
import { SqliteCallStore } from './sqlite/sqlite-call-store';
import { SqliteDatabase } from './sqlite/sqlite-database';
import { SqliteTokenStore } from './sqlite/sqlite-token-store';
import { TokenStore } from './token-store';

/** The stores of one database engine, sharing its connection. */
export interface Stores {
  calls: CallStore;
  tokens: TokenStore;
}

const STORES = Symbol('Stores');

/** `DATABASE_URL` unset: ./data/bridge.sqlite; `sqlite:PATH` relative to the working directory. */
export function createStores(config: AppConfig): Stores {
  const url = config.DATABASE_URL ?? 'sqlite:./data/bridge.sqlite';
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    const database = new SqliteDatabase(path === ':memory:' ? path : resolve(process.cwd(), path));
    return { calls: new SqliteCallStore(database), tokens: new SqliteTokenStore(database) };
  }
  throw new Error(
    'DATABASE_URL: PostgreSQL is not supported by this build yet; use sqlite:PATH or leave it unset',
  );
}

@Global()
@Module({
  providers: [
    { provide: STORES, useFactory: createStores, inject: [AppConfig] },
    { provide: CallStore, useFactory: (stores: Stores) => stores.calls, inject: [STORES] },
    { provide: TokenStore, useFactory: (stores: Stores) => stores.tokens, inject: [STORES] },
  ],
  exports: [CallStore, TokenStore],
})
export class StoreModule implements OnApplicationShutdown {
  constructor(@Inject(CallStore) private readonly store: CallStore) {}

  /** The store closes last, after delivery and intake have stopped; the call store owns the connection. */
  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }
}
