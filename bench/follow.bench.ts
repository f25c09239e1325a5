/**
 * Following the PBX (part of `npm run bench`, docs/API.md targets). The built bridge runs as child processes;
 * the AMI double (test/support/ami-double.ts, real TCP) and the sandbox portal run in this process, so the
 * time the double writes an event and the time the sandbox has the call are read on one clock.
 *
 * Scenarios (BENCH_SCENARIOS=comma list to pick some):
 *  - idle: ring-to-card, from the double writing a ring group's first `DialBegin` to the sandbox having the
 *    call registered; BENCH_FOLLOW_RINGS (20) ringing calls, one every 700 ms, SQLite, portal bucket 50;
 *  - esl-idle: the same over FreeSWITCH's event socket (test/support/esl-double.ts): from the switch writing
 *    the first phone leg's CHANNEL_CREATE to the sandbox having the call registered;
 *  - backlog: the same while BENCH_FOLLOW_HISTORY (2 500) finished calls posted first (5 000 commands, over
 *    3 000 still waiting at the rings) drain at 2 requests/s, bucket 10 (as bench/card.bench.ts does);
 *  - burst: BENCH_FOLLOW_CALLS (200) calls up at once (started over 2 s, all answered, then hung up over 2 s;
 *    ring groups, queues, outbound): the follower's lag per call (the double writing the call's first
 *    `DialBegin` → `call.started` stored; its first `Hangup` after it is hung up → `call.ended` stored, read
 *    from the store's `received_at`) by quarter of the calls, and the bridge's CPU (user + system, from
 *    /proc) per call, intake and delivery included, less its idle CPU over the same time;
 *  - takeover: three replicas on PostgreSQL follow the double (multi mode: a portal's follow setting;
 *    single: PBX_EVENTS); the following replica is killed with SIGKILL BENCH_FOLLOW_TAKEOVERS (10) times
 *    (a fresh replica started after each): kill → the survivor's Login at the double, and kill → a call that
 *    began ringing at the kill registered on the portal. BENCH_FOLLOW_MODES (multi,single) picks the modes.
 * Needs PostgreSQL at TEST_POSTGRES_URL for takeover. BRIDGE_DIST benches another build's dist/.
 */
import axios from 'axios';
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxPortal, SandboxTenant } from '../sandbox';
import { AmiDouble, CallDescription, PlayingCall } from '../test/support/ami-double';
import { EslDouble } from '../test/support/esl-double';
import { ADMIN_TOKEN } from '../test/support/bridge-harness';
import { BridgeProcess } from '../test/support/bridge-process';
import { theFollower } from '../test/support/follow-takeover';
import { dropSchema, fleetEnv, seedPortals, startFleet, stopFleet } from '../test/support/multi-fleet';
import { postgresUrlForSchema, TEST_SCHEMA_PREFIX } from '../test/support/test-database';
import { percentile, postJson, startBuiltBridge } from './bench-support';

const ONLY = process.env.BENCH_SCENARIOS?.split(',').map((name) => name.trim());
const RINGS = Number(process.env.BENCH_FOLLOW_RINGS ?? 20);
const HISTORY = Number(process.env.BENCH_FOLLOW_HISTORY ?? 2500);
const CALLS = Number(process.env.BENCH_FOLLOW_CALLS ?? 200);
const TAKEOVERS = Number(process.env.BENCH_FOLLOW_TAKEOVERS ?? 10);
const MODES = (process.env.BENCH_FOLLOW_MODES ?? 'multi,single').split(',').map((mode) => mode.trim());
const TOKEN = 'bench-token-follow';
const RING_EVERY_MS = 700;
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** When the double wrote each call's first DialBegin and its Hangups (by Linkedid), and how many events. */
function watch(pbx: AmiDouble) {
  const firstDial = new Map<string, number>();
  const hangups = new Map<string, number[]>();
  const counter = { events: 0 };
  pbx.observe((text) => {
    counter.events++;
    const linkedid = /^Linkedid: (.+)$/m.exec(text)?.[1]?.trim();
    if (!linkedid) return;
    if (text.startsWith('Event: DialBegin') && !firstDial.has(linkedid)) firstDial.set(linkedid, Date.now());
    if (text.startsWith('Event: Hangup')) {
      hangups.set(linkedid, [...(hangups.get(linkedid) ?? []), Date.now()]);
    }
  });
  return { firstDial, hangups, counter };
}

