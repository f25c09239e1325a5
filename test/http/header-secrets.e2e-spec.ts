import axios from 'axios';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxPortal } from '../../sandbox';
import { eventually, testEnv } from '../support/bridge-harness';
import { BridgeProcess, startBridgeProcess } from '../support/bridge-process';
import { testDatabaseUrl } from '../support/test-database';

/** A PBX token as the PBX would send it, different in every header so a leak names its header. */
const secret = (where: string) => `pbxsecret-${where}-5b1f0c7e9a2d4f6b`;

/** Every way a PBX (or a stranger) may carry a token that is not `Authorization: Bearer`. */
const CARRIERS: { name: string; headers: Record<string, string>; secrets: string[] }[] = [
  { name: 'X-Api-Key', headers: { 'X-Api-Key': secret('apikey') }, secrets: [secret('apikey')] },
  {
    name: 'X-Auth-Token (token=…)',
    headers: { 'X-Auth-Token': `token=${secret('authtoken')}` },
    secrets: [secret('authtoken')],
  },
  {
    name: 'Cookie',
    headers: { Cookie: `session=${secret('cookie')}; pbx=${secret('cookie2')}` },
    secrets: [secret('cookie'), secret('cookie2')],
  },
  {
    name: 'Proxy-Authorization',
    headers: { 'Proxy-Authorization': `Bearer ${secret('proxy')}` },
    secrets: [secret('proxy')],
  },
  {
    name: 'a made-up header',
    headers: { 'X-Acme-Pbx-Credential': secret('madeup'), 'X-Token': secret('xtoken') },
    secrets: [secret('madeup'), secret('xtoken')],
  },
  {
    name: 'a bad Authorization',
    headers: { Authorization: `Token ${secret('scheme')}` },
    secrets: [secret('scheme')],
  },
];

/**
 * Issue 26 finding 1: a PBX token in any header but a valid `Authorization` gets 401, and no log line of
 * the bridge (a real child process at LOG_LEVEL=verbose, its whole output read) nor any answer's body
 * contains it. The request log shows an allow-list of headers only.
 */
describe('a PBX token in an unusual header never reaches a log line or an error body', () => {
  let sandbox: SandboxPortal;
  let dir: string;
  let bridge: BridgeProcess;

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    dir = mkdtempSync(join(tmpdir(), 'bridge-header-secrets-'));
    bridge = await startBridgeProcess(
      testEnv(sandbox, dir, { LOG_LEVEL: 'verbose', DATABASE_URL: testDatabaseUrl(dir, 'headers.sqlite') }),
    );
  });

  afterAll(async () => {
    bridge.child.kill('SIGTERM');
    await bridge.exited;
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 401 and logs only allowed headers, whatever header carries the token', async () => {
    const bodies: string[] = [];
    const requestIds: string[] = [];
    for (const [index, carrier] of CARRIERS.entries()) {
      for (const [method, path] of [
        ['POST', '/v1/calls/events'],
        ['GET', '/v1/calls/some-call'],
        ['GET', '/v1/lookup?phone=%2B4930123456'],
        ['PUT', '/v1/calls/some-call/recording'],
        ['GET', '/v1/admin/calls'],
      ] as const) {
        const requestId = `hdr-${index}-${method}-${path.length}`;
        requestIds.push(requestId);
        const response = await axios.request({
          method,
          url: `${bridge.url}${path}`,
          data: method === 'GET' ? undefined : '[]',
          headers: {
            ...carrier.headers,
            'Content-Type': method === 'PUT' ? 'audio/mpeg' : 'application/json',
            'X-Request-Id': requestId,
          },
          validateStatus: () => true,
          transformResponse: (body: string) => body,
        });
        expect({ carrier: carrier.name, path, status: response.status }).toEqual({
          carrier: carrier.name,
          path,
          status: 401,
        });
        bodies.push(String(response.data));
      }
    }
    // A charset the body parsers do not know, carrying a secret: refused without echoing it.
    const charset = await axios.post(`${bridge.url}/v1/portal/events`, 'event=ONAPPUNINSTALL', {
      headers: { 'Content-Type': `application/x-www-form-urlencoded; charset=${secret('charset')}` },
      validateStatus: () => true,
      transformResponse: (body: string) => body,
    });
    expect(charset.status).toBeGreaterThanOrEqual(400);
    expect(charset.status).toBeLessThan(500);
    bodies.push(String(charset.data));

    // Every refused request was logged (by its request id), with allowed headers only. A line is written
    // when its answer has gone out, so the last one may reach this process's pipe after the answer did.
    const output = await eventually(async () => {
      const text = bridge.output();
      return requestIds.every((id) => text.includes(`"id":"${id}"`)) ? text : undefined;
    }, 5000).catch(() => bridge.output());
    const entries = output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { req?: { id?: string; headers?: Record<string, unknown> } });
    const logged = entries.filter((entry) => entry.req?.id && requestIds.includes(entry.req.id));
    expect(new Set(logged.map((entry) => entry.req!.id)).size).toBe(requestIds.length);
    for (const entry of logged) {
      expect(entry.req!.headers?.['x-request-id']).toBe(entry.req!.id);
      for (const name of Object.keys(entry.req!.headers ?? {})) {
        expect([
          'host',
          'user-agent',
          'content-type',
          'content-length',
          'accept',
          'accept-encoding',
          'connection',
          'x-request-id',
        ]).toContain(name);
      }
    }

    for (const value of [...CARRIERS.flatMap((carrier) => carrier.secrets), secret('charset')]) {
      expect({ value, inLogs: output.includes(value) }).toEqual({ value, inLogs: false });
      expect({ value, inBodies: bodies.some((body) => body.includes(value)) }).toEqual({
        value,
        inBodies: false,
      });
    }
  });
});
