import { openStores, Stores } from '../../../src/store/store.module';
import { TestEngine } from '../../support/test-database';

/** The stores of `engine`'s database, as the bridge opens them (migrated on open). */
export function openEngine(engine: TestEngine): Promise<Stores> {
  return openStores({
    ...engine.settings(),
    retentionMs: 1,
    retentionDays: 1,
    portalRetentionMs: 86_400_000,
  });
}

/** Opens the stores once for each test and closes them and drops the database after it. */
export function storesPerTest(engineOf: () => TestEngine): {
  stores: () => Stores;
  engine: () => TestEngine;
} {
  let engine: TestEngine;
  let stores: Stores;
  beforeEach(async () => {
    engine = engineOf();
    stores = await openEngine(engine);
  });
  afterEach(async () => {
    await stores.replicas.leave();
    await stores.calls.close();
    await engine.drop();
  });
  return { stores: () => stores, engine: () => engine };
}
