import { ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { applyEvent, newCall } from '../../src/calls/call-lifecycle';
import { CallEvent } from '../../src/calls/call';
import { loadConfig } from '../../src/config/app-config';
import { ShardMap } from '../../src/delivery/shard-map';
import { REPLICA_LOCK_CLASS } from '../../src/store/postgres/postgres-replica-registry';
import { DeliveryLease, LeaseLostError } from '../../src/store/coordination-store';
import { createStores, Stores } from '../../src/store/store.module';
import { eventually } from '../support/bridge-harness';
import { startedEvent } from '../support/call-events';
import { onPostgres, testDatabaseUrl } from '../support/test-database';

const LONG_TTL_MS = 60_000;
const settings = { now: Date.now(), holdEndedWithoutStartMs: 3_600_000 };

interface ReplicaChild {
  child: ChildProcess;
  leases: DeliveryLease[];
  exited: Promise<unknown>;
}

/** A replica in a real child process that joins the registry and takes the portals' leases for 60 s. */
async function startReplicaChild(
  databaseUrl: string,
  replicaId: string,
  portals: string[],
): Promise<ReplicaChild> {
  const root = join(__dirname, '..', '..');
  const child = spawn(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', join(__dirname, 'replica-failover-child.ts')],
    {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? '',
        DATABASE_URL: databaseUrl,
        REPLICA_ID: replicaId,
        PORTALS: portals.join(','),
        LEASE_TTL_MS: String(LONG_TTL_MS),
      },
      stdio: 'pipe',
    },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  let log = '';
  const leases = await new Promise<DeliveryLease[]>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`replica child not ready within 60 s:\n${log}`)), 60_000);
    child.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
    child.stdout?.on('data', (chunk: Buffer) => {
      log += chunk.toString();
      const ready = /^READY (.*)$/m.exec(log);
      if (ready) {
        clearTimeout(timer);
        resolve(JSON.parse(ready[1]) as DeliveryLease[]);
      }
    });
    child.once('exit', () => reject(new Error(`replica child exited:\n${log}`)));
  });
  return { child, leases, exited };
}

/**
 * Failover by liveness (docs/decisions/sharding.md), PostgreSQL only: a replica's advisory lock on its
 * own connection goes the moment its process is killed, so the others see it gone and take its leases over
 * without waiting for them to expire; and two replicas' shard maps agree on who serves which portal.
 */
