import { PortalRuntime } from '../../src/tenancy/portal-runtime';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PortalClick } from '../../src/clicks/click';
import { DialStore } from '../../src/store/dial-store';
import { createStores } from '../../src/store/store.module';
import { createServer } from 'node:http';
import { createServer as createTcpServer, Socket } from 'node:net';
import { AmiServer } from '../support/ami-server';
import { EslServer } from '../support/esl-server';
import { eventually, Harness, PBX_TOKEN, startHarness } from '../support/bridge-harness';
import { freePort } from '../support/bridge-process';
import { storedEvents } from '../support/stored-events';

const SECRET = 'ami-w0rker-secret';

function click(callId: string, extra: Partial<PortalClick> = {}): PortalClick {
  return {
    portalId: 'sandbox',
    kind: 'click',
    portalCallId: callId,
    userId: 2,
    phoneNumber: '+4930555123',
    crmEntityType: 'CONTACT',
    crmEntityId: 7,
    clickedAt: Date.now(),
    ...extra,
  };
}

/** The bridge with DIAL_MODE=ami against an AMI double on `amiPort` (listening or not). */
async function bridge(amiPort: number, env: Record<string, string> = {}, dir?: string): Promise<Harness> {
  return startHarness(
    {
      DIAL_MODE: 'ami',
      AMI_URL: `tcp://crm:${SECRET}@127.0.0.1:${amiPort}`,
      DIAL_TIMEOUT_SEC: '10',
      ...env,
    },
    {},
    dir ? { dir } : undefined,
  );
}

async function dialRequest(harness: Harness, callId: string) {
  return harness.app.get(DialStore).find('sandbox', callId);
}

/**
 * Publishes a fresh click and waits for its Originate: the worker has since taken everything due before
 * it, so a second dial of an earlier request would have come by now.
 */
async function laterClickDialled(harness: Harness, ami: AmiServer, callId: string): Promise<void> {
  await harness.app.get(PortalRuntime).bus.publish(click(callId));
  await eventually(async () =>
    ami.originates().some((action) => action.Variable === `CRM_CALL_ID=${callId}`) ? true : undefined,
  );
}

