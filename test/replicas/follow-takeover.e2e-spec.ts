import axios from 'axios';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxPortal, SandboxTenant } from '../../sandbox';
import { AmiDouble } from '../support/ami-double';
import { ADMIN_TOKEN, eventually, testEnv } from '../support/bridge-harness';
import { BridgeProcess, startBridgeProcess } from '../support/bridge-process';
import {
  FollowedPortal,
  killTheFollower,
  settledOn,
  TakeoverOutcome,
  theFollower,
} from '../support/follow-takeover';
import { dropSchema, fleetEnv, seedPortals, startFleet, stopFleet } from '../support/multi-fleet';
import { postgresUrlForSchema, TEST_SCHEMA_PREFIX } from '../support/test-database';

/**
 * Every outside call of `prefix` on the portal exactly once, finished as answered by its answerer with its
 * talk time (a call live across the kill too: the survivor reads its answer time from the store).
 */
function expectEachOnce(portal: FollowedPortal, prefix: string, outcome: TakeoverOutcome): void {
  const mine = portal.calls().filter((call) => call.PHONE_NUMBER.startsWith(prefix));
  expect(mine).toHaveLength(outcome.calls);
  expect(new Set(mine.map((call) => call.PHONE_NUMBER)).size).toBe(outcome.calls);
  for (const call of mine) {
    expect({ number: call.PHONE_NUMBER, ...call.finished }).toMatchObject({
      number: call.PHONE_NUMBER,
      STATUS_CODE: '200',
      ...outcome.finishedBy.get(call.PHONE_NUMBER),
    });
  }
}

async function allFinished(portal: FollowedPortal, prefix: string, count: number): Promise<void> {
  // Not met in time: the assertions after this say what is missing.
  await eventually(() => {
    const mine = portal.calls().filter((call) => call.PHONE_NUMBER.startsWith(prefix));
    return Promise.resolve(mine.filter((call) => call.finished).length >= count ? true : undefined);
  }, 90_000).catch(() => undefined);
  // Bounded observation: a duplicate delivered late would show now; nothing marks that none is coming.
  await new Promise((resolve) => setTimeout(resolve, 1500));
}

/**
 * docs/API.md: one replica follows a PBX at a time and a survivor takes over after a kill -9. Three replicas
 * (dist/main.js child processes) on one PostgreSQL database follow one AMI double; the replica following it
 * is killed with SIGKILL while calls ring and talk. The double sees a survivor log in; calls live across the
 * kill are ended by the survivor (resynced with CoreShowChannels) and every outside call reaches the portal
 * exactly once. The time from the kill to the new login and to the next call is printed (the bench measures
 * it over ten runs), not asserted tightly.
 */
describe('PBX following survives a kill -9 of the following replica', () => {
  let pbx: AmiDouble;
  let sandbox: SandboxPortal;
  let replicas: BridgeProcess[] = [];
  const schema = `${TEST_SCHEMA_PREFIX}follow_${randomBytes(4).toString('hex')}`;

  beforeEach(async () => {
    pbx = await AmiDouble.start();
    sandbox = await SandboxPortal.start();
  });

  afterEach(async () => {
    await stopFleet(replicas);
    replicas = [];
    await sandbox?.close();
    await pbx?.close();
    await dropSchema(schema);
  });

  it('multi mode: the portal’s delivering replica follows it, a survivor takes over, every call once', async () => {
    const tenant: SandboxTenant = sandbox.addPortal({ name: 'followed' });
    await seedPortals(schema, [tenant]);
    replicas = await startFleet(3, fleetEnv(sandbox, schema, { DELIVERY_MAX_BACKOFF_SEC: '1' }));
    // The fleet's placement first: a portal still moving between replicas takes its PBX along (two logins).
    const owner = await settledOn(replicas, tenant.memberId);
    const patched = await axios.patch(
      `${replicas[0].url}/v1/admin/portals/${tenant.memberId}`,
      { follow: { PBX_EVENTS: 'ami', AMI_URL: pbx.url() } },
      { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } },
    );
    expect(patched.status).toBe(200);
    expect(JSON.stringify(patched.data)).not.toContain('s3cr3t');
    expect(await theFollower(replicas, tenant.memberId)).toBe(owner);
    expect(pbx.logins).toBe(1);

    const outcome = await killTheFollower(pbx, replicas, tenant, '+4915170000', tenant.memberId);
    console.log(JSON.stringify({ mode: 'multi', ...outcome, finishedBy: undefined }));
    await allFinished(tenant, '+4915170000', outcome.calls);
    expectEachOnce(tenant, '+4915170000', outcome);
    // A survivor follows now, and only one.
    await theFollower(replicas, tenant.memberId);
    expect(outcome.killToLoginMs).toBeLessThan(30_000);
    for (const replica of replicas) expect(replica.output()).not.toContain('s3cr3t-ami-pass');
  }, 300_000);

  it('single mode: the replica holding the delivery lease follows, a survivor takes over, every call once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bridge-follow-'));
    try {
      const env = testEnv(sandbox, dir, {
        DATABASE_URL: postgresUrlForSchema(schema),
        PBX_EVENTS: 'ami',
        AMI_URL: pbx.url(),
        DELIVERY_MAX_BACKOFF_SEC: '1',
        LOG_LEVEL: 'warn',
      });
      for (let i = 0; i < 3; i++) replicas.push(await startBridgeProcess(env));
      await theFollower(replicas);
      expect(pbx.logins).toBe(1);

      const outcome = await killTheFollower(pbx, replicas, sandbox, '+4915180000');
      console.log(JSON.stringify({ mode: 'single', ...outcome, finishedBy: undefined }));
      await allFinished(sandbox, '+4915180000', outcome.calls);
      expectEachOnce(sandbox, '+4915180000', outcome);
      await theFollower(replicas);
      expect(outcome.killToLoginMs).toBeLessThan(30_000);
      for (const replica of replicas) expect(replica.output()).not.toContain('s3cr3t-ami-pass');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
