import axios from 'axios';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CallView, PortalEndpoint, SandboxPortal } from '../../sandbox';
import { AmiDouble } from '../support/ami-double';
import { ADMIN_TOKEN, eventually, PBX_TOKEN, testEnv } from '../support/bridge-harness';
import { BridgeProcess, startBridgeProcess } from '../support/bridge-process';
import { EslDouble } from '../support/esl-double';
import { settledOn, theFollower } from '../support/follow-takeover';
import { dropSchema, fleetEnv, fleetToken, seedPortals, startFleet, stopFleet } from '../support/multi-fleet';
import { postgresUrlForSchema, TEST_SCHEMA_PREFIX } from '../support/test-database';

/** One inbound call on either double: its callId and the handles the scenario plays it with. */
interface PlayedCall {
  callId: string;
  answered: Promise<void>;
  done: Promise<void>;
  hangUp(): void;
  pickUp(): void;
}

/** What the scenario needs of a PBX double, AMI or event socket alike. */
interface ClockedPbx {
  /** The follow settings that point a bridge at it (environment or a portal's `follow`). */
  follow: Record<string, string>;
  logins(): number;
  /** The PBX's clock now (epoch ms), `offsetSec` off the bridge's. */
  nowMs(): number;
  refuse(): Promise<void>;
  accept(): Promise<void>;
  /** An inbound call to `to`, answered there after `talk` seconds of talk on the PBX's clock. */
  play(from: string, to: string, talk: number, hold: 'holdOpen' | 'holdRinging'): PlayedCall;
  close(): Promise<void>;
}

async function amiPbx(offsetSec: number): Promise<ClockedPbx> {
  const pbx = await AmiDouble.start(undefined, undefined, { clockOffsetSec: offsetSec });
  return {
    follow: { PBX_EVENTS: 'ami', AMI_URL: pbx.url() },
    logins: () => pbx.logins,
    nowMs: () => pbx.pbxNow() * 1000,
    refuse: () => pbx.refuse(),
    accept: () => pbx.accept(),
    play: (from, to, talk, hold) => {
      const call = pbx.play({ kind: 'inbound', from, to, answeredBy: to, talk, [hold]: true });
      return { ...call, callId: call.linkedid };
    },
    close: () => pbx.close(),
  };
}

async function eslPbx(offsetSec: number): Promise<ClockedPbx> {
  const pbx = await EslDouble.start(undefined, { clockOffsetMs: offsetSec * 1000 });
  return {
    follow: { PBX_EVENTS: 'esl', ESL_URL: pbx.url() },
    logins: () => pbx.logins,
    nowMs: () => pbx.nowUs() / 1000,
    refuse: () => pbx.refuse(),
    accept: () => pbx.accept(),
    play: (from, to, talk, hold) =>
      pbx.play({ kind: 'inbound', from, to, answeredBy: to, talk, [hold]: true }),
    close: () => pbx.close(),
  };
}

/** A fleet following `pbx`: three replicas on one PostgreSQL schema, and how to reach its portal. */
interface FollowingFleet {
  replicas: BridgeProcess[];
  portal: PortalEndpoint;
  pbxToken: string;
  /** The portal id the followers are asked about (multi mode's admin view); single mode: none. */
  portalId?: string;
}

async function singleFleet(
  sandbox: SandboxPortal,
  schema: string,
  dir: string,
  pbx: ClockedPbx,
): Promise<FollowingFleet> {
  const env = testEnv(sandbox, dir, {
    DATABASE_URL: postgresUrlForSchema(schema),
    ...pbx.follow,
    DELIVERY_MAX_BACKOFF_SEC: '1',
    LOG_LEVEL: 'warn',
  });
  const replicas: BridgeProcess[] = [];
  for (let i = 0; i < 3; i++) replicas.push(await startBridgeProcess(env));
  return { replicas, portal: sandbox, pbxToken: PBX_TOKEN };
}

async function multiFleet(sandbox: SandboxPortal, schema: string, pbx: ClockedPbx): Promise<FollowingFleet> {
  const tenant = sandbox.addPortal({ name: 'clocked' });
  await seedPortals(schema, [tenant]);
  const replicas = await startFleet(3, fleetEnv(sandbox, schema, { DELIVERY_MAX_BACKOFF_SEC: '1' }));
  // Settled first: a portal still moving between replicas takes its PBX along, which is no takeover.
  await settledOn(replicas, tenant.memberId);
  const patched = await axios.patch(
    `${replicas[0].url}/v1/admin/portals/${tenant.memberId}`,
    { follow: pbx.follow },
    { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } },
  );
  expect(patched.status).toBe(200);
  return { replicas, portal: tenant, pbxToken: fleetToken(0), portalId: tenant.memberId };
}

/** The call as the portal has it, once it is there (exactly one register for it, whoever sent it). */
async function onPortal(
  portal: PortalEndpoint,
  callId: string,
  ready: (call: CallView) => boolean,
): Promise<CallView> {
  return eventually(() => {
    const mine = portal.calls().filter((call) => call.EXTERNAL_CALL_ID === callId);
    expect(mine.length).toBeLessThanOrEqual(1);
    return Promise.resolve(mine.length === 1 && ready(mine[0]) ? mine[0] : undefined);
  }, 60_000);
}

