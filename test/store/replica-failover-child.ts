import { openStores } from '../../src/store/store.module';

/**
 * A replica in a child process for test/store/replica-failover.e2e-spec.ts: joins the registry as
 * REPLICA_ID, takes the leases of PORTALS (comma-separated) for LEASE_TTL_MS, prints them on one
 * `READY` line and then idles until it is killed.
 */
async function main(): Promise<void> {
  const replicaId = process.env.REPLICA_ID!;
  const stores = await openStores({
    databaseUrl: process.env.DATABASE_URL!,
    poolSize: 2,
    retentionMs: 0,
    retentionDays: 0,
    portalRetentionMs: 30 * 86_400_000,
  });
  await stores.replicas.join(replicaId);
  const leases = [];
  for (const portal of process.env.PORTALS!.split(',')) {
    leases.push(await stores.leases.acquireLease(portal, replicaId, Number(process.env.LEASE_TTL_MS)));
  }
  process.stdout.write(`READY ${JSON.stringify(leases)}\n`);
  setInterval(() => undefined, 60_000);
}

main().catch((error: Error) => {
  process.stderr.write(`replica child failed: ${error.message}\n`);
  process.exit(1);
});
