import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { resolve } from 'node:path';
import { AppConfig } from '../config/app-config';
import { CallStore } from './call-store';
import { SqliteCallStore } from './sqlite/sqlite-call-store';

/** `DATABASE_URL` unset: ./data/bridge.sqlite; `sqlite:PATH` relative to the working directory. */
export function createCallStore(config: AppConfig): CallStore {
  const url = config.DATABASE_URL ?? 'sqlite:./data/bridge.sqlite';
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    return new SqliteCallStore(path === ':memory:' ? path : resolve(process.cwd(), path));
  }
  throw new Error(
    'DATABASE_URL: PostgreSQL is not supported by this build yet; use sqlite:PATH or leave it unset',
  );
}

@Global()
@Module({
  providers: [{ provide: CallStore, useFactory: createCallStore, inject: [AppConfig] }],
  exports: [CallStore],
})
export class StoreModule implements OnApplicationShutdown {
  constructor(@Inject(CallStore) private readonly store: CallStore) {}

  /** The store closes last, after delivery and intake have stopped. */
  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }
}
