import { AmiDouble, PbxSetup } from '../support/ami-double';
import { eventually, Harness, startHarness } from '../support/bridge-harness';
import { finishedOnPortal } from '../pbx-adapters/adapter-support';
import { storedEvents } from '../support/stored-events';
import { testDatabaseUrl } from '../support/test-database';

/**
 * One clock per call (docs/API.md): a PBX whose clock is 10 minutes off the bridge's, followed over AMI
 * through a reconnect and an Asterisk restart. A call that rings before the drop and is answered while
 * nobody listens is found live by the resync: its answer and start are dated on the PBX's clock (its
 * Ping), as its hang-up (`Timestamp`) is, so it keeps a talk time and its start is the PBX's.
 */
describe.each([
  ['10 minutes behind', -600],
  ['10 minutes ahead', 600],
])('following a PBX whose clock is %s', (_, offsetSec) => {
  let pbx: AmiDouble;
  let h: Harness;
  const setup: PbxSetup = { clockOffsetSec: offsetSec };

  beforeAll(async () => {
    pbx = await AmiDouble.start(undefined, undefined, setup);
    h = await startHarness({ PBX_EVENTS: 'ami', AMI_URL: pbx.url(), DELIVERY_MAX_BACKOFF_SEC: '1' });
    await connectedAfter(0);
  });
  afterAll(async () => {
    await h.close();
    await pbx.close();
  });

  const health = async () => {
    const { body } = await h.http.get('/health/ready');
    return (body.details ?? body.info)?.pbxFollow as { connected: boolean; reconnects: number } | undefined;
  };
  const connectedAfter = (reconnects: number) =>
    eventually(async () => {
      const now = await health();
      return now?.connected && now.reconnects >= reconnects ? true : undefined;
    }, 40_000);

  it.each([
    ['a reconnect', (ms: number) => pbx.refuseFor(ms)],
    ['an Asterisk restart', (ms: number) => pbx.restart(ms)],
  ])(
    'across %s: talk time and start on the PBX clock',
    async (__, drop) => {
      const before = (await health())?.reconnects ?? 0;
      await drop(3000);
      // Rings and is answered while nobody listens; the bridge's resync finds it talking.
      const playedAt = pbx.pbxNow();
      const playing = pbx.play({
        kind: 'inbound',
        from: `+49151123458${offsetSec > 0 ? 1 : 2}${before}`,
        to: '101',
        answeredBy: '101',
        talk: 120,
        holdOpen: true,
      });
      await playing.answered;
      await connectedAfter(before + 1);
      const started = await eventually(async () => {
        const events = await storedEvents(testDatabaseUrl(h.dir), playing.linkedid);
        return events.find((event) => event.event === 'call.started');
      });
      playing.hangUp();
      await playing.done;
      const call = await finishedOnPortal(h, playing.linkedid);
      // The answer is dated at the resync (the PBX's clock then), the hang-up 120 virtual seconds after the
      // call's answer: the talk time is 120 s less the seconds the bridge was away, never 0.
      expect(call.finished).toMatchObject({ USER_ID: 2, STATUS_CODE: '200' });
      expect(call.finished?.DURATION).toBeGreaterThan(60);
      expect(call.finished?.DURATION).toBeLessThanOrEqual(126);
      // Started when the PBX created the channel, on its clock (not 600 s off).
      expect(Math.abs(Date.parse(started.at) / 1000 - playedAt)).toBeLessThan(30);
    },
    120_000,
  );
});