const spread = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), max: sorted.at(-1) };
};

async function singleBridge(sandbox: SandboxPortal, pbx: AmiDouble, dbFile: string, burst: number) {
  return startBuiltBridge({
    NODE_ENV: 'development',
    PBX_TOKENS: TOKEN,
    B24_WEBHOOK_URL: sandbox.webhookUrl,
    DATABASE_URL: `sqlite:${dbFile}`,
    B24_DEFAULT_USER_ID: '1',
    DEFAULT_COUNTRY: 'DE',
    PBX_RATE_LIMIT_RPS: '100000',
    B24_RATE_BURST: String(burst),
    LOG_LEVEL: 'warn',
    PBX_EVENTS: 'ami',
    AMI_URL: pbx.url(),
  });
}

async function ringToCard(history: number, dir: string) {
  const burst = history ? 10 : 50;
  const pbx = await AmiDouble.start();
  const sandbox = await SandboxPortal.start({ rateBurst: burst, rateLimitRps: 2 });
  const seen = watch(pbx);
  const bridge = await singleBridge(sandbox, pbx, join(dir, `ring-${history}.sqlite`), burst);
  try {
    // The login and the employee directory's first copy before the first ring.
    while (pbx.logins === 0) await sleep(50);
    await sleep(1500);
    for (let start = 0; start < history; start += 500) {
      const batch = Array.from({ length: Math.min(500, history - start) }, (_, k) => ({
        event: 'call.ended',
        callId: `history-${start + k}`,
        direction: 'inbound',
        phoneNumber: `+4930${String(3000000 + start + k)}`,
        extension: '101',
        startedAt: '2026-11-24T09:00:00+01:00',
        at: '2026-11-24T09:01:00+01:00',
        durationSec: 60,
        status: 'answered',
      }));
      const status = await postJson(`${bridge.url}/v1/calls/events`, batch, TOKEN);
      if (status !== 202) throw new Error(`intake answered ${status}`);
    }
    const rings: { call: PlayingCall; waitingCommands: number }[] = [];
    for (let n = 0; n < RINGS; n++) {
      const waitingCommands = Math.max(0, history * 2 - sandbox.stats().commands);
      const call = pbx.play({
        kind: 'inbound',
        from: `+49151${String(4000000 + n)}`,
        to: ['101', '102', '103'],
        answeredBy: '102',
        talk: 30,
        holdRinging: true,
      });
      rings.push({ call, waitingCommands });
      await sleep(RING_EVERY_MS);
    }
    const deadline = Date.now() + 180_000;
    const registered = () =>
      rings.every(({ call }) => sandbox.calls({ EXTERNAL_CALL_ID: call.linkedid }).length > 0);
    while (!registered() && Date.now() < deadline) await sleep(100);
    const toCard = rings.map(({ call }) => {
      const registeredAt = sandbox.calls({ EXTERNAL_CALL_ID: call.linkedid })[0]?.registeredAt;
      const dialAt = seen.firstDial.get(call.linkedid);
      return registeredAt && dialAt ? registeredAt - dialAt : Infinity;
    });
    for (const { call } of rings) call.pickUp();
    await Promise.all(rings.map(({ call }) => call.done));
    return {
      burst,
      ringingCalls: RINGS,
      historyCommandsWaitingAtRings: { first: rings[0].waitingCommands, last: rings.at(-1)?.waitingCommands },
      dialBeginToCardMs: spread(toCard),
      portal503s: sandbox.stats().queryLimitExceeded,
    };
  } finally {
    bridge.child.kill('SIGKILL');
    await sandbox.close();
    await pbx.close();
  }
}

