import axios from 'axios';
import { randomBytes } from 'node:crypto';
import { SandboxPortal, SandboxTenant } from '../../sandbox';
import { ADMIN_TOKEN, eventually } from '../support/bridge-harness';
import { BridgeProcess } from '../support/bridge-process';
import {
  dropSchema,
  fleetDetails,
  fleetEnv,
  isAlive,
  portalsDeliveredBy,
  startFleet,
  stopFleet,
} from '../support/multi-fleet';
import { TEST_SCHEMA_PREFIX } from '../support/test-database';

const PORTALS = 50;
const CALLS_PER_PORTAL = 100;
/** Small buckets (0.5/s, burst 2), so every portal's drain lasts long past the kill. */
const RATE = 0.5;
const BURST = 2;

/**
 * docs/API.md, sharding: three replicas (dist/main.js child processes) on one PostgreSQL database serve 50
 * portals of one sandbox, installed through /oauth/install. The portals spread evenly; 5 000 calls are
 * posted over all portals and replicas; the replica delivering the most portals is killed with SIGKILL
 * mid-drain. Every call reaches its own portal exactly once, no portal sees a 503, the survivors take
 * the dead replica's portals, and each of those portals hears from the bridge again soon after the kill
 * (printed; `npm run bench` gives its p95 over ten runs).
 */
