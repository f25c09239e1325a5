import axios from 'axios';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxPortal } from '../../sandbox';
import { ADMIN_TOKEN, eventually, PBX_TOKEN, testEnv } from '../support/bridge-harness';
import { BridgeProcess, startBridgeProcess } from '../support/bridge-process';
import { testDatabaseUrl } from '../support/test-database';

/** A secret as a PBX would put it in the query string, different per request so a leak names its place. */
const secret = (where: string) => `qsecret-${where}-8c41d2e07b`;

/** Requests whose query strings carry secrets under names nobody foresaw, beside allowed parameters. */
const REQUESTS: { path: string; secrets: string[]; shown: string[]; auth?: string }[] = [
  {
    path: `/v1/lookup?phone=%2B4930123456&key=${secret('key')}`,
    auth: `Bearer ${PBX_TOKEN}`,
    secrets: [secret('key')],
    shown: ['phone=%2B4930123456', 'key=[Redacted]'],
  },
  {
    path: `/v1/calls/some-call?token=${secret('token')}&x=${secret('x')}`,
    secrets: [secret('token'), secret('x')],
    shown: ['token=[Redacted]', 'x=[Redacted]'],
  },
  {
    path: `/v1/pbx/yeastar?tz=Europe%2FBerlin&api_key=${secret('apikey')}`,
    secrets: [secret('apikey')],
    shown: ['tz=Europe%2FBerlin', 'api_key=[Redacted]'],
  },
  {
    path: `/v1/admin/calls?limit=5&sig=${secret('sig')}&${secret('bare')}`,
    auth: `Bearer ${ADMIN_TOKEN}`,
    secrets: [secret('sig'), secret('bare')],
    shown: ['limit=5', 'sig=[Redacted]'],
  },
  {
    path: `/no-such-route?password=${secret('notfound')}&k%65y=${secret('encoded')}`,
    secrets: [secret('notfound'), secret('encoded')],
    shown: ['password=[Redacted]'],
  },
  {
    path: `/oauth/callback?code=${secret('code')}&state=${secret('state')}`,
    secrets: [secret('code'), secret('state')],
    shown: ['code=[Redacted]', 'state=[Redacted]'],
  },
];

/**
 * Issue 36 finding 1: a PBX that puts its token in the query string under any name (`?key=…`) never has it
 * written to a log line. The bridge is a real child process at LOG_LEVEL=verbose, its whole output read, in
 * both formats; only the allowed parameters (LOGGED_QUERY_PARAMETERS) show their values.
 */
describe.each(['json', 'pretty'] as const)('query values in the request log (LOG_FORMAT=%s)', (format) => {
  let sandbox: SandboxPortal;
  let dir: string;
  let bridge: BridgeProcess;

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    dir = mkdtempSync(join(tmpdir(), `bridge-query-secrets-${format}-`));
    bridge = await startBridgeProcess(
      testEnv(sandbox, dir, {
        LOG_LEVEL: 'verbose',
        LOG_FORMAT: format,
        DATABASE_URL: testDatabaseUrl(dir, 'query.sqlite'),
      }),
    );
  });
  afterAll(async () => {
    bridge.child.kill('SIGTERM');
    await bridge.exited;
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('logs every request with its allowed parameters and no other value, and answers none', async () => {
    const answers: string[] = [];
    for (const [index, request] of REQUESTS.entries()) {
      const answer = await axios.get(`${bridge.url}${request.path}`, {
        headers: {
          'X-Request-Id': `query-${format}-${index}`,
          ...(request.auth && { Authorization: request.auth }),
        },
        validateStatus: () => true,
        responseType: 'text',
      });
      answers.push(String(answer.data));
    }
    // No answer repeats a value either (a 404's "Cannot GET …" names the path, never the query's values).
    for (const value of REQUESTS.flatMap((request) => request.secrets)) {
      expect({ value, inAnswers: answers.some((answer) => answer.includes(value)) }).toEqual({
        value,
        inAnswers: false,
      });
    }
    expect(answers[4]).toContain('Cannot GET /no-such-route');
    // A line is written once its answer has gone out: the last may reach the pipe after the answer did.
    const lines = await eventually(async () => {
      const found = REQUESTS.map((request) =>
        bridge
          .output()
          .split('\n')
          .find((line) => line.includes(`${request.path.split('?', 1)[0]}?`)),
      );
      return found.every(Boolean) ? (found as string[]) : undefined;
    });
    const output = bridge.output();
    for (const value of REQUESTS.flatMap((request) => request.secrets)) {
      expect({ value, inLogs: output.includes(value) }).toEqual({ value, inLogs: false });
    }
    for (const [index, request] of REQUESTS.entries()) {
      for (const shown of request.shown) {
        expect({ line: lines[index], shown }).toEqual({
          line: expect.stringContaining(shown),
          shown,
        });
      }
    }
  });
});