/** Ring-to-card over the event socket, idle: the first phone leg's CHANNEL_CREATE → the call registered. */
async function eslRingToCard(dir: string) {
  const pbx = await EslDouble.start();
  const sandbox = await SandboxPortal.start({ rateBurst: 50, rateLimitRps: 2 });
  const firstLeg = new Map<string, number>();
  pbx.observe((_frame, event) => {
    if (event['Event-Name'] !== 'CHANNEL_CREATE' || !event.variable_dialed_user) return;
    const callId = String(event['Channel-Call-UUID']);
    if (!firstLeg.has(callId)) firstLeg.set(callId, Date.now());
  });
  const bridge = await startBuiltBridge({
    NODE_ENV: 'development',
    PBX_TOKENS: TOKEN,
    B24_WEBHOOK_URL: sandbox.webhookUrl,
    DATABASE_URL: `sqlite:${join(dir, 'esl-ring.sqlite')}`,
    B24_DEFAULT_USER_ID: '1',
    DEFAULT_COUNTRY: 'DE',
    PBX_RATE_LIMIT_RPS: '100000',
    LOG_LEVEL: 'warn',
    PBX_EVENTS: 'esl',
    ESL_URL: pbx.url(),
  });
  try {
    while (pbx.logins === 0) await sleep(50);
    await sleep(1500);
    const toCard: number[] = [];
    for (let n = 0; n < RINGS; n++) {
      const call = pbx.play({
        kind: 'inbound',
        from: `+49151${String(6000000 + n)}`,
        to: ['101', '102'],
        answeredBy: '101',
        holdRinging: true,
      });
      const deadline = Date.now() + 30_000;
      let registeredAt: number | undefined;
      while (registeredAt === undefined && Date.now() < deadline) {
        registeredAt = sandbox.calls({ EXTERNAL_CALL_ID: call.callId })[0]?.registeredAt;
        if (registeredAt === undefined) await sleep(5);
      }
      const ringAt = firstLeg.get(call.callId);
      toCard.push(registeredAt !== undefined && ringAt !== undefined ? registeredAt - ringAt : Infinity);
      call.pickUp();
      await call.done;
      await sleep(RING_EVERY_MS);
    }
    return {
      ringingCalls: RINGS,
      channelCreateToCardMs: spread(toCard),
      portal503s: sandbox.stats().queryLimitExceeded,
    };
  } finally {
    bridge.child.kill('SIGKILL');
    await sandbox.close();
    await pbx.close();
  }
}