(onPostgres ? describe : describe.skip)('replica failover by liveness (PostgreSQL)', () => {
  let dir: string;
  let stores: Stores;
  let databaseUrl: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'bridge-failover-'));
    databaseUrl = testDatabaseUrl(dir);
    stores = await createStores(loadConfig({ NODE_ENV: 'test', PBX_TOKENS: 'x', DATABASE_URL: databaseUrl }));
  });
  afterAll(async () => {
    for (const child of children) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    await stores.replicas.leave();
    await stores.calls.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a replica killed with -9 is seen gone and its 60 s leases are taken over at once, fenced', async () => {
    const parentId = `parent-${randomUUID()}`;
    const childId = `child-${randomUUID()}`;
    const portals = ['failover-1', 'failover-2', 'failover-3'];
    await stores.replicas.join(parentId);
    expect(stores.replicas.holdsMark()).toBe(true);

    const replica = await startReplicaChild(databaseUrl, childId, portals);
    children.push(replica.child);
    expect(replica.leases.map((lease) => lease.owner)).toEqual([childId, childId, childId]);
    expect(await stores.replicas.liveReplicas()).toEqual([childId, parentId].sort());

    // While the child lives, its leases are its own: nobody takes them before they expire.
    for (const portal of portals) {
      expect(await stores.leases.acquireLease(portal, parentId, LONG_TTL_MS)).toBeUndefined();
    }
    // A fenced write with the child's lease goes through while it holds it (the child's write, in effect).
    const childLease = replica.leases[0];
    await stores.calls.ingest(
      childLease.portalId,
      [[startedEvent('fenced-call')]],
      (call, event: CallEvent) =>
        applyEvent(call ?? newCall(childLease.portalId, event.callId, Date.now()), event, settings),
    );
    const mark = (note: string) => (call: Parameters<typeof applyEvent>[0]) => ({
      ...call,
      delivery: { ...call.delivery, lastError: note },
    });
    await stores.calls.updateCalls(childLease.portalId, ['fenced-call'], mark('by the child'), childLease);

    const killedAt = Date.now();
    replica.child.kill('SIGKILL');
    await replica.exited;

    const goneAfterMs = await eventually(async () =>
      (await stores.replicas.liveReplicas()).includes(childId) ? undefined : Date.now() - killedAt,
    );
    expect(await stores.replicas.liveReplicas()).toEqual([parentId]);

    const taken = await eventually(async () => {
      const leases = await Promise.all(
        portals.map((portal) => stores.leases.acquireLease(portal, parentId, LONG_TTL_MS)),
      );
      return leases.every(Boolean) ? (leases as DeliveryLease[]) : undefined;
    });
    const takenAfterMs = Date.now() - killedAt;
    process.stdout.write(
      `replica failover: child seen gone ${goneAfterMs} ms and its 3 leases (ttl ${LONG_TTL_MS} ms) taken ${takenAfterMs} ms after kill -9\n`,
    );
    expect(takenAfterMs).toBeLessThan(10_000);
    for (const [i, lease] of taken.entries()) {
      expect(lease).toEqual({ portalId: portals[i], owner: parentId, epoch: replica.leases[i].epoch + 1 });
    }

    // The dead replica's epoch no longer writes: a late write of its is refused and changes nothing.
    await expect(
      stores.calls.updateCalls(childLease.portalId, ['fenced-call'], mark('late, by the child'), childLease),
    ).rejects.toBeInstanceOf(LeaseLostError);
    await stores.calls.updateCalls(childLease.portalId, ['fenced-call'], mark('by the parent'), taken[0]);
    expect((await stores.calls.findCall(childLease.portalId, 'fenced-call'))!.delivery.lastError).toBe(
      'by the parent',
    );
  });

  it('an owner that never registered keeps its lease until it expires, as before', async () => {
    const portal = `unregistered-${Date.now()}`;
    const held = await stores.leases.acquireLease(portal, 'some-owner-never-registered', LONG_TTL_MS);
    expect(held).toMatchObject({ owner: 'some-owner-never-registered', epoch: 1 });
    expect(await stores.leases.acquireLease(portal, 'another-owner', LONG_TTL_MS)).toBeUndefined();
    expect(await stores.leases.acquireLease(portal, 'some-owner-never-registered', LONG_TTL_MS)).toEqual(
      held,
    );
  });

  it('two shard maps agree, split 50 portals 25/25, and the survivor owns all 50 once the other leaves', async () => {
    // A schema of its own, so the replicas of the test above do not count here.
    const url = testDatabaseUrl(dir, 'shards.sqlite');
    const config = loadConfig({ NODE_ENV: 'test', PBX_TOKENS: 'x', DATABASE_URL: url });
    const [a, b] = [await createStores(config), await createStores(config)];
    const portals = Array.from({ length: 50 }, (_, i) => `shard-${i}`);
    const maps = [
      new ShardMap(a.replicas, 'replica-a', async () => portals),
      new ShardMap(b.replicas, 'replica-b', async () => portals),
    ];
    const gainedByB: string[] = [];
    maps[1].onChange((gained) => gainedByB.push(...gained));
    try {
      await Promise.all(maps.map((map) => map.start()));
      await eventually(async () => (maps.every((map) => map.replicas.length === 2) ? true : undefined));
      expect(maps[0].replicas).toEqual(['replica-a', 'replica-b']);
      for (const portal of portals) {
        expect(maps[0].ownerOf(portal)).toBe(maps[1].ownerOf(portal));
        expect(Number(maps[0].owns(portal)) + Number(maps[1].owns(portal))).toBe(1);
      }
      const ownedByA = portals.filter((portal) => maps[0].owns(portal));
      expect(ownedByA).toHaveLength(25);
      expect(portals.filter((portal) => maps[1].owns(portal))).toHaveLength(25);

      // B's liveness connection is cut (as a network failure or a database restart would): B owns nothing
      // at once, A takes all 50 at its next look, and B rejoins and gets its share back.
      const marks: boolean[] = [];
      b.replicas.onMarkChange((held) => marks.push(held));
      const admin = new Client({ connectionString: url });
      await admin.connect();
      try {
        const { rows } = await admin.query<{ pid: number }>(
          `SELECT k.pid FROM pg_locks k JOIN bridge_replicas r ON k.objid = r.lock_key::oid
           WHERE r.replica_id = 'replica-b' AND k.locktype = 'advisory' AND k.objsubid = 2 AND k.granted
             AND k.classid = $1::oid`,
          [REPLICA_LOCK_CLASS],
        );
        expect(rows).toHaveLength(1);
        await admin.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
      } finally {
        await admin.end();
      }
      await eventually(async () => (marks.includes(false) ? true : undefined));
      expect(portals.some((portal) => maps[1].owns(portal))).toBe(false);
      await eventually(async () => (marks.includes(true) ? true : undefined));
      expect(b.replicas.holdsMark()).toBe(true);
      await eventually(async () =>
        portals.filter((portal) => maps[1].owns(portal)).length === 25 && maps[0].replicas.length === 2
          ? true
          : undefined,
      );
      for (const portal of portals) expect(maps[1].owns(portal)).toBe(!ownedByA.includes(portal));

      const stoppedAt = Date.now();
      await maps[0].stop();
      expect(portals.some((portal) => maps[0].owns(portal))).toBe(false);
      await eventually(async () => (portals.every((portal) => maps[1].owns(portal)) ? true : undefined));
      process.stdout.write(
        `shard map: the survivor owned all 50 portals ${Date.now() - stoppedAt} ms after the other left\n`,
      );
      expect(maps[1].replicas).toEqual(['replica-b']);
      // B was told of A's 25 as gained at the end, after its own 25 (twice: at start and after rejoining).
      expect(gainedByB.slice(-25).sort()).toEqual([...ownedByA].sort());
    } finally {
      await Promise.all(maps.map((map) => map.stop()));
      await a.calls.close();
      await b.calls.close();
    }
  });
});
