import axios from 'axios';
import { stringify } from 'qs';
import { SandboxPortal } from '../../sandbox';
import { ADMIN_TOKEN, eventually, testEnv } from '../support/bridge-harness';
import { BridgeProcess, startBridgeProcess } from '../support/bridge-process';
import { tempDir } from '../auth/oauth-harness';

const APP_TOKEN = 'outbound-webhook-code-0a9f3c71';
const FORGED = 'forged-token-7e21b9d4';
const ACCESS = 'portal-access-token-55c0e1';

/**
 * B24_APPLICATION_TOKEN and the `auth[…]` fields of portal event posts never reach the bridge's output (at
 * the most verbose log level) nor its answers. Needs `npm run build` first (a child process runs dist/).
 */
describe('portal event secrets stay out of logs and answers', () => {
  let sandbox: SandboxPortal;
  let workspace: ReturnType<typeof tempDir>;
  let bridge: BridgeProcess;

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    workspace = tempDir();
    bridge = await startBridgeProcess(
      testEnv(sandbox, workspace.dir, { B24_APPLICATION_TOKEN: APP_TOKEN, LOG_LEVEL: 'verbose' }),
    );
  });
  afterAll(async () => {
    if (bridge.child.exitCode === null) {
      bridge.child.kill('SIGTERM');
      await bridge.exited;
    }
    await sandbox.close();
    workspace.remove();
  });

  const postForm = (path: string, form: unknown, type = 'application/x-www-form-urlencoded') =>
    axios.post(`${bridge.url}${path}`, typeof form === 'string' ? form : stringify(form), {
      headers: { 'Content-Type': type },
      validateStatus: () => true,
    });

  it('never writes the application token or the auth fields to the log or an answer', async () => {
    const answers: unknown[] = [];
    const auth = { domain: 'portal.example.com', application_token: APP_TOKEN, access_token: ACCESS };
    const good = await postForm('/v1/portal/events', {
      event: 'ONEXTERNALCALLSTART',
      data: { USER_ID: '1', PHONE_NUMBER: '+4915112345678', CALL_ID: 'externalCall.secret' },
      ts: '1764000000',
      auth,
    });
    expect(good.status).toBe(200);
    answers.push(good.data);
    const forged = await postForm('/v1/portal/events', {
      event: 'ONEXTERNALCALLSTART',
      data: { CALL_ID: 'x' },
      auth: { application_token: FORGED, access_token: ACCESS },
    });
    expect(forged.status).toBe(401);
    answers.push(forged.data);
    // Secrets in the query string and in bodies the bridge cannot take.
    const query = await postForm(
      `/v1/portal/events?auth[application_token]=${APP_TOKEN}`,
      stringify({ event: 'ONCRMLEADADD', data: { FIELDS: { ID: '1' } }, auth }),
    );
    answers.push(query.data);
    const deep = await postForm('/v1/portal/events', `a[b][c][d][e]=1&auth[application_token]=${APP_TOKEN}`);
    expect(deep.status).toBe(400);
    answers.push(deep.data);
    const json = await postForm('/v1/portal/events', JSON.stringify({ auth }), 'application/json');
    expect(json.status).toBe(415);
    answers.push(json.data);
    const listed = await eventually(async () => {
      const { data } = await axios.get(`${bridge.url}/v1/admin/portal-events`, {
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      return data.events.every((event: { state: string }) => event.state !== 'pending') ? data : undefined;
    });
    answers.push(listed);
    answers.push((await axios.get(`${bridge.url}/health/ready`)).data);
    answers.push((await axios.get(`${bridge.url}/metrics`)).data);

    bridge.child.kill('SIGTERM');
    await bridge.exited;
    const output = bridge.output();
    expect(output).toContain('/v1/portal/events');
    expect(output).toContain('refused');
    const everything = `${output}\n${JSON.stringify(answers)}`;
    const leaked = [APP_TOKEN, FORGED, ACCESS].filter((secret) => everything.includes(secret));
    for (const secret of leaked) {
      const at = everything.indexOf(secret);
      console.log(everything.slice(Math.max(0, at - 300), at + 50));
    }
    expect(leaked).toEqual([]);
  });
});