/** CPU time (user + system) of a child process so far, in ms, from /proc (Linux). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  // utime and stime are fields 14 and 15 of the line, in clock ticks (100 a second on Linux).
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function burstCall(n: number): CallDescription {
  const common = { stepMs: 20, holdOpen: true, talk: 60 + (n % 50) } as const;
  if (n % 4 === 3) {
    return { ...common, kind: 'outbound', from: '103', to: `+4930${7000000 + n}`, answeredBy: 'y' };
  }
  if (n % 4 === 2) {
    return {
      ...common,
      kind: 'inbound',
      from: `+49151${5000000 + n}`,
      to: ['101', '102'],
      queue: '400',
      answeredBy: '102',
    };
  }
  return {
    ...common,
    kind: 'inbound',
    from: `+49151${5000000 + n}`,
    to: ['101', '102', '103'],
    answeredBy: '101',
    recording: n % 2 === 0,
  };
}

async function burst(dir: string) {
  const pbx = await AmiDouble.start();
  const sandbox = await SandboxPortal.start({ rateBurst: 250, rateLimitRps: 5 });
  const seen = watch(pbx);
  const dbFile = join(dir, 'burst.sqlite');
  const bridge = await singleBridge(sandbox, pbx, dbFile, 250);
  const pid = bridge.child.pid as number;
  try {
    while (pbx.logins === 0) await sleep(50);
    await sleep(1500);
    const idleFrom = cpuMs(pid);
    await sleep(5000);
    const idleCpuPerSec = (cpuMs(pid) - idleFrom) / 5;

    const cpuFrom = cpuMs(pid);
    const startedAt = Date.now();
    const eventsFrom = seen.counter.events;
    const calls: PlayingCall[] = [];
    for (let n = 0; n < CALLS; n++) {
      calls.push(pbx.play(burstCall(n)));
      await sleep(2000 / CALLS);
    }
    await Promise.all(calls.map((call) => call.answered));
    const liveAtOnce = pbx.liveChannels;
    const hangUpAt = new Map<string, number>();
    for (const call of calls) {
      hangUpAt.set(call.linkedid, Date.now());
      call.hangUp();
      await sleep(2000 / CALLS);
    }
    await Promise.all(calls.map((call) => call.done));
    const playedMs = Date.now() - startedAt;
    const events = seen.counter.events - eventsFrom;
    const deadline = Date.now() + 300_000;
    const delivered = () => sandbox.calls().filter((call) => call.finished).length >= CALLS;
    while (!delivered() && Date.now() < deadline) await sleep(200);
    const busyMs = Date.now() - startedAt;
    const cpu = cpuMs(pid) - cpuFrom;

    const db = new Database(dbFile, { readonly: true, fileMustExist: true });
    const rows = db
      .prepare(
        `SELECT call_id, event, received_at FROM call_events WHERE event IN ('call.started', 'call.ended')`,
      )
      .all() as { call_id: string; event: string; received_at: number }[];
    db.close();
    const stored = new Map(rows.map((row) => [`${row.call_id} ${row.event}`, row.received_at]));
    const quarters = [0, 1, 2, 3].map((q) => {
      const slice = calls.slice((q * CALLS) / 4, ((q + 1) * CALLS) / 4);
      const started = slice.map(
        (call) =>
          (stored.get(`${call.linkedid} call.started`) ?? Infinity) -
          (seen.firstDial.get(call.linkedid) ?? 0),
      );
      // From the first Hangup the double wrote after the call was hung up (ring legs hang up at the answer).
      const ended = slice.map((call) => {
        const from = hangUpAt.get(call.linkedid) ?? 0;
        const hangup = seen.hangups.get(call.linkedid)?.find((at) => at >= from) ?? 0;
        return (stored.get(`${call.linkedid} call.ended`) ?? Infinity) - hangup;
      });
      return { calls: slice.length, startedLagMs: spread(started), endedLagMs: spread(ended) };
    });
    return {
      calls: CALLS,
      channelsUpAtOnce: liveAtOnce,
      amiEvents: events,
      amiEventsPerSec: Math.round(events / (playedMs / 1000)),
      lagByQuarter: quarters,
      deliveredOnPortal: sandbox.calls().filter((call) => call.finished).length,
      bridgeCpuMs: cpu,
      bridgeIdleCpuMsPerSec: idleCpuPerSec,
      bridgeCpuMsPerCall: Math.round(((cpu - idleCpuPerSec * (busyMs / 1000)) / CALLS) * 100) / 100,
      cpuWindowMs: busyMs,
    };
  } finally {
    bridge.child.kill('SIGKILL');
    await sandbox.close();
    await pbx.close();
  }
}

async function takeover(mode: string) {
  const pbx = await AmiDouble.start();
  const sandbox = await SandboxPortal.start({ rateBurst: 250, rateLimitRps: 5 });
  const schema = `${TEST_SCHEMA_PREFIX}followbench_${randomBytes(4).toString('hex')}`;
  const dir = mkdtempSync(join(tmpdir(), 'bridge-follow-bench-'));
  let tenant: SandboxTenant | undefined;
  let env: Record<string, string>;
  if (mode === 'multi') {
    tenant = sandbox.addPortal({ name: 'followed', rateLimitRps: 5, rateBurst: 250 });
    await seedPortals(schema, [tenant]);
    env = fleetEnv(sandbox, schema, { DELIVERY_MAX_BACKOFF_SEC: '1' });
  } else {
    env = {
      NODE_ENV: 'test',
      PBX_TOKENS: TOKEN,
      B24_WEBHOOK_URL: sandbox.webhookUrl,
      PORTAL_ID: 'sandbox',
      DATABASE_URL: postgresUrlForSchema(schema),
      DEFAULT_COUNTRY: 'DE',
      B24_DEFAULT_USER_ID: '1',
      DELIVERY_MAX_BACKOFF_SEC: '1',
      LOG_LEVEL: 'warn',
      PBX_EVENTS: 'ami',
      AMI_URL: pbx.url(),
    };
  }
  const portal = tenant ?? sandbox;
  let replicas: BridgeProcess[] = await startFleet(3, env);
  try {
    if (tenant) {
      await axios.patch(
        `${replicas[0].url}/v1/admin/portals/${tenant.memberId}`,
        { follow: { PBX_EVENTS: 'ami', AMI_URL: pbx.url() } },
        { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } },
      );
    }
    const toLogin: number[] = [];
    const toCall: number[] = [];
    for (let run = 0; run < TAKEOVERS; run++) {
      // Settled: a replica started after the last kill may take the portal over (a handover, not a takeover).
      let follower: BridgeProcess;
      let logins: number;
      for (;;) {
        follower = await theFollower(replicas, tenant?.memberId);
        logins = pbx.logins;
        await sleep(1500);
        if (pbx.logins === logins && (await theFollower(replicas, tenant?.memberId)) === follower) break;
      }
      follower.child.kill('SIGKILL');
      const killedAt = Date.now();
      const call = pbx.play({
        kind: 'inbound',
        from: `+49151${6000000 + run}`,
        to: '101',
        answeredBy: '101',
        talk: 10,
        holdRinging: true,
      });
      let loginAt = 0;
      let callAt = 0;
      const deadline = killedAt + 120_000;
      while ((!loginAt || !callAt) && Date.now() < deadline) {
        if (!loginAt && pbx.logins > logins) loginAt = Date.now();
        if (!callAt && portal.calls({ EXTERNAL_CALL_ID: call.linkedid }).length > 0) callAt = Date.now();
        await sleep(10);
      }
      toLogin.push(loginAt ? loginAt - killedAt : Infinity);
      toCall.push(callAt ? callAt - killedAt : Infinity);
      call.pickUp();
      await call.done;
      await follower.exited;
      replicas = replicas.filter((replica) => replica !== follower);
      replicas.push(...(await startFleet(1, env)));
    }
    return { runs: TAKEOVERS, killToLoginMs: spread(toLogin), killToNextCallOnPortalMs: spread(toCall) };
  } finally {
    await stopFleet(replicas);
    await sandbox.close();
    await pbx.close();
    await dropSchema(schema);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'bridge-follow-'));
  const results: Record<string, unknown> = {};
  const wanted = (name: string) => !ONLY || ONLY.includes(name);
  try {
    if (wanted('idle')) results.idle = await ringToCard(0, dir);
    if (wanted('esl-idle')) results['esl-idle'] = await eslRingToCard(dir);
    if (wanted('backlog')) results.backlog = await ringToCard(HISTORY, dir);
    if (wanted('burst')) results.burst = await burst(dir);
    if (wanted('takeover')) for (const mode of MODES) results[`takeover-${mode}`] = await takeover(mode);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(JSON.stringify({ bench: 'follow', at: new Date().toISOString(), results }, null, 2));
}

void main().catch((error) => {
  console.error(error);
  process.exit(1);
});
