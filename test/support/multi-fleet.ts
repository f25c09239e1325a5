import axios from 'axios';
import { createHash } from 'node:crypto';
import { Client } from 'pg';
import { SandboxPortal, SandboxTenant } from '../../sandbox';
import { openStores } from '../../src/store/store.module';
import { ADMIN_TOKEN } from './bridge-harness';
import { multiEnvOn } from './multi-harness';
import { BridgeProcess, startBridgeProcess } from './bridge-process';
import { postgresUrlForSchema, TEST_POSTGRES_URL } from './test-database';

/** The PBX token of tenant `index` in a fleet (seeded as its SHA-256, as the admin API stores it). */
export const fleetToken = (index: number) => `pbx-fleet-${index}-0123456789abcdef`;

/** The environment of a `B24_APP_MODE=multi` replica against `sandbox` (its root is the OAuth server). */
export function fleetEnv(sandbox: SandboxPortal, schema: string, env: Record<string, string> = {}) {
  // Child processes on a busy machine: a longer portal timeout, and warnings in their output.
  return multiEnvOn(sandbox, postgresUrlForSchema(schema), {
    B24_TIMEOUT_MS: '5000',
    LOG_LEVEL: 'warn',
    ...env,
  });
}

/**
 * Installs `tenants` straight into the store of `schema` (migrating it): what a verified install stores
 * (the portal record, a pair the sandbox issued, its application token) and one PBX token each. Installing
 * a thousand portals through /oauth/install would take minutes at its per-address limit; the install path
 * itself is tested in test/portals/.
 */
export async function seedPortals(schema: string, tenants: SandboxTenant[]): Promise<void> {
  const stores = await openStores({
    databaseUrl: postgresUrlForSchema(schema),
    poolSize: 4,
    retentionMs: 86_400_000,
    retentionDays: 1,
    portalRetentionMs: 86_400_000,
  });
  try {
    for (const [index, tenant] of tenants.entries()) {
      const pair = tenant.issueTokens();
      if (!pair) throw new Error(`tenant ${tenant.memberId} has no application`);
      const now = Date.now();
      await stores.portals.saveInstall({
        portalId: tenant.memberId,
        domain: tenant.domain,
        clientEndpoint: tenant.restUrl,
        now,
        grant: {
          portalId: tenant.memberId,
          memberId: tenant.memberId,
          domain: tenant.domain,
          clientEndpoint: tenant.restUrl,
          accessToken: pair.access_token,
          refreshToken: pair.refresh_token,
          accessExpiresAt: now + pair.expires_in * 1000,
          obtainedAt: now,
          applicationToken: `app-${tenant.memberId}`,
        },
      });
      await stores.portals.addPbxToken({
        id: `fleet-${index}`,
        portalId: tenant.memberId,
        digest: createHash('sha256').update(fleetToken(index)).digest('hex'),
        createdAt: now,
      });
    }
  } finally {
    await stores.calls.close();
  }
}

/** Starts `count` replicas one after another (the first migrates, the others find the schema ready). */
export async function startFleet(count: number, env: Record<string, string>): Promise<BridgeProcess[]> {
  const replicas: BridgeProcess[] = [];
  for (let i = 0; i < count; i++) replicas.push(await startBridgeProcess(env));
  return replicas;
}

/** A replica's many-portal readiness details (`details.portals`). */
export async function fleetDetails(replica: BridgeProcess): Promise<{
  replicaId: string;
  portals: number;
  /** Portals whose services are built now (the others are idle: PORTAL_IDLE_SEC). */
  runtimes: number;
  deliveringHere: number;
  queueDepth: number;
}> {
  const { data } = await axios.get(`${replica.url}/health/ready`, {
    // Per-portal details are for the operator only (issue 26).
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
    validateStatus: () => true,
    timeout: 5000,
  });
  return data.details?.portals ?? data.info?.portals;
}

/** `replica`'s admin view of one portal (`GET /v1/admin/portals/:portalId`). */
export async function portalViewOn(
  replica: BridgeProcess,
  portalId: string,
): Promise<{ deliveringHere?: boolean; follow?: { followingHere: boolean; connected: boolean }[] }> {
  const { data } = await axios.get(`${replica.url}/v1/admin/portals/${portalId}`, {
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
    timeout: 5000,
  });
  return data;
}

/** Which portals `replica` delivers now (its admin view of each). */
export async function portalsDeliveredBy(
  replica: BridgeProcess,
  tenants: SandboxTenant[],
): Promise<string[]> {
  const mine: string[] = [];
  for (const tenant of tenants) {
    if ((await portalViewOn(replica, tenant.memberId)).deliveringHere) mine.push(tenant.memberId);
  }
  return mine;
}

export const isAlive = (replica: BridgeProcess) =>
  replica.child.exitCode === null && replica.child.signalCode === null && !replica.child.killed;

/** How long a replica may take to stop on SIGTERM in a fleet's teardown before it is killed. */
const STOP_GRACE_MS = 30_000;

/**
 * Stops every live replica (SIGTERM, all at once). One still running after STOP_GRACE_MS is killed and
 * its output's tail printed: a teardown, not the shutdown's own test (test/operations/shutdown-and-logs), must not
 * hang a suite on it (seen after a kill -9 of a peer, on main before and after issue 29's changes).
 */
export async function stopFleet(replicas: BridgeProcess[]): Promise<void> {
  await Promise.all(
    replicas.filter(isAlive).map(async (replica) => {
      replica.child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const late = await Promise.race([
        replica.exited.then(() => false),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), STOP_GRACE_MS))),
      ]);
      clearTimeout(timer);
      if (!late) return;
      console.warn(
        `replica ${replica.url} still running ${STOP_GRACE_MS} ms after SIGTERM: killed\n${replica.output().slice(-3000)}`,
      );
      replica.child.kill('SIGKILL');
      await replica.exited;
    }),
  );
}

export async function dropSchema(schema: string): Promise<void> {
  const client = new Client({ connectionString: TEST_POSTGRES_URL });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS ${client.escapeIdentifier(schema)} CASCADE`);
  await client.end();
}

/** Connections of this database in use (every replica's pool, listener and liveness connection). */
export async function postgresBackends(): Promise<number> {
  const client = new Client({ connectionString: TEST_POSTGRES_URL });
  await client.connect();
  const { rows } = await client.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database()',
  );
  await client.end();
  return rows[0].n - 1;
}
