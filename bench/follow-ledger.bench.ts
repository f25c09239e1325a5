/**
 * Calls lost across an AMI outage (part of `npm run bench`, after scripts/ensure-mariadb.sh): the built
 * bridge follows the AMI double (PBX_EVENTS=ami) as a child process on a fresh SQLite file; the double drops
 * every manager session and refuses connections for BENCH_LEDGER_OUTAGE_SEC (100) seconds. Live at the drop
 * and ending just before the connection is back: BENCH_LEDGER_LIVE (6) calls, a third each answered directly,
 * queue calls whose first member gives up after 20 s (over a minute long), outbound calls transferred after
 * 5 minutes of talk (virtual clock); spread over the outage, BENCH_LEDGER_GAP (10) short calls start and end.
 * A real MariaDB `cdr` table is written as each Party A hangs up. Run twice: without ASTERISK_CDR_URL and
 * with it. A call is lost when the sandbox portal has not finished it 20 s after the connection is back.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxPortal } from '../sandbox';
import { AmiDouble, CallDescription, PlayingCall } from '../test/support/ami-double';
import { CdrDatabase, CdrWriter } from '../test/support/cdr-database';
import { startBuiltBridge } from './bench-support';

const OUTAGE_SEC = Number(process.env.BENCH_LEDGER_OUTAGE_SEC ?? 100);
const LIVE = Number(process.env.BENCH_LEDGER_LIVE ?? 6);
const GAP = Number(process.env.BENCH_LEDGER_GAP ?? 10);
const SETTLE_MS = 20_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await sleep(100);
  }
  return false;
}

async function run(withLedger: boolean): Promise<{ lost: number; total: number }> {
  const sandbox = await SandboxPortal.start();
  const pbx = await AmiDouble.start();
  const cdr = await CdrDatabase.create(withLedger ? 'bench_ledger' : 'bench_noledger');
  const writer = new CdrWriter(cdr, pbx);
  const dir = mkdtempSync(join(tmpdir(), 'bench-ledger-'));
  const bridge = await startBuiltBridge({
    NODE_ENV: 'development',
    PBX_TOKENS: 'bench-token-ledger',
    B24_WEBHOOK_URL: sandbox.webhookUrl,
    DATABASE_URL: `sqlite:${join(dir, 'bridge.sqlite')}`,
    B24_DEFAULT_USER_ID: '1',
    DEFAULT_COUNTRY: 'DE',
    LOG_LEVEL: 'error',
    PBX_EVENTS: 'ami',
    AMI_URL: pbx.url(),
    ...(withLedger ? { ASTERISK_CDR_URL: cdr.url } : {}),
  });
  const follow = async () => {
    const response = await fetch(`${bridge.url}/health/ready`).catch(() => undefined);
    const body = (await response?.json().catch(() => undefined)) as
      { details?: { pbxFollow?: { connected?: boolean; ledger?: { connected?: boolean } } } } | undefined;
    return body?.details?.pbxFollow;
  };
  try {
    await waitFor(async () => {
      const state = await follow();
      return Boolean(state?.connected && (!withLedger || state.ledger?.connected));
    }, 30_000);
    await sleep(1000);
    const inbound = (i: number, extra: object = {}) => ({
      kind: 'inbound' as const,
      from: `+49151440${String(i).padStart(5, '0')}`,
      to: '101',
      answeredBy: '101',
      talk: 5,
      ...extra,
    });
    const long = (i: number): CallDescription =>
      i % 3 === 0
        ? inbound(i, { holdOpen: true })
        : i % 3 === 1
          ? inbound(i, { to: ['101', '102'], queue: '400', answeredBy: '102', ring: 20, holdOpen: true })
          : {
              kind: 'outbound',
              from: '103',
              to: `+4930660${String(i).padStart(5, '0')}`,
              answeredBy: 'yes',
              talkBeforeTransfer: 300,
              transfer: { kind: 'blind', to: '102' },
              holdOpen: true,
            };
    const live: PlayingCall[] = [];
    for (let i = 0; i < LIVE; i++) live.push(pbx.play(long(i)));
    await Promise.all(live.map((call) => call.answered));
    await sleep(500);
    await pbx.refuse();
    const gap: PlayingCall[] = [];
    const outageMs = OUTAGE_SEC * 1000;
    const spacing = outageMs / (GAP + 1);
    for (let i = 0; i < GAP; i++) {
      await sleep(spacing);
      gap.push(pbx.play(inbound(LIVE + i, { talk: 3 })));
    }
    // The long calls end just before the connection is back: nobody heard them end.
    await sleep(Math.max(0, outageMs - spacing * GAP - 2000));
    for (const call of live) call.hangUp();
    await Promise.all([...live, ...gap].map((call) => call.done));
    await writer.flushed();
    await sleep(2000);
    await pbx.accept();
    await waitFor(async () => Boolean((await follow())?.connected), 30_000);
    const all = [...live, ...gap];
    const finished = () =>
      all.filter((call) => sandbox.calls({ EXTERNAL_CALL_ID: call.linkedid })[0]?.finished).length;
    await waitFor(async () => finished() === all.length, SETTLE_MS);
    return { lost: all.length - finished(), total: all.length };
  } finally {
    bridge.child.kill('SIGKILL');
    await pbx.close();
    await cdr.close();
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const without = await run(false);
  const withLedger = await run(true);
  console.log(
    `follow-ledger: ${without.total} calls ending during a ${OUTAGE_SEC}-s AMI outage (${LIVE} live at the drop, ${GAP} wholly inside it):` +
      ` lost without the ledger ${without.lost}, with the ledger ${withLedger.lost}`,
  );
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