describe('many portals over three replicas', () => {
  let sandbox: SandboxPortal;
  const schema = `${TEST_SCHEMA_PREFIX}portals_${randomBytes(4).toString('hex')}`;
  let replicas: BridgeProcess[] = [];
  let tenants: SandboxTenant[] = [];
  const tokens = new Map<string, string>();

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    tenants = Array.from({ length: PORTALS }, (_, i) =>
      // One request of room over the bridge's budget: units are counted on the database's clock when taken,
      // the portal counts arrivals, and with a burst of 2 one request delayed on a loaded machine and the
      // next on time arrive closer than they were taken (1 portal in 50 got one 503 that way, before and
      // after issue 29's changes, on quiet and loaded runs alike).
      sandbox.addPortal({ name: `p${i}`, rateLimitRps: RATE, rateBurst: BURST + 1 }),
    );
    replicas = await startFleet(
      3,
      fleetEnv(sandbox, schema, { B24_RATE_LIMIT_RPS: String(RATE), B24_RATE_BURST: String(BURST) }),
    );
    for (const [i, tenant] of tenants.entries()) {
      const replica = replicas[i % replicas.length];
      const outcome = await tenant.installApp(`${replica.url}/oauth/install`);
      expect(outcome?.status).toBe(200);
      const { data } = await axios.post(
        `${replica.url}/v1/admin/portals/${tenant.memberId}/pbx-tokens`,
        {},
        { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } },
      );
      tokens.set(tenant.memberId, data.token as string);
    }
  }, 120_000);

  afterAll(async () => {
    await stopFleet(replicas);
    await sandbox?.close();
    await dropSchema(schema);
  });

  it('spreads the portals evenly, survives a kill -9 of the busiest replica, and delivers every call exactly once', async () => {
    // Even within 20 %: 50 over 3 is 16.7 each.
    const spread = await eventually(async () => {
      const details = await Promise.all(replicas.map(fleetDetails));
      const counts = details.map((detail) => detail?.deliveringHere ?? 0);
      return counts.reduce((sum, n) => sum + n, 0) === PORTALS && details.every((d) => d.portals === PORTALS)
        ? counts
        : undefined;
    }, 30_000);
    for (const count of spread) {
      expect(Math.abs(count - PORTALS / 3)).toBeLessThanOrEqual((PORTALS / 3) * 0.2);
    }

    const victimIndex = spread.indexOf(Math.max(...spread));
    const victim = replicas[victimIndex];
    const victimPortals = await portalsDeliveredBy(victim, tenants);
    expect(victimPortals).toHaveLength(spread[victimIndex]);

    let next = 0;
    async function post(tenant: SandboxTenant, body: unknown, attempt = 0): Promise<void> {
      const alive = replicas.filter(isAlive);
      const replica = alive[(next++ + attempt) % alive.length];
      try {
        const response = await axios.post(`${replica.url}/v1/calls/events`, body, {
          headers: { Authorization: `Bearer ${tokens.get(tenant.memberId)}` },
        });
        expect(response.status).toBe(202);
      } catch (error) {
        if (attempt > 5 || !axios.isAxiosError(error) || error.response) throw error;
        await post(tenant, body, attempt + 1);
      }
    }
    const bodyOf = (tenant: number, from: number) =>
      Array.from({ length: 10 }, (_, k) => {
        const callId = `mp-${tenant}-${from + k}`;
        return [
          {
            event: 'call.started',
            callId,
            direction: 'inbound',
            phoneNumber: `+49151${String(3000000 + tenant * 1000 + from + k)}`,
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
        ];
      }).flat();

    let killedAt = 0;
    let takeoverMs = 0;
    for (let from = 0; from < CALLS_PER_PORTAL; from += 10) {
      await Promise.all(tenants.map((tenant, t) => post(tenant, bodyOf(t, from))));
      if (from === 40) {
        victim.child.kill('SIGKILL');
        await victim.exited;
        killedAt = Date.now();
        // The survivors hold every portal's lease again (seen through their readiness details).
        const survivors = replicas.filter(isAlive);
        await eventually(async () => {
          const counts = (await Promise.all(survivors.map(fleetDetails))).map((d) => d.deliveringHere);
          return counts[0] + counts[1] === PORTALS ? counts : undefined;
        }, 30_000);
        takeoverMs = Date.now() - killedAt;
      }
    }
    expect(replicas.filter(isAlive)).toHaveLength(2);
    const resumedMs = await eventually(async () => {
      const gaps = victimPortals.map((memberId) => {
        const first = sandbox
          .portal(memberId)
          ?.requests()
          .find((entry) => entry.at > killedAt);
        return first ? first.at - killedAt : undefined;
      });
      return gaps.every((gap) => gap !== undefined) ? (gaps as number[]).sort((a, b) => a - b) : undefined;
    }, 30_000);
    const p95 = resumedMs[Math.min(resumedMs.length - 1, Math.ceil(resumedMs.length * 0.95) - 1)];
    // The next request also waits for the portal's own budget (0.5/s here): the bench measures failover alone.
    console.log(
      JSON.stringify({
        takeoverMs,
        killToNextRequestMs: { portals: resumedMs.length, p95, max: resumedMs.at(-1) },
      }),
    );
    expect(takeoverMs).toBeLessThanOrEqual(5000);
    expect(resumedMs.at(-1)).toBeLessThanOrEqual(5000);

    // Exactly once, each on its own portal.
    for (const [t, tenant] of tenants.entries()) {
      const calls = await eventually(async () => {
        const mine = tenant.calls().filter((call) => call.EXTERNAL_CALL_ID?.startsWith('mp-'));
        return mine.filter((call) => call.finished).length >= CALLS_PER_PORTAL ? mine : undefined;
      }, 240_000);
      expect(calls).toHaveLength(CALLS_PER_PORTAL);
      expect(new Set(calls.map((call) => call.EXTERNAL_CALL_ID)).size).toBe(CALLS_PER_PORTAL);
      expect(calls.every((call) => call.EXTERNAL_CALL_ID?.startsWith(`mp-${t}-`))).toBe(true);
      // Within its own budget: the portal never answered 503.
      const stats = tenant.stats();
      expect(stats.queryLimitExceeded).toBe(0);
      expect(stats.byStatus['503'] ?? 0).toBe(0);
    }

    // A new replica takes its share within 10 s (the others hand their portals over as their batches settle).
    const [fresh] = await startFleet(
      1,
      fleetEnv(sandbox, schema, { B24_RATE_LIMIT_RPS: String(RATE), B24_RATE_BURST: String(BURST) }),
    );
    replicas.push(fresh);
    const joinedAt = Date.now();
    const shares = await eventually(async () => {
      const details = await Promise.all(replicas.filter(isAlive).map(fleetDetails));
      const counts = details.map((detail) => detail.deliveringHere);
      const even = PORTALS / counts.length;
      return counts.reduce((sum, n) => sum + n, 0) === PORTALS &&
        counts.every((n) => Math.abs(n - even) <= even * 0.2)
        ? counts
        : undefined;
    }, 30_000);
    const shareMs = Date.now() - joinedAt;
    console.log(JSON.stringify({ newReplicaShare: shares, withinMs: shareMs }));
    expect(shareMs).toBeLessThanOrEqual(10_000);
  }, 600_000);
});
