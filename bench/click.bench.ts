/**
 * Click-to-originate (part of `npm run bench`, docs/API.md): the time from an employee's click on the portal
 * to the PBX receiving the `Originate`. The built bridge is a child process on a fresh SQLite file, in
 * webhook mode with the application token and DIAL_MODE=ami; the sandbox portal (2 requests/s) and the AMI
 * double (test/support/ami-server.ts) run in this process on 127.0.0.1, so every time is read on one clock:
 * a click starts when `POST /_sandbox/click` is sent (the sandbox registers the call and posts
 * ONEXTERNALCALLSTART to the bridge's `/v1/portal/events`) and ends when the double reads the Originate.
 * The event post's own time to its 200 is printed beside it.
 *
 * Scenarios (BENCH_SCENARIOS=comma list to pick some):
 *  - idle: nothing else waits;
 *  - backlog: BENCH_CLICK_HISTORY (2 500) finished calls from a CDR import (register + finish each: 5 000
 *    commands) are posted first, bucket 10, then the clicks while that history drains; the history still
 *    waiting at the first and last click is printed beside the figures.
 * BENCH_CLICKS (20) clicks per scenario, BENCH_CLICK_EVERY_MS (300) apart, each by another employee to
 * another number; waited for up to BENCH_CLICK_WAIT_SEC (60). BRIDGE_DIST benches another build's dist/.
 * Nearest-rank percentiles: with 20 clicks the p95 is the 20th value, the max.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxPortal } from '../sandbox';
import { defaultSeed } from '../sandbox/seed';
import { AmiServer } from '../test/support/ami-server';
import { percentile, postJson, startBuiltBridge } from './bench-support';

const HISTORY = Number(process.env.BENCH_CLICK_HISTORY ?? 2500);
const CLICKS = Number(process.env.BENCH_CLICKS ?? 20);
const CLICK_EVERY_MS = Number(process.env.BENCH_CLICK_EVERY_MS ?? 300);
const WAIT_SEC = Number(process.env.BENCH_CLICK_WAIT_SEC ?? 60);
const ONLY = process.env.BENCH_SCENARIOS?.split(',').map((name) => name.trim());
const TOKEN = 'bench-token-click';
const APP_TOKEN = 'bench-application-token-click';
const AMI_USER = 'bench';
const AMI_SECRET = 'bench-ami-secret';
/** The clicking employees: IDs 101…, extensions 201…, beside the default seed's. */
const FIRST_EMPLOYEE = 101;

interface Scenario {
  name: string;
  burst: number;
  history: number;
}

const SCENARIOS: Scenario[] = [
  { name: 'idle', burst: 50, history: 0 },
  { name: 'backlog', burst: 10, history: HISTORY },
];

/** A finished call as a CDR-only PBX posts it: register and finish are both due. */
function historyCall(n: number) {
  return {
    event: 'call.ended',
    callId: `history-${n}`,
    direction: n % 2 ? 'inbound' : 'outbound',
    phoneNumber: `+4930${String(3000000 + n)}`,
    extension: '101',
    startedAt: '2026-11-24T09:00:00+01:00',
    at: '2026-11-24T09:01:00+01:00',
    durationSec: 60,
    status: 'answered',
  };
}

