import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxPortal } from '../../sandbox';
import { AmiDouble, CallDescription } from '../support/ami-double';
import { eventually, testEnv } from '../support/bridge-harness';
import { startBridgeProcess } from '../support/bridge-process';
import { CdrDatabase, CdrWriter } from '../support/cdr-database';
import { callsByExternalId } from '../support/sandbox-inspect';

/**
 * (b) The bridge (dist/main.js, a real child process) follows AMI with the ledger, is killed with -9 while a
 * call is up, and the call ends while nobody listens (another starts and ends too). Restarted on the same
 * store, it reads the CDR table from its durable position: both calls reach the portal exactly once.
 */
jest.setTimeout(180_000);

describe('the ledger across kill -9 (PBX_EVENTS=ami + ASTERISK_CDR_URL)', () => {
  let sandbox: SandboxPortal;
  let dir: string;
  let pbx: AmiDouble;
  let cdr: CdrDatabase;
  let writer: CdrWriter;

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    dir = mkdtempSync(join(tmpdir(), 'bridge-ledger-crash-'));
    pbx = await AmiDouble.start();
    cdr = await CdrDatabase.create('ledger_crash');
    writer = new CdrWriter(cdr, pbx);
  });
  afterAll(async () => {
    await pbx.close();
    await cdr.close();
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const inbound = (from: string, extra: Partial<CallDescription> = {}): CallDescription => ({
    kind: 'inbound',
    from,
    to: '101',
    answeredBy: '101',
    talk: 8,
    ...extra,
  });

  const finishedOnce = (callId: string) =>
    eventually(async () => {
      const calls = await callsByExternalId(sandbox, callId);
      return calls.length === 1 && calls[0].finished ? calls[0] : undefined;
    }, 60_000);

  it('delivers the call that ended while the bridge was dead, once', async () => {
    const env = testEnv(sandbox, dir, {
      LOG_LEVEL: 'warn',
      PBX_EVENTS: 'ami',
      AMI_URL: pbx.url(),
      ASTERISK_CDR_URL: cdr.url,
      DELIVERY_MAX_BACKOFF_SEC: '1',
    });
    const first = await startBridgeProcess(env);
    const ready = async (url: string) => {
      const body = (await (await fetch(`${url}/health/ready`)).json()) as {
        details?: Record<
          string,
          { connected?: boolean; ledger?: { connected?: boolean; position?: string } }
        >;
      };
      return body.details?.pbxFollow;
    };
    await eventually(async () => ((await ready(first.url))?.ledger?.connected ? true : undefined), 30_000);
    const before = pbx.play(inbound('+4915133000001', { talk: 3 }));
    await before.done;
    await finishedOnce(before.linkedid);
    // The first bridge stored a position past the first call.
    await eventually(async () => ((await ready(first.url))?.ledger?.position ? true : undefined));

    const live = pbx.play(inbound('+4915133000002', { holdOpen: true }));
    await live.answered;
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    live.hangUp();
    const meanwhile = pbx.play({
      kind: 'outbound',
      from: '102',
      to: '+4930777000',
      answeredBy: 'yes',
      talk: 4,
    });
    await Promise.all([live.done, meanwhile.done]);
    await writer.flushed();

    const second = await startBridgeProcess(env);
    try {
      const [spanning, unseen] = await Promise.all([
        finishedOnce(live.linkedid),
        finishedOnce(meanwhile.linkedid),
      ]);
      expect(spanning).toMatchObject({ USER_ID: 2, registerRequests: 1 });
      expect(spanning.finished?.STATUS_CODE).toBe('200');
      expect(unseen).toMatchObject({ TYPE: 1, USER_ID: 3, registerRequests: 1 });
      await new Promise((resolve) => setTimeout(resolve, 3000));
      for (const call of [before, live, meanwhile]) {
        expect(await callsByExternalId(sandbox, call.linkedid)).toHaveLength(1);
      }
      expect(second.output()).not.toContain(new URL(cdr.url).password);
      expect(first.output()).not.toContain(new URL(cdr.url).password);
    } finally {
      second.child.kill('SIGKILL');
      await second.exited;
    }
  });
});
