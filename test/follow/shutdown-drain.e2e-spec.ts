import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxPortal } from '../../sandbox';
import { AmiDouble, CallDescription } from '../support/ami-double';
import { eventually, testEnv } from '../support/bridge-harness';
import { startBridgeProcess } from '../support/bridge-process';
import { storedEvents } from '../support/stored-events';

/**
 * A followed PBX's events are not dropped when the bridge is told to stop: the built bridge, a real child
 * process following the AMI double, gets SIGTERM right after the double wrote the last of many calls'
 * events and a ring whose start the tracker still holds for parallel dials. Read from the store after the
 * process exited: every event the double sent before the stop is there.
 */
describe('following a PBX: SIGTERM stores what was followed', () => {
  let sandbox: SandboxPortal;
  let pbx: AmiDouble;
  let dir: string;

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    pbx = await AmiDouble.start();
    dir = mkdtempSync(join(tmpdir(), 'bridge-follow-stop-'));
  });
  afterAll(async () => {
    await pbx.close();
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const inbound = (index: number, extra: Partial<CallDescription> = {}): CallDescription => ({
    kind: 'inbound',
    from: `+491513400${String(index).padStart(4, '0')}`,
    to: '101',
    answeredBy: '101',
    talk: 4,
    stepMs: 1,
    ...extra,
  });

  it('every call the double played before SIGTERM, and the ring still held, is stored', async () => {
    const env = testEnv(sandbox, dir, { LOG_LEVEL: 'warn', PBX_EVENTS: 'ami', AMI_URL: pbx.url() });
    const bridge = await startBridgeProcess(env);
    const following = async () => {
      const body = (await (await fetch(`${bridge.url}/health/ready`)).json()) as {
        details?: { pbxFollow?: { connected?: boolean } };
      };
      return body.details?.pbxFollow?.connected ? true : undefined;
    };
    await eventually(following, 30_000);

    const calls = Array.from({ length: 40 }, (_, index) => pbx.play(inbound(index)));
    await Promise.all(calls.map((call) => call.done));
    // One more rings: its start is held for parallel dials when the stop comes.
    let rang: () => void = () => undefined;
    const dialled = new Promise<void>((resolve) => (rang = resolve));
    pbx.observe((text) => {
      if (/^Event: DialBegin\r\n/.test(text)) rang();
    });
    const ringing = pbx.play(inbound(99, { holdRinging: true, stepMs: 0 }));
    await dialled;
    bridge.child.kill('SIGTERM');
    // Nest ends the process with the signal once its shutdown hooks ran.
    const exit = await bridge.exited;
    expect(exit.code === 0 || exit.signal === 'SIGTERM').toBe(true);
    ringing.pickUp();
    await ringing.done;

    const url = env.DATABASE_URL;
    for (const call of calls) {
      const names = (await storedEvents(url, call.linkedid)).map((event) => event.event);
      expect({ callId: call.linkedid, names: names.sort() }).toEqual({
        callId: call.linkedid,
        names: ['call.answered', 'call.ended', 'call.started'],
      });
    }
    const held = await storedEvents(url, ringing.linkedid);
    expect(held).toEqual([expect.objectContaining({ event: 'call.started', extension: '101' })]);
    expect(bridge.output()).not.toMatch(/not stored/);
  });
});