function employees() {
  return Array.from({ length: CLICKS }, (_, n) => ({
    ID: FIRST_EMPLOYEE + n,
    NAME: `Bench${n}`,
    LAST_NAME: 'Clicker',
    EMAIL: `bench${n}@sandbox.test`,
    ACTIVE: true,
    UF_PHONE_INNER: String(201 + n),
    WORK_POSITION: 'Sales',
  }));
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

async function control(
  sandbox: SandboxPortal,
  path: string,
  body: unknown,
): Promise<Record<string, unknown>> {
  const response = await fetch(`${sandbox.url}/_sandbox${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = (await response.json()) as Record<string, unknown>;
  if (!response.ok) throw new Error(`${path} answered ${response.status}: ${JSON.stringify(answer)}`);
  return answer;
}

function figures(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), max: sorted.at(-1) };
}

/** bridge_click_to_originate_seconds as the bridge saw it (from its 200 to the Originate's answer). */
async function bridgeHistogram(url: string): Promise<{ count: number; meanMs: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const read = (suffix: string) =>
    Number(
      new RegExp(`^bridge_click_to_originate_seconds_${suffix}\\{mode="ami"\\} (\\S+)$`, 'm').exec(
        text,
      )?.[1] ?? NaN,
    );
  const count = read('count');
  return { count, meanMs: Math.round((read('sum') / count) * 1000) };
}

async function run(scenario: Scenario, dir: string) {
  const ami = await AmiServer.start(AMI_USER, AMI_SECRET);
  const sandbox = await SandboxPortal.start({
    rateBurst: scenario.burst,
    rateLimitRps: 2,
    seed: { employees: [...defaultSeed().employees, ...employees()] },
  });
  const bridge = await startBuiltBridge({
    NODE_ENV: 'development',
    PBX_TOKENS: TOKEN,
    B24_WEBHOOK_URL: sandbox.webhookUrl,
    B24_APPLICATION_TOKEN: APP_TOKEN,
    DATABASE_URL: `sqlite:${join(dir, `${scenario.name}.sqlite`)}`,
    B24_DEFAULT_USER_ID: '1',
    PBX_RATE_LIMIT_RPS: '100000',
    LOG_LEVEL: 'warn',
    B24_RATE_BURST: String(scenario.burst),
    DIAL_MODE: 'ami',
    AMI_URL: ami.url(),
  });
  try {
    await control(sandbox, '/events/outbound', {
      url: `${bridge.url}/v1/portal/events`,
      applicationToken: APP_TOKEN,
    });
    // The employee directory's first copy (user.get) before the first click.
    await sleep(1500);
    const history = Array.from({ length: scenario.history }, (_, n) => historyCall(n));
    for (let start = 0; start < history.length; start += 500) {
      const status = await postJson(
        `${bridge.url}/v1/calls/events`,
        history.slice(start, start + 500),
        TOKEN,
      );
      if (status !== 202) throw new Error(`intake answered ${status}`);
    }
    const clicks: { callId: string; clickedAt: number; post: number; waitingCommands: number }[] = [];
    for (let n = 0; n < CLICKS; n += 1) {
      const stats = sandbox.stats();
      const posts = sandbox.state.events.posts.length;
      const clickedAt = Date.now();
      const answer = await control(sandbox, '/click', {
        phone: `+49 30 555${String(1000 + n)}`,
        userId: FIRST_EMPLOYEE + n,
        lineNumber: 'bench',
      });
      clicks.push({
        callId: String(answer.CALL_ID),
        clickedAt,
        post: posts,
        waitingCommands: Math.max(0, scenario.history * 2 - stats.commands),
      });
      await sleep(CLICK_EVERY_MS);
    }
    const originateOf = (callId: string) =>
      ami.originates().filter((action) => [action.Variable].flat().includes(`CRM_CALL_ID=${callId}`));
    const deadline = Date.now() + WAIT_SEC * 1000;
    while (clicks.some((click) => originateOf(click.callId).length === 0) && Date.now() < deadline) {
      await sleep(100);
    }
    // A second Originate of a click would come within a retry (≤ 2 s): wait that long before counting.
    await sleep(2500);
    const toOriginate: number[] = [];
    const postMs: number[] = [];
    const clickToPost: number[] = [];
    const okToOriginate: number[] = [];
    const loginToOriginate: number[] = [];
    let exactlyOnce = 0;
    for (const click of clicks) {
      const originates = originateOf(click.callId);
      if (originates.length === 1) exactlyOnce += 1;
      const at = originates[0] && ami.arrivalOf(originates[0]);
      toOriginate.push(at === undefined ? Infinity : at - click.clickedAt);
      const post = sandbox.state.events.posts[click.post];
      const answeredAt = post?.status === 200 ? (post.answeredAt ?? undefined) : undefined;
      postMs.push(answeredAt === undefined ? Infinity : answeredAt - post.sentAt);
      clickToPost.push(post ? post.sentAt - click.clickedAt : Infinity);
      okToOriginate.push(at === undefined || answeredAt === undefined ? Infinity : at - answeredAt);
      // The Login of the connection the Originate came on: the last one before it (clicks are far apart).
      const index = originates[0] ? ami.actions.indexOf(originates[0]) : -1;
      const login = ami.actions
        .slice(0, Math.max(0, index))
        .reverse()
        .find((action) => action.Action === 'Login');
      const loginAt = login && ami.arrivalOf(login);
      loginToOriginate.push(at === undefined || loginAt === undefined ? Infinity : at - loginAt);
    }
    const waiting = clicks.map((click) => click.waitingCommands);
    return {
      burst: scenario.burst,
      clicks: CLICKS,
      clickEveryMs: CLICK_EVERY_MS,
      historyCommandsWaitingAtClicks: { first: waiting[0], last: waiting[waiting.length - 1] },
      clickToOriginateMs: figures(toOriginate),
      eventPostTo200Ms: figures(postMs),
      // Where the time goes: the sandbox's click handling before its post, the post to its 200, the 200 to
      // the Originate (the processor, the dialer's store and worker, AMI connect and login), of which the
      // double's Login to the Originate.
      phasesP50Ms: {
        clickToPostSent: figures(clickToPost).p50,
        postTo200: figures(postMs).p50,
        post200ToOriginate: figures(okToOriginate).p50,
        amiLoginToOriginate: figures(loginToOriginate).p50,
      },
      originates: ami.originates().length,
      clicksOriginatedExactlyOnce: exactlyOnce,
      eventPostsNot200: sandbox.state.events.posts.filter((post) => post.status !== 200).length,
      bridgeClickToOriginate: await bridgeHistogram(bridge.url),
      portal503s: sandbox.stats().queryLimitExceeded,
    };
  } finally {
    bridge.child.kill('SIGKILL');
    await sandbox.close();
    await ami.close();
  }
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'bridge-click-'));
  const results: Record<string, unknown> = {};
  try {
    for (const scenario of SCENARIOS) {
      if (ONLY && !ONLY.includes(scenario.name)) continue;
      results[scenario.name] = await run(scenario, dir);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    JSON.stringify({ bench: 'click-to-originate', at: new Date().toISOString(), results }, null, 2),
  );
}

void main().catch((error) => {
  console.error(error);
  process.exit(1);
});
