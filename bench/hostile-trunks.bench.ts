/**
 * A tenant's hostile PBX_TRUNKS pattern (issue 36; part of `npm run bench`): one built bridge in multi mode
 * (a child process, SQLite), two portals of the sandbox. Alpha's admin sets `PJSIP/trunk*` and
 * `PJSIP/*0*0*…*0*X` (12 stars before the X), and alpha's PBX (the AMI double, real TCP) names its phones'
 * channels `PJSIP/101-` + BENCH_HOSTILE_DIGITS (50) hex digits, none of which match it. Beta's PBX posts a
 * ringing call every BENCH_HOSTILE_EVERY_MS (300) ms, BENCH_HOSTILE_CALLS (20) of them: post → the call
 * registered on beta's portal, first while alpha's PBX is quiet, then while it plays an inbound call every
 * 50 ms. Prints both spreads and their ratio, and the phone channels alpha's PBX named meanwhile. With a
 * build that compiled the patterns to regular expressions (BRIDGE_DIST) the second phase never ends.
 */
import axios from 'axios';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxPortal, SandboxTenant } from '../sandbox';
import { AmiDouble, PlayingCall } from '../test/support/ami-double';
import { ADMIN_TOKEN } from '../test/support/bridge-harness';
import { freePort } from '../test/support/bridge-process';
import { percentile, postJson, started, startBuiltBridge } from './bench-support';

const DIGITS = Number(process.env.BENCH_HOSTILE_DIGITS ?? 50);
const CALLS = Number(process.env.BENCH_HOSTILE_CALLS ?? 20);
const EVERY_MS = Number(process.env.BENCH_HOSTILE_EVERY_MS ?? 300);
const HOSTILE = `PJSIP/${'*0'.repeat(12)}*X`;
const SECRET = 'bench-hostile-ami';
const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

const spread = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), max: sorted.at(-1) };
};

/** Post → registered on the portal, for CALLS ringing calls one every EVERY_MS (ms each). */
async function betaLatencies(
  url: string,
  token: string,
  beta: SandboxTenant,
  phase: string,
): Promise<number[]> {
  const waits: Promise<number>[] = [];
  for (let n = 0; n < CALLS; n++) {
    const callId = `${phase}-${n}`;
    const posted = Date.now();
    const status = await postJson(`${url}/v1/calls/events`, [started(callId, n)], token);
    if (status !== 202) throw new Error(`intake answered ${status}`);
    waits.push(
      (async () => {
        while (!beta.calls().some((call) => call.EXTERNAL_CALL_ID === callId)) await sleep(2);
        return Date.now() - posted;
      })(),
    );
    await sleep(EVERY_MS);
  }
  return Promise.all(waits);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-hostile-'));
  const pbx = await AmiDouble.start('crm-alpha', SECRET, { channelSuffixDigits: DIGITS });
  const sandbox = await SandboxPortal.start();
  const alpha = sandbox.addPortal({ name: 'alpha' });
  const beta = sandbox.addPortal({ name: 'beta' });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const bridge = await startBuiltBridge(
    {
      NODE_ENV: 'development',
      B24_APP_MODE: 'multi',
      ADMIN_TOKEN,
      B24_OAUTH_URL: sandbox.url,
      B24_CLIENT_ID: sandbox.oauthApp.clientId,
      B24_CLIENT_SECRET: sandbox.oauthApp.clientSecret,
      PUBLIC_URL: url,
      DATABASE_URL: `sqlite:${join(dir, 'hostile.sqlite')}`,
      DEFAULT_COUNTRY: 'DE',
      B24_DEFAULT_USER_ID: '1',
      LOG_LEVEL: 'warn',
    },
    port,
  );
  try {
    for (const tenant of [alpha, beta]) {
      const outcome = await tenant.installApp(`${url}/oauth/install`);
      if (outcome?.status !== 200) throw new Error(`install answered ${outcome?.status}`);
    }
    const follow = { PBX_EVENTS: 'ami', AMI_URL: pbx.url(), PBX_TRUNKS: `PJSIP/trunk*,${HOSTILE}` };
    await axios.patch(`${url}/v1/admin/portals/${alpha.memberId}`, { follow }, { headers: admin });
    const created = await axios.post(
      `${url}/v1/admin/portals/${beta.memberId}/pbx-tokens`,
      { label: 'bench' },
      { headers: admin },
    );
    const token = (created.data as { token: string }).token;
    while (pbx.logins === 0) await sleep(50);
    await sleep(1500);

    const quiet = await betaLatencies(url, token, beta, 'quiet');
    let playing = true;
    let phones = 0;
    const calls: PlayingCall[] = [];
    const load = (async () => {
      for (let n = 0; playing; n++) {
        calls.push(
          pbx.play({
            kind: 'inbound',
            from: `+4915111${String(100000 + n)}`,
            to: '101',
            answeredBy: '101',
            talk: 5,
          }),
        );
        phones++;
        await sleep(50);
      }
    })();
    const hostile = await betaLatencies(url, token, beta, 'hostile');
    playing = false;
    await load;
    await Promise.all(calls.map((call) => call.done));
    const q = spread(quiet);
    const h = spread(hostile);
    console.log(
      JSON.stringify({
        bench: 'hostile-trunks',
        channelNameLength: `PJSIP/101-`.length + DIGITS,
        betaCalls: CALLS,
        quietMs: q,
        hostileMs: h,
        ratio: { p50: +(h.p50 / q.p50).toFixed(2), p95: +(h.p95 / q.p95).toFixed(2) },
        alphaPhoneChannelsNamed: phones,
      }),
    );
  } finally {
    bridge.child.kill('SIGKILL');
    await sandbox.close();
    await pbx.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
