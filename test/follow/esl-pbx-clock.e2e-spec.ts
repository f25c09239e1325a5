import { rmSync } from 'node:fs';
import { EslDouble } from '../support/esl-double';
import { eventually, Harness, startHarness } from '../support/bridge-harness';
import { callStatus, finishedOnPortal } from '../pbx-adapters/adapter-support';

/**
 * SPEC §9 "one clock per call": a FreeSWITCH whose clock runs ten minutes off the bridge's, followed across a
 * lost connection and a restart of the bridge. Answers seen by nobody (the socket was down, or the bridge
 * was restarting) keep their talk time from the PBX's own clock: `uuid_dump`'s bridge time, or what the
 * store says the previous run saw. Sandbox users: 2 = ext 101, 3 = 102, 4 = 103.
 */
describe.each([
  ['behind', -10 * 60_000],
  ['ahead', 10 * 60_000],
])('a PBX whose clock runs ten minutes %s the bridge', (_label, offset) => {
  let pbx: EslDouble;
  let h: Harness;
  const env = { PBX_EVENTS: 'esl', DELIVERY_MAX_BACKOFF_SEC: '1' };

  beforeAll(async () => {
    pbx = await EslDouble.start(undefined, { clockOffsetMs: offset, seed: offset > 0 ? 1 : 2 });
    h = await startHarness({ ...env, ESL_URL: pbx.url() });
    await following(h);
  });
  afterAll(async () => {
    await h.close();
    await pbx.close();
  });

  const health = async (on: Harness) => {
    const { body } = await on.http.get('/health/ready');
    return (body.details ?? body.info).pbxFollow as Record<string, unknown>;
  };
  const following = (on: Harness) =>
    eventually(async () => ((await health(on))?.connected ? true : undefined), 30000);
  const registered = (on: Harness, callId: string) =>
    eventually(async () => ((await callStatus(on, callId)).status === 200 ? true : undefined));

  it('a reconnect: answered before, during (ringing before) and inside the outage, all with their talk time', async () => {
    const before = await health(h);
    const answeredBefore = pbx.play({
      kind: 'inbound',
      from: '+4915112340001',
      to: '101',
      answeredBy: '101',
      talk: 50,
      holdOpen: true,
    });
    const ringing = pbx.play({
      kind: 'inbound',
      from: '+4915112340002',
      to: '102',
      answeredBy: '102',
      talk: 40,
      holdRinging: true,
      holdOpen: true,
    });
    await answeredBefore.answered;
    await Promise.all([registered(h, answeredBefore.callId), registered(h, ringing.callId)]);
    await pbx.refuseFor(3000);
    ringing.pickUp();
    const inside = pbx.play({
      kind: 'inbound',
      from: '+4915112340003',
      to: '103',
      answeredBy: '103',
      talk: 30,
      holdOpen: true,
    });
    await Promise.all([ringing.answered, inside.answered]);
    await eventually(async () => {
      const now = await health(h);
      return (now.reconnects as number) > (before.reconnects as number) && now.connected ? true : undefined;
    }, 40000);
    for (const call of [answeredBefore, ringing, inside]) call.hangUp();
    await Promise.all([answeredBefore.done, ringing.done, inside.done]);
    for (const [call, user, talk] of [
      [answeredBefore, 2, 50],
      [ringing, 3, 40],
      [inside, 4, 30],
    ] as const) {
      const done = await finishedOnPortal(h, call.callId);
      expect({ user, talk, ...done.finished }).toMatchObject({
        USER_ID: user,
        DURATION: talk,
        STATUS_CODE: '200',
      });
      expect(done.registerRequests).toBe(1);
    }
  }, 90000);

  it('a restart of the bridge: a call answered before it keeps its talk time, read back from the store', async () => {
    const call = pbx.play({
      kind: 'inbound',
      from: '+4915112340004',
      to: '101',
      answeredBy: '101',
      talk: 60,
      holdOpen: true,
    });
    await call.answered;
    await eventually(async () => {
      const { body } = await callStatus(h, call.callId);
      const card = body.card as { answeredBy: string | null } | undefined;
      return card?.answeredBy === '101' ? true : undefined;
    });
    await h.app.close();
    const restarted = await startHarness(
      { ...env, ESL_URL: pbx.url() },
      {},
      { sandbox: h.sandbox, dir: h.dir },
    );
    try {
      await following(restarted);
      call.hangUp();
      await call.done;
      const done = await finishedOnPortal(restarted, call.callId);
      expect(done.finished).toMatchObject({ USER_ID: 2, DURATION: 60, STATUS_CODE: '200' });
      expect(done.registerRequests).toBe(1);
    } finally {
      await restarted.app.close();
      const first = h;
      h = {
        ...first,
        close: async () => (await first.sandbox.close(), rmSync(first.dir, { recursive: true, force: true })),
      };
    }
  }, 90000);
});
