import axios from 'axios';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxPortal } from '../../sandbox';
import { AmiServer } from '../support/ami-server';
import { eventually, testEnv } from '../support/bridge-harness';
import { BridgeProcess, startBridgeProcess } from '../support/bridge-process';
import { EslServer } from '../support/esl-server';
import { TlsTerminator } from '../support/tls-terminator';

const APP_TOKEN = 'outbound-hook-dial-startup';
/** A generated password as operators paste them: every character WHATWG URL reads as structure. */
const AMI_SECRET = 'pa/ss#w?rd@x%zz';
const ESL_PASSWORD = 'Cl/ue#Con?pw@%';

/**
 * Click-to-call's start-up and transport in the built bridge (dist/main.js as a child process, single mode):
 * an AMI_URL or ESL_URL whose password holds `/`, `#`, `?`, `@` or `%` starts the bridge and dials (the PBX
 * double checks the secret it receives); a malformed one stops start-up with one line naming the variable,
 * never its password nor a stack; DIAL_MODE=ami on tls:// reaches the double's Originate through a TLS
 * listener whose self-signed certificate the process trusts through node's NODE_EXTRA_CA_CERTS.
 */
describe('click-to-call start-up and tls:// (child process)', () => {
  let sandbox: SandboxPortal;
  let dir: string;
  const children: BridgeProcess[] = [];

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    dir = mkdtempSync(join(tmpdir(), 'bridge-dial-startup-'));
  });
  afterEach(async () => {
    for (const child of children.splice(0)) {
      child.child.kill('SIGKILL');
      await child.exited;
    }
  });
  afterAll(async () => {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const env = (extra: Record<string, string>) =>
    testEnv(sandbox, join(dir, `run-${children.length}-${Date.now()}`), {
      B24_APPLICATION_TOKEN: APP_TOKEN,
      DIAL_TIMEOUT_SEC: '20',
      LOG_LEVEL: 'warn',
      ...extra,
    });

  /** The bridge started with `extra`; the sandbox's click events go to it; an employee clicks a number. */
  async function clickThrough(extra: Record<string, string>, processEnv: Record<string, string> = {}) {
    const bridge = await startBridgeProcess({ ...env(extra), ...processEnv });
    children.push(bridge);
    await axios.post(`${sandbox.url}/_sandbox/events/outbound`, {
      url: `${bridge.url}/v1/portal/events`,
      applicationToken: APP_TOKEN,
    });
    const { data } = await axios.post(`${sandbox.url}/_sandbox/click`, { phone: '+4930777111', userId: 2 });
    return { bridge, callId: (data as { CALL_ID: string }).CALL_ID };
  }

  /** Start-up refused (the process exited before it listened): its whole output. */
  async function refusedStart(extra: Record<string, string>): Promise<{ output: string }> {
    const error = await startBridgeProcess(env(extra)).then(
      (bridge) => {
        children.push(bridge);
        return undefined;
      },
      (caught: Error) => caught,
    );
    expect(error).toBeInstanceOf(Error);
    const output = error!.message.replace(/^bridge exited during start-up:\n/, '');
    return { output };
  }

  it('DIAL_MODE=ami with a password holding / # ? @ % starts and dials; the password is never printed', async () => {
    const ami = await AmiServer.start('crm-bridge', AMI_SECRET);
    try {
      // Written plainly, not percent-encoded: the bridge reads the password up to the last @ before the host.
      const { bridge, callId } = await clickThrough({
        DIAL_MODE: 'ami',
        AMI_URL: `tcp://crm-bridge:${AMI_SECRET}@127.0.0.1:${ami.port}`,
      });
      const [originate] = await eventually(async () =>
        ami.originates().length ? ami.originates() : undefined,
      );
      expect(ami.actions[0]).toMatchObject({ Action: 'Login', Username: 'crm-bridge', Secret: AMI_SECRET });
      expect(originate).toMatchObject({ Channel: 'PJSIP/101', Variable: `CRM_CALL_ID=${callId}` });
      expect(bridge.output()).not.toContain(AMI_SECRET);
    } finally {
      await ami.close();
    }
  });

  it('DIAL_MODE=esl with such a password, written plainly, starts and dials', async () => {
    const esl = await EslServer.start(ESL_PASSWORD);
    try {
      const { bridge, callId } = await clickThrough({
        DIAL_MODE: 'esl',
        ESL_URL: `tcp://:${ESL_PASSWORD}@127.0.0.1:${esl.port}`,
      });
      const [originate] = await eventually(async () =>
        esl.originates().length ? esl.originates() : undefined,
      );
      expect(originate).toContain(`{crm_call_id=${callId},crm_line=}user/101 +4930777111`);
      expect(bridge.output()).not.toContain(ESL_PASSWORD);
      expect(bridge.output()).not.toContain(encodeURIComponent(ESL_PASSWORD));
    } finally {
      await esl.close();
    }
  });

  it('a malformed AMI_URL or ESL_URL stops start-up with one line naming it: no stack, no password', async () => {
    for (const [mode, variable, value] of [
      ['ami', 'AMI_URL', `tcp://crm:${AMI_SECRET}@`],
      ['ami', 'AMI_URL', `http://crm:${AMI_SECRET}@127.0.0.1:5038`],
      ['esl', 'ESL_URL', `tcp://:${ESL_PASSWORD}@pbx.example.com:99999`],
    ]) {
      const { output } = await refusedStart({ DIAL_MODE: mode, [variable]: value });
      const lines = output.split('\n').filter((line) => line.trim() !== '');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`${variable}:`);
      expect(output).not.toMatch(/^\s+at /m);
      expect(output).not.toContain(AMI_SECRET);
      expect(output).not.toContain(ESL_PASSWORD);
      expect(output).not.toContain(value);
    }
  });

  it('DIAL_MODE=ami on tls:// reaches the PBX over TLS, its certificate checked (NODE_EXTRA_CA_CERTS)', async () => {
    const ami = await AmiServer.start('crm-bridge', AMI_SECRET);
    const terminator = await TlsTerminator.start(ami.port);
    try {
      const { bridge, callId } = await clickThrough(
        {
          DIAL_MODE: 'ami',
          AMI_URL: `tls://crm-bridge:${encodeURIComponent(AMI_SECRET)}@127.0.0.1:${terminator.port}`,
        },
        { NODE_EXTRA_CA_CERTS: terminator.certFile },
      );
      const [originate] = await eventually(async () =>
        ami.originates().length ? ami.originates() : undefined,
      );
      expect(originate).toMatchObject({ Channel: 'PJSIP/101', Variable: `CRM_CALL_ID=${callId}` });
      const { data } = await axios.get(`${bridge.url}/health/ready`, { validateStatus: () => true });
      expect(data.details?.dialer?.target).toBe(`ami tls://127.0.0.1:${terminator.port}`);
    } finally {
      await terminator.close();
      await ami.close();
    }
  });

  it('tls:// with a certificate nobody vouches for dials nothing, and says why without the password', async () => {
    const ami = await AmiServer.start('crm-bridge', AMI_SECRET);
    const terminator = await TlsTerminator.start(ami.port);
    try {
      const { bridge } = await clickThrough({
        DIAL_MODE: 'ami',
        AMI_URL: `tls://crm-bridge:${encodeURIComponent(AMI_SECRET)}@127.0.0.1:${terminator.port}`,
      });
      await eventually(async () => (/SELF_SIGNED|self.signed/i.test(bridge.output()) ? true : undefined));
      expect(ami.actions).toEqual([]);
      expect(bridge.output()).not.toContain(encodeURIComponent(AMI_SECRET));
    } finally {
      await terminator.close();
      await ami.close();
    }
  });
});
