import request from 'supertest';
import { SandboxPortal, SandboxTenant } from '../../sandbox';
import { ended, eventually, started } from '../support/bridge-harness';
import { BridgeProcess, startBridgeProcess } from '../support/bridge-process';
import { install, multiEnv, tempDir } from '../support/multi-harness';

/**
 * Every change made on the application's page is one audit line in the bridge's log: the built bridge as a
 * child process (LOG_FORMAT=json, as in a container), its stdout read line by line. The page is driven over
 * HTTP as the browser posts it (the browser specs beside this one click the same forms): the portal's form
 * post opens a session, then a settings change, a PBX token created, failed calls re-queued (one, then all),
 * the token revoked. Repeating a change that has nothing left to change writes no line.
 */
describe('the application page writes one audit line per change (child process, JSON logs)', () => {
  let sandbox: SandboxPortal;
  let alpha: SandboxTenant;
  let temp: { dir: string; remove(): void };
  let bridge: BridgeProcess;
  let http: ReturnType<typeof request>;

  const records = () =>
    bridge
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  const auditLines = () => records().filter((record) => record.audit !== undefined);

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    alpha = sandbox.addPortal({ name: 'alpha' });
    temp = tempDir('bridge-app-audit-');
    bridge = await startBridgeProcess(
      multiEnv(sandbox, temp.dir, {
        LOG_FORMAT: 'json',
        LOG_LEVEL: 'log',
        DELIVERY_MAX_ATTEMPTS: '2',
        DELIVERY_MAX_BACKOFF_SEC: '1',
        B24_TIMEOUT_MS: '5000',
      }),
    );
    http = request(bridge.url);
    expect(await install(alpha, bridge.url)).toBe(200);
  }, 60_000);

  afterAll(async () => {
    bridge?.child.kill('SIGTERM');
    await bridge?.exited;
    await sandbox?.close();
    temp?.remove();
  });

  it('settings, token created, calls re-queued, token revoked: one line each, naming portal, user and what, never the token', async () => {
    const authId = alpha.issueTokens(undefined, 1)?.access_token ?? '';
    const entry = await http
      .post('/app?DOMAIN=x&LANG=en')
      .type('form')
      .send({ AUTH_ID: authId, REFRESH_ID: 'r', member_id: alpha.memberId, PLACEMENT: 'DEFAULT' });
    expect(entry.status).toBe(200);
    // The session rides in the page's forms (a hidden field), never in an address.
    const session = /name="session" value="([^"]+)"/.exec(entry.text)?.[1] ?? '';
    expect(session).not.toBe('');
    expect(entry.headers.location).toBeUndefined();
    expect(auditLines()).toEqual([]);

    // 1. Settings: the default employee (Anna, user 2) and the country.
    const saved = await http
      .post('/app/settings')
      .type('form')
      .send({ session, defaultUserId: '2', defaultCountry: 'AT', missedCallTask: '', DIAL_MODE: '' });
    expect(saved.status).toBe(200);
    // The same values again change nothing: no line.
    const again = await http
      .post('/app/settings')
      .type('form')
      .send({ session, defaultUserId: '2', defaultCountry: 'AT', missedCallTask: '', DIAL_MODE: '' });
    expect(again.status).toBe(200);

    // 2. A PBX token, shown once in the answer.
    const created = await http.post('/app/tokens').type('form').send({ session, label: 'office PBX' });
    expect(created.status).toBe(200);
    const token = /<output id="new-token">(pbx_[^<]+)<\/output>/.exec(created.text)?.[1] ?? '';
    expect(token).not.toBe('');
    const tokenId = /\/tokens\/([^/"]+)\/revoke/.exec(created.text)?.[1] ?? '';
    expect(tokenId).not.toBe('');

    // 3. Calls the portal refuses, re-queued once the portal takes them: one by its button, one by "all
    // failed". Extension 177 is nobody's: the call goes to the default employee, which shows the settings
    // change took effect without a restart.
    const callId = `audit-${Date.now()}`;
    const secondId = `${callId}-2`;
    const failed = async (id: string) => {
      alpha.injectFault({ kind: 'refuse', text: id, status: 403 });
      const post = await http
        .post('/v1/calls/events')
        .set('Authorization', `Bearer ${token}`)
        .send([started(id, { extension: '177' }), ended(id)]);
      expect(post.status).toBe(202);
      await eventually(async () => {
        const call = await http.get(`/v1/calls/${id}`).set('Authorization', `Bearer ${token}`);
        return call.body.state === 'failed' ? call : undefined;
      }, 40_000);
      alpha.clearFaults();
    };
    const deliveredAt = (id: string) =>
      eventually(async () => {
        const call = alpha.calls().find((candidate) => candidate.EXTERNAL_CALL_ID === id);
        return call?.finished ? call : undefined;
      }, 40_000);
    await failed(callId);
    const requeued = await http
      .post(`/app/calls/${encodeURIComponent(callId)}/requeue`)
      .type('form')
      .send({ session });
    expect(requeued.status).toBe(200);
    expect(Number((await deliveredAt(callId)).USER_ID)).toBe(2);
    // Delivered now: a second press re-queues nothing and writes no line.
    expect(
      (
        await http
          .post(`/app/calls/${encodeURIComponent(callId)}/requeue`)
          .type('form')
          .send({ session })
      ).status,
    ).toBe(200);
    await failed(secondId);
    expect((await http.post(`/app/calls/requeue-failed`).type('form').send({ session })).status).toBe(200);
    await deliveredAt(secondId);

    // 4. The token revoked; revoking it again changes nothing and writes no line.
    const revoked = await http.post(`/app/tokens/${tokenId}/revoke`).type('form').send({ session });
    expect(revoked.status).toBe(200);
    expect((await http.post(`/app/tokens/${tokenId}/revoke`).type('form').send({ session })).status).toBe(
      200,
    );
    const refused = await http
      .post('/v1/calls/events')
      .set('Authorization', `Bearer ${token}`)
      .send(started(`${callId}-after`));
    expect(refused.status).toBe(401);

    // Read the page: looking is no change.
    expect((await http.post('/app/view').type('form').send({ session })).status).toBe(200);

    const lines = await eventually(async () => (auditLines().length >= 5 ? auditLines() : undefined));
    expect(lines.map((line) => line.audit)).toEqual([
      'settings',
      'pbx-token-created',
      'call-requeued',
      'calls-requeued',
      'pbx-token-revoked',
    ]);
    for (const line of lines) {
      expect(line).toMatchObject({ level: 30, context: 'AppPage', portalId: alpha.memberId, userId: 1 });
      expect(String(line.msg)).toContain(`audit: portal ${alpha.memberId} user 1 `);
    }
    const [settings, tokenCreated, call, calls, tokenRevoked] = lines;
    expect(settings.changed).toEqual(expect.arrayContaining(['defaultUserId', 'defaultCountry']));
    expect(String(settings.msg)).toContain('defaultUserId');
    expect(tokenCreated).toMatchObject({ tokenId });
    expect(String(tokenCreated.msg)).toContain(tokenId);
    expect(call).toMatchObject({ callId });
    expect(String(call.msg)).toContain(callId);
    expect(calls).toMatchObject({ requeued: 1 });
    expect(tokenRevoked).toMatchObject({ tokenId });

    // Never a secret: not the new token, nor the portal's AUTH_ID, nor the session.
    const output = bridge.output();
    expect(output).not.toContain(token);
    expect(output).not.toContain(token.slice(4));
    expect(output).not.toContain(authId);
    expect(output).not.toContain(session.slice(0, 40));
  }, 120_000);
});