/** Waits until the store holds the call's answer by `extension` (what a survivor's resync reads back). */
async function answerStored(fleet: FollowingFleet, callId: string, extension: string): Promise<void> {
  await eventually(async () => {
    const { data } = await axios.get(`${fleet.replicas[0].url}/v1/calls/${encodeURIComponent(callId)}`, {
      headers: { Authorization: `Bearer ${fleet.pbxToken}` },
      validateStatus: () => true,
      timeout: 5000,
    });
    return data?.card?.answeredBy === extension ? true : undefined;
  }, 30_000);
}

/**
 * SPEC §9, one clock per call, across a takeover: three replicas (dist/main.js child processes) on one
 * PostgreSQL database follow a PBX whose clock runs ten minutes behind or ahead of theirs, over AMI or the
 * event socket. A call answered and talking is in the store when the following replica is killed with
 * SIGKILL; the PBX refuses connections over the kill, so a second call begins unseen by anyone and rings
 * until the survivor has logged in and resynced. Then both end. Sandbox users: 2 = ext 101, 4 = ext 103.
 *
 * Talk times are exact: each double dates the answer and the hang-up on the call's own virtual clock, `talk`
 * seconds apart, so a survivor that takes the stored answer (the PBX's clock, as the hang-up is) finishes
 * with exactly `talk`; one that dates it at its resync, or on its own clock, is seconds or ten minutes off.
 */
describe.each([
  ['AMI', amiPbx],
  ['the event socket', eslPbx],
])('a takeover while following %s', (kind, startPbx) => {
  let pbx: ClockedPbx;
  let sandbox: SandboxPortal;
  let replicas: BridgeProcess[] = [];
  let schema: string;

  beforeEach(async () => {
    sandbox = await SandboxPortal.start();
    schema = `${TEST_SCHEMA_PREFIX}clock_${randomBytes(4).toString('hex')}`;
  });

  afterEach(async () => {
    await stopFleet(replicas);
    replicas = [];
    await sandbox?.close();
    await pbx?.close();
    await dropSchema(schema);
  });

  async function killTheFollowerMidCall(fleet: FollowingFleet, prefix: string): Promise<void> {
    await theFollower(fleet.replicas, fleet.portalId);
    const talkingFrom = pbx.nowMs();
    const talking = pbx.play(`${prefix}1`, '101', 120, 'holdOpen');
    const talkingTo = pbx.nowMs();
    await talking.answered;
    await answerStored(fleet, talking.callId, '101');
    await onPortal(fleet.portal, talking.callId, () => true);

    const follower = await theFollower(fleet.replicas, fleet.portalId);
    const logins = pbx.logins();
    await pbx.refuse();
    follower.child.kill('SIGKILL');
    await follower.exited;
    const unseenFrom = pbx.nowMs();
    const unseen = pbx.play(`${prefix}2`, '103', 45, 'holdRinging');
    await pbx.accept();
    const survivor = await theFollower(fleet.replicas, fleet.portalId);
    const resyncedBy = pbx.nowMs();
    expect(survivor).not.toBe(follower);
    expect(pbx.logins()).toBeGreaterThan(logins);

    talking.hangUp();
    unseen.pickUp();
    await Promise.all([talking.done, unseen.done]);
    const talked = await onPortal(fleet.portal, talking.callId, (call) => call.finished !== null);
    const rang = await onPortal(fleet.portal, unseen.callId, (call) => call.finished !== null);
    expect(talked.finished).toMatchObject({ STATUS_CODE: '200', USER_ID: 2, DURATION: 120 });
    expect(rang.finished).toMatchObject({ STATUS_CODE: '200', USER_ID: 4, DURATION: 45 });
    // Registered by the replica that followed from the start: the first channel's creation on the PBX.
    const talkedStart = Date.parse(talked.CALL_START_DATE);
    expect(talkedStart).toBeGreaterThanOrEqual(Math.floor(talkingFrom));
    expect(talkedStart).toBeLessThanOrEqual(Math.ceil(talkingTo));
    // Registered from the survivor's resync, on the PBX's clock: FreeSWITCH's created_epoch (the creation,
    // down to the second), or Asterisk's channel age (whole seconds, rounded down) back from the PBX's
    // clock as the login's Ping read it (off by at most half its round trip). Every reading falls between
    // the creation and the survivor following, so the start does too, give or take that second and that
    // window; the bridge's clock would put it ten minutes off.
    const window = resyncedBy - unseenFrom;
    const rangStart = Date.parse(rang.CALL_START_DATE);
    expect(rangStart).toBeGreaterThanOrEqual(unseenFrom - 1000 - window);
    expect(rangStart).toBeLessThanOrEqual(resyncedBy + window);
  }

  describe.each([
    ['10 minutes behind', -600],
    ['10 minutes ahead of', 600],
  ])('whose clock runs %s the bridge', (_label, offsetSec) => {
    const prefix = `+49151${offsetSec > 0 ? 7 : 6}${kind === 'AMI' ? 1 : 2}`;

    it('single mode: the survivor keeps the talk time and start of each call on the PBX clock', async () => {
      pbx = await startPbx(offsetSec);
      const dir = mkdtempSync(join(tmpdir(), 'bridge-clock-'));
      try {
        const fleet = await singleFleet(sandbox, schema, dir, pbx);
        replicas = fleet.replicas;
        await killTheFollowerMidCall(fleet, `${prefix}1000`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }, 300_000);

    it('multi mode: the portal’s survivor keeps the talk time and start of each call on the PBX clock', async () => {
      pbx = await startPbx(offsetSec);
      const fleet = await multiFleet(sandbox, schema, pbx);
      replicas = fleet.replicas;
      await killTheFollowerMidCall(fleet, `${prefix}2000`);
    }, 300_000);
  });
});
