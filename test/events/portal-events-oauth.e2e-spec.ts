import axios from 'axios';
import request from 'supertest';
import { SandboxPortal } from '../../sandbox';
import { installApp, OAuthBridge, oauthEnv, startOAuthBridge, tempDir } from '../auth/oauth-harness';
import { ADMIN_TOKEN, eventually, testEnv } from '../support/bridge-harness';
import { startBridgeProcess } from '../support/bridge-process';

interface SandboxEvents {
  bindings: { clientId: string; event: string; handler: string; eventType: string }[];
  offline: { ID: number; EVENT_NAME: string; processId: string | null }[];
  lines: { NUMBER: string }[];
  posts: { event: string; status: number | null }[];
}

async function sandboxEvents(sandbox: SandboxPortal): Promise<SandboxEvents> {
  return (await request(sandbox.url).get('/_sandbox/events').expect(200)).body as SandboxEvents;
}

async function storedEvents(bridge: OAuthBridge) {
  const { body } = await bridge.http
    .get('/v1/admin/portal-events')
    .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
    .expect(200);
  return body.events as { event: string; state: string; data: Record<string, unknown> }[];
}

const click = (sandbox: SandboxPortal, phone: string) =>
  request(sandbox.url).post('/_sandbox/click').send({ phone, userId: 1 }).expect(200);

describe('portal events in OAuth mode', () => {
  let sandbox: SandboxPortal;
  let temp: ReturnType<typeof tempDir>;

  beforeEach(async () => {
    sandbox = await SandboxPortal.start();
    temp = tempDir();
  });
  afterEach(async () => {
    await sandbox.close();
    temp.remove();
  });

  it('binds every handler online at install and again at re-install, registers the line once, and takes clicks', async () => {
    const bridge = await startOAuthBridge(sandbox, temp.dir);
    try {
      expect((await installApp(sandbox, bridge)).status).toBe(200);
      const handler = `${bridge.url}/v1/portal/events`;
      const bound = await eventually(async () => {
        const events = await sandboxEvents(sandbox);
        return events.bindings.length === 12 && events.lines.length === 1 ? events : undefined;
      });
      expect(new Set(bound.bindings.map((binding) => binding.handler))).toEqual(new Set([handler]));
      expect(bound.bindings.map((binding) => binding.event)).toEqual(
        expect.arrayContaining(['ONEXTERNALCALLSTART', 'ONEXTERNALCALLBACKSTART', 'ONCRMLEADDELETE']),
      );
      expect(bound.lines).toEqual([expect.objectContaining({ NUMBER: 'pbx-bridge' })]);

      // A re-install drops the handlers on the portal: the bridge binds them again, the line stays one.
      const boundAt = async () =>
        ((await bridge.portalHealth()).events as { boundAt: string | null }).boundAt;
      // The install's binding pass has finished (events, then the line) before the re-install starts another.
      const firstPass = await eventually(async () => (await boundAt()) ?? undefined);
      expect((await installApp(sandbox, bridge)).status).toBe(200);
      // The re-install's pass has finished too: nothing more comes.
      await eventually(async () => {
        const at = await boundAt();
        return at !== null && at !== firstPass ? true : undefined;
      });
      const after = await sandboxEvents(sandbox);
      expect(after.bindings).toHaveLength(12);
      expect(after.lines).toHaveLength(1);
      const health = await bridge.portalHealth();
      expect(health.events).toMatchObject({ mode: 'online', boundEvents: 12, line: 'pbx-bridge' });
      expect(String((health.events as { lineAction: string }).lineAction)).toContain('default number');

      const { body: clicked } = await click(sandbox, '+49 151 1234-5678');
      const stored = await eventually(async () => {
        const events = (await storedEvents(bridge)).filter((event) => event.data.CALL_ID === clicked.CALL_ID);
        return events[0]?.state === 'ignored' ? events : undefined;
      });
      expect(stored).toHaveLength(1);

      // A post with another token is refused and stores nothing.
      await bridge.http
        .post('/v1/portal/events')
        .type('form')
        .send('event=ONEXTERNALCALLSTART&data[CALL_ID]=forged&auth[application_token]=forged')
        .expect(401);
      expect((await storedEvents(bridge)).some((event) => event.data.CALL_ID === 'forged')).toBe(false);
    } finally {
      await bridge.close();
    }
  });

  // Child processes of the built bridge (`npm run build` first): the first is killed, the second starts later.
  it('offline: events queued while the bridge process is down are all stored and handled after it starts, and cleared', async () => {
    const env = testEnv(sandbox, temp.dir, oauthEnv(sandbox, { B24_EVENTS: 'offline' }));
    const first = await startBridgeProcess(env);
    try {
      const { data } = await axios.post(
        `${sandbox.url}/_sandbox/apps/${encodeURIComponent(sandbox.oauthApp.clientId)}/install`,
        { handlerUrl: `${first.url}/oauth/install` },
      );
      expect(data.status).toBe(200);
      await eventually(async () => {
        const events = await sandboxEvents(sandbox);
        return events.bindings.filter((binding) => binding.eventType === 'offline').length === 11
          ? events
          : undefined;
      });
    } finally {
      first.child.kill('SIGKILL');
      await first.exited;
    }
    const callIds: string[] = [];
    for (const phone of ['+49 151 1234-5678', '+49 30 1234567', '+49 40 7654321']) {
      callIds.push((await click(sandbox, phone)).body.CALL_ID);
    }
    await request(sandbox.url)
      .post('/_sandbox/crm/contact')
      .send({ fields: { NAME: 'Offline', PHONE: [{ VALUE: '+49 89 5550123' }] } })
      .expect(200);
    expect((await sandboxEvents(sandbox)).offline).toHaveLength(4);

    const second = await startBridgeProcess(env);
    try {
      const listed = async () =>
        (
          await axios.get(`${second.url}/v1/admin/portal-events`, {
            headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
          })
        ).data.events as { event: string; state: string; data: Record<string, unknown> }[];
      const handled = await eventually(async () => {
        const events = await listed();
        return events.length === 4 && events.every((event) => event.state !== 'pending') ? events : undefined;
      }, 15000);
      expect(
        handled.filter((event) => event.event === 'ONEXTERNALCALLSTART').map((event) => event.data.CALL_ID),
      ).toEqual(expect.arrayContaining(callIds));
      expect(handled.find((event) => event.event === 'ONCRMCONTACTADD')?.state).toBe('processed');
      await eventually(
        async () => ((await sandboxEvents(sandbox)).offline.length === 0 ? true : undefined),
        5000,
      );
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });
});
