import axios from 'axios';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { SandboxPortal } from '../../sandbox';
import { eventually, PBX_TOKEN, testEnv } from '../support/bridge-harness';
import { BridgeProcess, deliveringHere, startBridgeProcess } from '../support/bridge-process';
import { sandboxCalls } from '../support/sandbox-inspect';
import { postgresUrlForSchema, TEST_POSTGRES_URL, TEST_SCHEMA_PREFIX } from '../support/test-database';

/** Far longer than any takeover should take: a survivor that waits for the lease to expire fails the test. */
const LEASE_SEC = 60;
const CALLS = 300;

/**
 * Issue 26 finding 5: one portal (webhook mode), three replicas (real child processes) on one PostgreSQL
 * database, calls flowing; the delivering replica is killed with SIGKILL. A survivor takes its lease over
 * through the replica registry's liveness locks (as multi mode does), long before the lease could expire,
 * and every call reaches the portal exactly once.
 */
describe('single portal, three replicas: the deliverer killed with -9', () => {
  let sandbox: SandboxPortal;
  let dir: string;
  const schema = `${TEST_SCHEMA_PREFIX}single_failover_${randomBytes(4).toString('hex')}`;
  const replicas: BridgeProcess[] = [];
  const alive = () => replicas.filter((replica) => replica.child.exitCode === null && !replica.child.killed);

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    dir = mkdtempSync(join(tmpdir(), 'bridge-single-failover-'));
    const env = testEnv(sandbox, dir, {
      DATABASE_URL: postgresUrlForSchema(schema),
      DELIVERY_LEASE_SEC: String(LEASE_SEC),
      LOG_LEVEL: 'warn',
    });
    for (let i = 0; i < 3; i++) replicas.push(await startBridgeProcess(env));
  });

  afterAll(async () => {
    for (const replica of replicas) {
      if (replica.child.exitCode === null && replica.child.signalCode === null) {
        replica.child.kill('SIGTERM');
        await replica.exited;
      }
    }
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
    const client = new Client({ connectionString: TEST_POSTGRES_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${client.escapeIdentifier(schema)} CASCADE`);
    await client.end();
  });

  it('a survivor delivers long before the lease expires, and every call reaches the portal once', async () => {
    const holders = await eventually(async () => {
      const held = await Promise.all(replicas.map(deliveringHere));
      return held.filter(Boolean).length === 1 ? held : undefined;
    });
    const victim = replicas[holders.indexOf(true)];

    let next = 0;
    /** A PBX behind a load balancer: round-robin over the live replicas, retrying one that died. */
    async function post(index: number, attempt = 0): Promise<void> {
      const targets = alive();
      const replica = targets[(next++ + attempt) % targets.length];
      const callId = `sf-${index}`;
      try {
        const response = await axios.post(
          `${replica.url}/v1/calls/events`,
          [
            {
              event: 'call.started',
              callId,
              direction: 'inbound',
              phoneNumber: `+49151${String(3000000 + index)}`,
              extension: '101',
              at: '2026-11-22T10:00:00+01:00',
            },
            {
              event: 'call.ended',
              callId,
              at: '2026-11-22T10:01:00+01:00',
              durationSec: 60,
              status: 'answered',
            },
          ],
          { headers: { Authorization: `Bearer ${PBX_TOKEN}` } },
        );
        expect(response.status).toBe(202);
      } catch (error) {
        if (attempt > 5 || !axios.isAxiosError(error) || error.response) throw error;
        await post(index, attempt + 1);
      }
    }

    let killedAt = 0;
    let takeoverMs = 0;
    for (let index = 0; index < CALLS; index++) {
      await post(index);
      if (index === 100) {
        // Calls are reaching the portal through the victim: kill it mid-flow.
        await eventually(async () => ((await sandboxCalls(sandbox)).length >= 50 ? true : undefined));
        killedAt = Date.now();
        victim.child.kill('SIGKILL');
        await victim.exited;
        await eventually(
          async () => (await Promise.all(alive().map(deliveringHere))).some(Boolean) || undefined,
          LEASE_SEC * 1000,
        );
        takeoverMs = Date.now() - killedAt;
      }
    }

    const delivered = await eventually(async () => {
      const mine = (await sandboxCalls(sandbox)).filter((call) => call.EXTERNAL_CALL_ID?.startsWith('sf-'));
      return mine.filter((call) => call.finished).length >= CALLS ? mine : undefined;
    }, 120_000);

    // Exactly once: one portal call per PBX call, each finished as posted.
    expect(new Set(delivered.map((call) => call.EXTERNAL_CALL_ID)).size).toBe(CALLS);
    expect(delivered).toHaveLength(CALLS);
    expect(delivered.every((call) => call.finished?.STATUS_CODE === '200')).toBe(true);

    // A survivor delivers: exactly one of the two.
    const survivors = alive();
    expect(survivors).toHaveLength(2);
    expect((await Promise.all(survivors.map(deliveringHere))).filter(Boolean)).toHaveLength(1);
    // Calls posted after the kill reached the portal through a survivor.
    const late = delivered.filter((call) => Number(call.EXTERNAL_CALL_ID!.slice(3)) > 100);
    expect(late.length).toBe(CALLS - 101);

    // The takeover did not wait for the 60 s lease: a loose bound (the measured figure is in the bench).
    expect(takeoverMs).toBeLessThan((LEASE_SEC * 1000) / 2);
    process.stdout.write(`single-mode failover: a survivor delivering ${takeoverMs} ms after the kill\n`);
  }, 180_000);
});
