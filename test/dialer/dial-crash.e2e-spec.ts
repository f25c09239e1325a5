import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxPortal } from '../../sandbox';
import { loadConfig } from '../../src/config/app-config';
import { createStores, Stores } from '../../src/store/store.module';
import { DialRequest } from '../../src/store/dial-store';
import { AmiServer } from '../support/ami-server';
import { eventually, testEnv } from '../support/bridge-harness';
import { BridgeProcess, freePort, startBridgeProcess } from '../support/bridge-process';
import { storedEvents } from '../support/stored-events';

const SECRET = 'crash-ami-secret';

/**
 * `kill -9` of a real bridge process (dist/main.js) after a click was stored and before the PBX took it (the
 * AMI double is not listening yet): the restarted bridge dials it once within the deadline, or finishes the
 * portal's call as failed past it. Clicks are stored through the store API from this process, as the
 * portal-events side would store them through the ClickBus.
 */
describe('dialer crash recovery (SIGKILL)', () => {
  let sandbox: SandboxPortal;
  let dir: string;
  let stores: Stores;
  let env: Record<string, string>;
  let amiPort: number;
  let ami: AmiServer | undefined;
  const children: BridgeProcess[] = [];

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    dir = mkdtempSync(join(tmpdir(), 'bridge-dial-crash-'));
    amiPort = await freePort();
    env = testEnv(sandbox, dir, {
      DIAL_MODE: 'ami',
      AMI_URL: `tcp://crm:${SECRET}@127.0.0.1:${amiPort}`,
      LOG_LEVEL: 'warn',
    });
    stores = await createStores(loadConfig(env));
  });
  afterEach(async () => {
    for (const child of children.splice(0)) {
      child.child.kill('SIGKILL');
      await child.exited;
    }
    await ami?.close();
    ami = undefined;
  });
  afterAll(async () => {
    await stores.calls.close();
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function storeClick(callId: string, timeoutMs: number): Promise<void> {
    const now = Date.now();
    await stores.dials.add({
      portalId: 'sandbox',
      portalCallId: callId,
      kind: 'click',
      userId: 2,
      phoneNumber: '+4930777888',
      clickedAt: now,
      deadline: now + timeoutMs,
    });
  }

  const request = (callId: string): Promise<DialRequest | undefined> => stores.dials.find('sandbox', callId);

  /**
   * Stores the click once a bridge runs (its deadline then counts from a live dialer, not from a start a
   * loaded machine makes slow), and kills that bridge by SIGKILL after its first failed attempt.
   */
  async function killAfterAnAttempt(callId: string, timeoutMs: number): Promise<void> {
    const first = await startBridgeProcess(env);
    await storeClick(callId, timeoutMs);
    await eventually(async () => ((await request(callId))!.attempts >= 1 ? true : undefined));
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    // The retries are logged (LOG_LEVEL=warn) with the cause and the host, never AMI_URL's secret.
    expect(first.output()).toContain(`PBX unreachable: ECONNREFUSED 127.0.0.1:${amiPort}`);
    expect(first.output()).not.toContain(SECRET);
  }

  it('restarted within DIAL_TIMEOUT_SEC, it dials once', async () => {
    await killAfterAnAttempt('externalCall.a1.1732269000', 60_000);
    expect((await request('externalCall.a1.1732269000'))!.state).toBe('pending');

    ami = await AmiServer.start('crm', SECRET, amiPort);
    children.push(await startBridgeProcess(env));
    await eventually(
      async () => ((await request('externalCall.a1.1732269000'))?.state === 'sent' ? true : undefined),
      30_000,
    );
    // A request stored after it is dialled too: the restarted bridge had its chance to dial a1 again.
    await storeClick('externalCall.a3.1732269000', 60_000);
    await eventually(
      async () => ((await request('externalCall.a3.1732269000'))?.state === 'sent' ? true : undefined),
      30_000,
    );
    expect(ami.originates().map((action) => action.Variable)).toEqual([
      'CRM_CALL_ID=externalCall.a1.1732269000',
      'CRM_CALL_ID=externalCall.a3.1732269000',
    ]);
    expect(ami.originates()[0]).toMatchObject({ Channel: 'PJSIP/101', Exten: '+4930777888' });
  });

  it('restarted past DIAL_TIMEOUT_SEC, the portal call is finished as failed and nothing is dialled', async () => {
    await killAfterAnAttempt('externalCall.a2.1732269000', 2500);
    const left = await request('externalCall.a2.1732269000');
    // The case itself: the stored deadline (DIAL_TIMEOUT_SEC, by the clock) passes while no bridge runs.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, left!.deadline - Date.now() + 200)));

    ami = await AmiServer.start('crm', SECRET, amiPort);
    children.push(await startBridgeProcess(env));
    const failed = await eventually(async () => {
      const found = await request('externalCall.a2.1732269000');
      return found?.state === 'failed' ? found : undefined;
    }, 30_000);
    expect(failed.lastError).toBe(`PBX unreachable: ECONNREFUSED 127.0.0.1:${amiPort}`);
    const events = await storedEvents(env.DATABASE_URL, 'dial-externalCall.a2.1732269000');
    expect(events.find((event) => event.event === 'call.ended')).toMatchObject({
      crmCallId: 'externalCall.a2.1732269000',
      direction: 'outbound',
      status: 'failed',
      failedReason: `PBX unreachable: ECONNREFUSED 127.0.0.1:${amiPort}`,
    });
    expect(ami.originates()).toEqual([]);
  });
});
