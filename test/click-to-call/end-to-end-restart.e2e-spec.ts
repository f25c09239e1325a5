import axios from 'axios';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxPortal } from '../../sandbox';
import { loadConfig } from '../../src/config/app-config';
import { createStores, Stores } from '../../src/store/store.module';
import { oauthEnv, PORTAL_ID } from '../auth/oauth-harness';
import { AmiServer } from '../support/ami-server';
import { ADMIN_TOKEN, eventually, PBX_TOKEN, testEnv } from '../support/bridge-harness';
import { BridgeProcess, freePort, startBridgeProcess } from '../support/bridge-process';
import { sandboxCalls, SandboxCall } from '../support/sandbox-inspect';

/**
 * Click-to-call end to end across a dead bridge: the built bridge (dist/main.js, `npm run build` first) as a
 * child process, the sandbox portal clicking through its outbound webhook (or its offline queue), an AMI
 * double for the PBX. Sandbox user 2 = extension 101.
 */

const APP_TOKEN = 'outbound-hook-c2c-restart';
const SECRET = 'restart-ami-s3cret';

interface PortalEventView {
  event: string;
  state: string;
  data: Record<string, unknown>;
}

async function portalEvents(bridge: BridgeProcess): Promise<PortalEventView[]> {
  const { data } = await axios.get(`${bridge.url}/v1/admin/portal-events`, {
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  return (data as { events: PortalEventView[] }).events;
}

const portalCall = async (sandbox: SandboxPortal, callId: string): Promise<SandboxCall | undefined> =>
  (await sandboxCalls(sandbox)).find((call) => call.CALL_ID === callId);

async function click(sandbox: SandboxPortal, phone: string): Promise<string> {
  const { data } = await axios.post(`${sandbox.url}/_sandbox/click`, { phone, userId: 2 });
  return (data as { CALL_ID: string }).CALL_ID;
}

/**
 * Stores a fresh click for the running bridge, as another replica would, and waits for its Originate: the
 * bridge has since looked at everything due before it, so a second dial of an earlier click would be in.
 */
async function laterClickDialled(stores: Stores, ami: AmiServer, portalId: string): Promise<string> {
  const portalCallId = `externalCall.${Date.now().toString(16)}.1732269000`;
  const now = Date.now();
  await stores.dials.add({
    portalId,
    portalCallId,
    kind: 'click',
    userId: 2,
    phoneNumber: '+4930777000999',
    clickedAt: now,
    deadline: now + 60_000,
  });
  await eventually(async () =>
    ami.originates().some((action) => action.Variable === `CRM_CALL_ID=${portalCallId}`) ? true : undefined,
  );
  return portalCallId;
}

describe('click-to-call end to end: kill -9 of the bridge between the click and the originate', () => {
  let sandbox: SandboxPortal;
  let dir: string;
  let amiPort: number;
  let ami: AmiServer | undefined;
  let stores: Stores;
  const children: BridgeProcess[] = [];

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    dir = mkdtempSync(join(tmpdir(), 'bridge-c2c-restart-'));
    amiPort = await freePort();
    stores = await createStores(loadConfig(env(60)));
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

  const env = (timeoutSec: number) =>
    testEnv(sandbox, dir, {
      B24_APPLICATION_TOKEN: APP_TOKEN,
      DIAL_MODE: 'ami',
      AMI_URL: `tcp://crm:${SECRET}@127.0.0.1:${amiPort}`,
      DIAL_TIMEOUT_SEC: String(timeoutSec),
      LOG_LEVEL: 'warn',
    });

  /**
   * A bridge whose PBX does not listen yet takes the sandbox's click (stored, published, one failed
   * attempt), then dies by SIGKILL; returns the portal's CALL_ID.
   */
  async function clickThenKill(timeoutSec: number, phone: string): Promise<string> {
    const first = await startBridgeProcess(env(timeoutSec));
    await axios.post(`${sandbox.url}/_sandbox/events/outbound`, {
      url: `${first.url}/v1/portal/events`,
      applicationToken: APP_TOKEN,
    });
    const portalCallId = await click(sandbox, phone);
    // Killed once the event is processed and the dial request is back to `pending` after a refused attempt
    // (read from the store: a kill while it is `sending` would be taken as sent, by design).
    await eventually(async () => {
      const stored = (await portalEvents(first)).find((event) => event.data.CALL_ID === portalCallId);
      const dial = await stores.dials.find('sandbox', portalCallId);
      return stored?.state === 'processed' && dial?.state === 'pending' && dial.attempts >= 1
        ? true
        : undefined;
    });
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    expect(first.output()).toContain(`PBX unreachable: ECONNREFUSED 127.0.0.1:${amiPort}`);
    expect(first.output()).not.toContain(SECRET);
    await axios.post(`${sandbox.url}/_sandbox/events/outbound`, { url: null });
    return portalCallId;
  }

  it('restarted within DIAL_TIMEOUT_SEC, it dials exactly once, and the PBX report finishes the portal call once', async () => {
    const phone = '+4930777000111';
    const portalCallId = await clickThenKill(60, phone);
    ami = await AmiServer.start('crm', SECRET, amiPort);
    children.push(await startBridgeProcess(env(60)));
    await eventually(async () => (ami!.originates().length > 0 ? true : undefined), 20_000);
    const later = await laterClickDialled(stores, ami, 'sandbox');
    expect(ami.originates()).toEqual([
      expect.objectContaining({
        Channel: 'PJSIP/101',
        Exten: phone,
        Variable: `CRM_CALL_ID=${portalCallId}`,
      }),
      expect.objectContaining({ Variable: `CRM_CALL_ID=${later}` }),
    ]);
    expect((await portalCall(sandbox, portalCallId))?.finished).toBeNull();

    // The PBX reports the call it made (CRM_CALL_ID set by the originate): the portal's call is finished once.
    const callId = `restart-${Date.now()}`;
    const at = new Date();
    const response = await axios.post(
      `${children[0].url}/v1/calls/events`,
      [
        {
          event: 'call.started',
          callId,
          direction: 'outbound',
          phoneNumber: phone,
          extension: '101',
          at: at.toISOString(),
          crmCallId: portalCallId,
        },
        {
          event: 'call.ended',
          callId,
          at: new Date(at.getTime() + 30_000).toISOString(),
          durationSec: 25,
          status: 'answered',
        },
      ],
      { headers: { Authorization: `Bearer ${PBX_TOKEN}` } },
    );
    expect(response.status).toBe(202);
    const call = await eventually(async () => {
      const found = await portalCall(sandbox, portalCallId);
      return found?.finished ? found : undefined;
    }, 20_000);
    expect(call.finished).toMatchObject({ USER_ID: 2, DURATION: 25, STATUS_CODE: '200' });
    expect(call.registerRequests).toBe(1);
    expect((await sandboxCalls(sandbox)).filter((other) => other.EXTERNAL_CALL_ID === callId)).toEqual([]);
  });

  it('restarted past DIAL_TIMEOUT_SEC, it dials nothing and the portal call is finished as failed', async () => {
    const portalCallId = await clickThenKill(3, '+4930777000222');
    // The case itself: the stored deadline (DIAL_TIMEOUT_SEC, by the clock) passes while no bridge runs.
    const { deadline } = (await stores.dials.find('sandbox', portalCallId))!;
    await eventually(async () => (Date.now() > deadline ? true : undefined));
    ami = await AmiServer.start('crm', SECRET, amiPort);
    children.push(await startBridgeProcess(env(3)));
    const call = await eventually(async () => {
      const found = await portalCall(sandbox, portalCallId);
      return found?.finished ? found : undefined;
    }, 20_000);
    expect(call.finished).toMatchObject({
      USER_ID: 2,
      STATUS_CODE: 'OTHER',
      FAILED_REASON: `PBX unreachable: ECONNREFUSED 127.0.0.1:${amiPort}`,
    });
    expect(call.registerRequests).toBe(1);
    expect(
      (await sandboxCalls(sandbox)).filter((other) => other.EXTERNAL_CALL_ID?.startsWith('dial-')),
    ).toEqual([]);
    const later = await laterClickDialled(stores, ami, 'sandbox');
    expect(ami.originates().map((action) => action.Variable)).toEqual([`CRM_CALL_ID=${later}`]);
  });
});

describe('click-to-call end to end: offline events (OAuth, B24_EVENTS=offline)', () => {
  let sandbox: SandboxPortal;
  let dir: string;
  let ami: AmiServer;

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    dir = mkdtempSync(join(tmpdir(), 'bridge-c2c-offline-'));
    ami = await AmiServer.start('crm', SECRET);
  });
  afterAll(async () => {
    await ami.close();
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('clicks made while the bridge is stopped are all dialled, once each, after it starts', async () => {
    const env = testEnv(
      sandbox,
      dir,
      oauthEnv(sandbox, {
        B24_EVENTS: 'offline',
        DIAL_MODE: 'ami',
        AMI_URL: ami.url(),
        DIAL_TIMEOUT_SEC: '60',
        LOG_LEVEL: 'warn',
      }),
    );
    const first = await startBridgeProcess(env);
    try {
      const { data } = await axios.post(
        `${sandbox.url}/_sandbox/apps/${encodeURIComponent(sandbox.oauthApp.clientId)}/install`,
        { handlerUrl: `${first.url}/oauth/install` },
      );
      expect((data as { status: number }).status).toBe(200);
      await eventually(async () => {
        const { data: events } = await axios.get(`${sandbox.url}/_sandbox/events`);
        const offline = (events as { bindings: { event: string; eventType: string }[] }).bindings.filter(
          (binding) => binding.eventType === 'offline',
        );
        return offline.some((binding) => binding.event === 'ONEXTERNALCALLSTART') ? true : undefined;
      });
    } finally {
      first.child.kill('SIGTERM');
      await first.exited;
    }

    const phones = ['+4930777100001', '+4930777100002', '+4930777100003'];
    const callIds: string[] = [];
    // No bridge runs: the clicks wait in the portal's offline queue.
    for (const phone of phones) callIds.push(await click(sandbox, phone));
    expect(ami.originates()).toEqual([]);

    const second = await startBridgeProcess(env);
    try {
      await eventually(async () => (ami.originates().length >= 3 ? true : undefined), 20_000);
      const stores = await createStores(loadConfig(env));
      let later: string;
      try {
        later = await laterClickDialled(stores, ami, PORTAL_ID);
      } finally {
        await stores.calls.close();
      }
      expect(ami.originates().at(-1)).toMatchObject({ Variable: `CRM_CALL_ID=${later}` });
      const originates = ami.originates().slice(0, -1);
      expect(originates).toHaveLength(3);
      expect(originates.map((action) => action.Variable).sort()).toEqual(
        callIds.map((callId) => `CRM_CALL_ID=${callId}`).sort(),
      );
      for (const [index, callId] of callIds.entries()) {
        expect(originates.find((action) => action.Variable === `CRM_CALL_ID=${callId}`)).toMatchObject({
          Channel: 'PJSIP/101',
          Exten: phones[index],
        });
      }
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });
});