describe('Click-to-call dialer (real bridge, real store, AMI double over TCP)', () => {
  let harness: Harness | undefined;
  let ami: AmiServer | undefined;

  afterEach(async () => {
    await harness?.close();
    await ami?.close();
    harness = undefined;
    ami = undefined;
  });

  it('a click published on the ClickBus rings the employee extension once, even when published again', async () => {
    ami = await AmiServer.start('crm', SECRET);
    harness = await bridge(ami.port);
    const bus = harness.app.get(PortalRuntime).bus;
    expect(bus.subscribers).toContain('dialer');
    const theClick = click('externalCall.c1.1732269000');
    await bus.publish(theClick);
    const request = await dialRequest(harness, 'externalCall.c1.1732269000');
    expect(request).toMatchObject({ kind: 'click', userId: 2, phoneNumber: '+4930555123', crmEntityId: 7 });
    expect(request!.deadline).toBe(theClick.clickedAt + 10_000);
    await eventually(async () => (ami!.originates().length ? true : undefined));
    expect(ami.originates()[0]).toMatchObject({
      Channel: 'PJSIP/101',
      Context: 'from-internal',
      Exten: '+4930555123',
      Variable: 'CRM_CALL_ID=externalCall.c1.1732269000',
    });
    await eventually(async () =>
      (await dialRequest(harness!, 'externalCall.c1.1732269000'))?.state === 'sent' ? true : undefined,
    );
    await bus.publish(theClick);
    await laterClickDialled(harness, ami, 'externalCall.c2.1732269000');
    expect(ami.originates().map((action) => action.Variable)).toEqual([
      'CRM_CALL_ID=externalCall.c1.1732269000',
      'CRM_CALL_ID=externalCall.c2.1732269000',
    ]);
    const metrics = await harness.http.get('/metrics');
    expect(metrics.text).toMatch(/bridge_dials_total\{mode="ami",outcome="sent"\} 2/);
    expect(metrics.text).toMatch(/bridge_click_to_originate_seconds_count\{mode="ami"\} 2/);
    const ready = await harness.http.get('/health/ready');
    expect(ready.body.details.dialer).toMatchObject({
      mode: 'ami',
      pbxReachable: true,
      target: `ami tcp://127.0.0.1:${ami.port}`,
    });
    expect(JSON.stringify(ready.body)).not.toContain(SECRET);
  });

  it('PBX down, then up within DIAL_TIMEOUT_SEC: dials once', async () => {
    const port = await freePort();
    harness = await bridge(port);
    await harness.app.get(PortalRuntime).bus.publish(click('externalCall.1a7e.1732269000'));
    await eventually(async () =>
      (await dialRequest(harness!, 'externalCall.1a7e.1732269000'))!.attempts >= 2 ? true : undefined,
    );
    const ready = await harness.http.get('/health/ready');
    expect(ready.body.details.dialer).toMatchObject({ pbxReachable: false });
    expect(ready.body.details.dialer.lastError).toBe(`PBX unreachable: ECONNREFUSED 127.0.0.1:${port}`);
    ami = await AmiServer.start('crm', SECRET, port);
    await eventually(async () =>
      (await dialRequest(harness!, 'externalCall.1a7e.1732269000'))?.state === 'sent' ? true : undefined,
    );
    await laterClickDialled(harness, ami, 'externalCall.1a7f.1732269000');
    expect(ami.originates().map((action) => action.Variable)).toEqual([
      'CRM_CALL_ID=externalCall.1a7e.1732269000',
      'CRM_CALL_ID=externalCall.1a7f.1732269000',
    ]);
  });

  it('PBX down past DIAL_TIMEOUT_SEC: the portal call is finished as failed through intake, never dialled', async () => {
    const port = await freePort();
    harness = await bridge(port, { DIAL_TIMEOUT_SEC: '2' });
    await harness.app.get(PortalRuntime).bus.publish(click('externalCall.90e.1732269000'));
    const request = await eventually(async () => {
      const found = await dialRequest(harness!, 'externalCall.90e.1732269000');
      return found?.state === 'failed' ? found : undefined;
    });
    expect(request.lastError).toBe(`PBX unreachable: ECONNREFUSED 127.0.0.1:${port}`);
    const events = await storedEvents(harness.config.DATABASE_URL!, 'dial-externalCall.90e.1732269000');
    const ended = events.find((event) => event.event === 'call.ended');
    expect(ended).toMatchObject({
      callId: 'dial-externalCall.90e.1732269000',
      crmCallId: 'externalCall.90e.1732269000',
      direction: 'outbound',
      phoneNumber: '+4930555123',
      extension: '101',
      userId: 2,
      status: 'failed',
      failedReason: `PBX unreachable: ECONNREFUSED 127.0.0.1:${port}`,
    });
    const call = await harness.http
      .get('/v1/calls/dial-externalCall.90e.1732269000')
      .set('Authorization', `Bearer ${PBX_TOKEN}`);
    expect(call.status).toBe(200);
    const metrics = await harness.http.get('/metrics');
    expect(metrics.text).toMatch(/bridge_dials_total\{mode="ami",outcome="failed"\} 1/);
  });

  it('an employee without an internal number: failed at once with a clear reason', async () => {
    ami = await AmiServer.start('crm', SECRET);
    harness = await bridge(ami.port);
    await harness.app.get(PortalRuntime).bus.publish(click('externalCall.0b0d1.1732269000', { userId: 999 }));
    const request = await eventually(async () => {
      const found = await dialRequest(harness!, 'externalCall.0b0d1.1732269000');
      return found?.state === 'failed' ? found : undefined;
    });
    expect(request.lastError).toBe('employee 999 has no internal number (UF_PHONE_INNER) or is inactive');
    const events = await storedEvents(harness.config.DATABASE_URL!, 'dial-externalCall.0b0d1.1732269000');
    expect(events.find((event) => event.event === 'call.ended')).toMatchObject({
      crmCallId: 'externalCall.0b0d1.1732269000',
      status: 'failed',
      failedReason: request.lastError,
    });
    expect(ami.originates()).toEqual([]);
  });

  it('a callback rings the responsible employee, else B24_DEFAULT_USER_ID', async () => {
    ami = await AmiServer.start('crm', SECRET);
    harness = await bridge(ami.port, { B24_DEFAULT_USER_ID: '3' });
    await harness.app.get(PortalRuntime).bus.publish(
      click('externalCall.cb.1732269000', {
        kind: 'callback',
        userId: undefined,
        phoneNumber: '+4930999000',
      }),
    );
    await eventually(async () => (ami!.originates().length ? true : undefined));
    expect(ami.originates()[0]).toMatchObject({ Channel: 'PJSIP/102', Exten: '+4930999000' });
    expect(await dialRequest(harness, 'externalCall.cb.1732269000')).toMatchObject({
      state: 'sent',
      userId: 3,
      extension: '102',
    });
  });

  it('a callback from a known client rings the client responsible (ASSIGNED_BY_ID)', async () => {
    ami = await AmiServer.start('crm', SECRET);
    harness = await bridge(ami.port, { B24_DEFAULT_USER_ID: '3' });
    // The sandbox's seeded contact with +49 151 12345678 is assigned to user 2 (internal number 101).
    await harness.app.get(PortalRuntime).bus.publish(
      click('externalCall.cb2.1732269000', {
        kind: 'callback',
        userId: undefined,
        phoneNumber: '+4915112345678',
      }),
    );
    await eventually(async () => (ami!.originates().length ? true : undefined));
    expect(ami.originates()[0]).toMatchObject({ Channel: 'PJSIP/101', Exten: '+4915112345678' });
  });

  it('DIAL_MODE=esl: the click goes out as bgapi originate with crm_call_id', async () => {
    const esl = await EslServer.start('esl-pw');
    try {
      harness = await startHarness({ DIAL_MODE: 'esl', ESL_URL: esl.url() });
      await harness.app.get(PortalRuntime).bus.publish(click('externalCall.f5.1732269000'));
      await eventually(async () => (esl.originates().length ? true : undefined));
      expect(esl.originates()).toEqual([
        'bgapi originate {crm_call_id=externalCall.f5.1732269000,crm_line=}user/101 +4930555123 XML default',
      ]);
      const ready = await harness.http.get('/health/ready');
      expect(ready.body.details.dialer).toMatchObject({ mode: 'esl', pbxReachable: true });
      expect(JSON.stringify(ready.body)).not.toContain('esl-pw');
    } finally {
      await esl.close();
    }
  });

  it('DIAL_MODE=http: one POST per click with the bearer token', async () => {
    const received: { url: string; auth?: string; body: string }[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        received.push({ url: req.url!, auth: req.headers.authorization, body });
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as { port: number }).port;
      harness = await startHarness({
        DIAL_MODE: 'http',
        DIAL_URL: `http://127.0.0.1:${port}/dial?ext={extension}&to={number}`,
        DIAL_AUTH: 'bearer:dial-t0ken',
      });
      await harness.app.get(PortalRuntime).bus.publish(click('externalCall.eb.1732269000'));
      await eventually(async () =>
        (await dialRequest(harness!, 'externalCall.eb.1732269000'))?.state === 'sent' ? true : undefined,
      );
      expect(received).toEqual([
        {
          url: '/dial?ext=101&to=%2B4930555123',
          auth: 'Bearer dial-t0ken',
          body: JSON.stringify({
            extension: '101',
            number: '+4930555123',
            crmCallId: 'externalCall.eb.1732269000',
            userId: 2,
          }),
        },
      ]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('a hostile PBX sending an endless line: each attempt is cut off, retried with the reason, the bridge stays up', async () => {
    const sockets = new Set<Socket>();
    const hostile = createTcpServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
      const more = () => {
        while (!socket.destroyed && socket.write('A'.repeat(16 * 1024)));
        if (!socket.destroyed) socket.once('drain', more);
      };
      more();
    });
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
    try {
      const port = (hostile.address() as { port: number }).port;
      harness = await bridge(port);
      // This jest worker's RSS holds whatever specs ran in it before: what the attack adds is measured.
      const rssBefore = process.memoryUsage().rss;
      await harness.app.get(PortalRuntime).bus.publish(click('externalCall.a0571e.1732269000'));
      const request = await eventually(async () => {
        const found = await dialRequest(harness!, 'externalCall.a0571e.1732269000');
        return found && found.attempts >= 2 ? found : undefined;
      });
      expect(request).toMatchObject({
        state: 'pending',
        lastError: `PBX sent a line or message head longer than 65536 bytes: connection dropped (127.0.0.1:${port})`,
      });
      expect((await harness.http.get('/health/live')).status).toBe(200);
      expect(process.memoryUsage().rss - rssBefore).toBeLessThan(256 * 1024 * 1024);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => hostile.close(resolve));
    }
  });

  it('DIAL_MODE unset: nobody subscribes, health shows the dialer off', async () => {
    harness = await startHarness();
    expect(harness.app.get(PortalRuntime).bus.subscribers).not.toContain('dialer');
    const ready = await harness.http.get('/health/ready');
    expect(ready.body.details.dialer).toMatchObject({ mode: null, pbxReachable: null });
  });

  describe('a restart finds requests stored before it', () => {
    let dir: string;
    beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'bridge-dial-'))));
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('within the deadline it dials once; past it the call is finished as failed; `sending` is taken as sent', async () => {
      const port = await freePort();
      // A first run made the database; what a bridge had stored when it died is written with no bridge
      // running (a live dialer would claim the requests before the claim below could).
      harness = await bridge(port, { DIAL_TIMEOUT_SEC: '60' }, dir);
      const config = harness.config;
      await harness.close();
      harness = undefined;
      const stores = await createStores(config);
      const store = stores.dials;
      const now = Date.now();
      await store.add({
        ...click('externalCall.01d.1732269000'),
        clickedAt: now - 120_000,
        deadline: now - 60_000,
      });
      await store.add({ ...click('externalCall.f7e54.1732269000'), deadline: now + 60_000 });
      await store.add({ ...click('externalCall.c7a54ed.1732269000'), deadline: now + 60_000 });
      // As if a bridge had died during this one's originate: claimed, `sending`, its claim run out.
      const claimed = await store.claim('sandbox', 'a-replica-that-died', 0, 10);
      const crashed = claimed.find((request) => request.portalCallId === 'externalCall.c7a54ed.1732269000')!;
      expect(
        await store.update('sandbox', crashed.portalCallId, {
          claim: crashed.claim!,
          from: ['pending'],
          change: { state: 'sending', dueInMs: -1 },
        }),
      ).toBe(true);
      await stores.calls.close();

      ami = await AmiServer.start('crm', SECRET, port);
      harness = await bridge(port, { DIAL_TIMEOUT_SEC: '60' }, dir);
      await eventually(async () =>
        (await dialRequest(harness!, 'externalCall.f7e54.1732269000'))?.state === 'sent' ? true : undefined,
      );
      const old = await eventually(async () => {
        const found = await dialRequest(harness!, 'externalCall.01d.1732269000');
        return found?.state === 'failed' ? found : undefined;
      });
      expect(old.lastError).toBe('not dialled within DIAL_TIMEOUT_SEC');
      expect(await dialRequest(harness, 'externalCall.c7a54ed.1732269000')).toMatchObject({ state: 'sent' });
      await laterClickDialled(harness, ami, 'externalCall.f7e55.1732269000');
      expect(ami.originates().map((action) => action.Variable)).toEqual([
        'CRM_CALL_ID=externalCall.f7e54.1732269000',
        'CRM_CALL_ID=externalCall.f7e55.1732269000',
      ]);
      const events = await storedEvents(harness.config.DATABASE_URL!, 'dial-externalCall.01d.1732269000');
      expect(events.find((event) => event.event === 'call.ended')).toMatchObject({
        crmCallId: 'externalCall.01d.1732269000',
        status: 'failed',
      });
    });
  });
});
