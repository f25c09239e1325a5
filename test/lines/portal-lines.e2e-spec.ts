import request from 'supertest';
import { SandboxPortal } from '../../sandbox';
import {
  installApp,
  OAuthBridge,
  postCalls,
  startOAuthBridge,
  tempDir,
  untilAllFinished,
} from '../auth/oauth-harness';
import { ended, eventually, started } from '../support/bridge-harness';

/**
 * OAuth mode (docs/API.md "Lines"): the portal's own list of lines follows the lines the bridge configured (LINES) and
 * registered calls on, one telephony.externalLine.add per line however many calls, and none again after a
 * restart (the bridge's store remembers them).
 */
const LINES = [
  { number: '+49 30 5555555', name: 'Hamburg ads' },
  { number: '+49 30 6666666', report: false },
];

async function portalLines(sandbox: SandboxPortal): Promise<{ NUMBER: string; NAME: string }[]> {
  return (await request(sandbox.url).get('/_sandbox/events').expect(200)).body.lines;
}

const adds = (sandbox: SandboxPortal) =>
  sandbox.operatingRuns().filter((run) => run.method === 'telephony.externalline.add').length;

describe("lines on the portal's own list (OAuth mode)", () => {
  let sandbox: SandboxPortal;
  let temp: ReturnType<typeof tempDir>;
  let bridge: OAuthBridge | undefined;

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    temp = tempDir();
  });
  afterAll(async () => {
    await bridge?.close();
    await sandbox.close();
    temp.remove();
  });

  const calls = (prefix: string, count: number, line?: string) =>
    Array.from({ length: count }, (_, index) => {
      const callId = `${prefix}-${index}`;
      const extra = line === undefined ? {} : { line };
      return [started(callId, extra), ended(callId)];
    }).flat();

  /** One call on a new line, posted after the others finished, and waited for until its line is listed. */
  const laterLine = async (prefix: string, line: string, listed: number) => {
    await postCalls(bridge!, calls(prefix, 1, line));
    await untilAllFinished(sandbox, prefix, 1);
    await eventually(async () => ((await portalLines(sandbox)).length === listed ? true : undefined));
  };

  it('adds each configured or seen line once, however many calls; none for a line kept off the portal', async () => {
    bridge = await startOAuthBridge(sandbox, temp.dir, { LINES: JSON.stringify(LINES) });
    expect((await installApp(sandbox, bridge)).status).toBe(200);
    await postCalls(bridge, [
      ...calls('seen', 4, '+49 30 7777777'),
      ...calls('configured', 3, '030 5555555'),
      ...calls('default', 2),
    ]);
    await untilAllFinished(sandbox, 'seen', 4);
    await untilAllFinished(sandbox, 'configured', 3);
    await untilAllFinished(sandbox, 'default', 2);
    const lines = await eventually(async () => {
      const listed = await portalLines(sandbox);
      return listed.length === 3 ? listed : undefined;
    });
    expect(lines.map((line) => line.NUMBER).sort()).toEqual(['+49305555555', '+49307777777', 'pbx-bridge']);
    expect(lines.find((line) => line.NUMBER === '+49305555555')?.NAME).toBe('Hamburg ads');
    // A later call on a new line: once its line is listed, every add the earlier calls caused has been sent.
    await laterLine('marker-1', '+49 30 9999991', 4);
    // pbx-bridge by the event binder (B24_LINE_NUMBER), each of the others once by the bridge's line keeper.
    expect(adds(sandbox)).toBe(4);
    expect(sandbox.calls().filter((call) => call.EXTERNAL_CALL_ID?.startsWith('seen-'))).toHaveLength(4);
  });

  it('remembers the added lines across a restart: only a new line is added', async () => {
    await bridge!.close();
    bridge = await startOAuthBridge(sandbox, temp.dir, { LINES: JSON.stringify(LINES) });
    await postCalls(bridge, [...calls('again', 2, '+49 30 7777777'), ...calls('new', 2, '+49 30 8888888')]);
    await untilAllFinished(sandbox, 'again', 2);
    await untilAllFinished(sandbox, 'new', 2);
    await eventually(async () => ((await portalLines(sandbox)).length === 5 ? true : undefined));
    await laterLine('marker-2', '+49 30 9999992', 6);
    // The new line and the later one: the lines added before the restart are not added again.
    expect(adds(sandbox)).toBe(6);
  });
});
