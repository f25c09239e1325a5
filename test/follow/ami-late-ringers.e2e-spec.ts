import { AmiDouble, CallDescription } from '../support/ami-double';
import { eventually, Harness, startHarness } from '../support/bridge-harness';
import { callStatus } from '../pbx-adapters/adapter-support';

/**
 * Phones that start ringing after the call's first `DialBegin`/`AgentCalled` (a queue's next member, a
 * hunt ring group's next phone) are shown the card too, followed over AMI: the bridge logs in to the AMI
 * double over real TCP, each round of phones rings until the test lets it go on, and the sandbox portal's
 * card log says who saw the card when. Also a call forwarded out through a second trunk once its phone rang
 * (follow-me to a mobile): answered, not missed. Sandbox users: 2 = ext 101, 3 = 102, 4 = 103.
 */
describe('following Asterisk over AMI: phones that start ringing later', () => {
  let pbx: AmiDouble;
  let h: Harness;

  beforeAll(async () => {
    pbx = await AmiDouble.start();
    h = await startHarness({ PBX_EVENTS: 'ami', AMI_URL: pbx.url(), DELIVERY_MAX_BACKOFF_SEC: '1' });
    await eventually(async () => {
      const { body } = await h.http.get('/health/ready');
      return (body.details ?? body.info)?.pbxFollow?.connected ? true : undefined;
    }, 30000);
  });
  afterAll(async () => {
    await h.close();
    await pbx.close();
  });

  const portalCall = (callId: string) => h.sandbox.calls({ EXTERNAL_CALL_ID: callId })[0];
  const cardShownTo = (callId: string, users: number[]) =>
    eventually(async () => {
      const shown = [...(portalCall(callId)?.shownTo ?? [])].sort();
      return JSON.stringify(shown) === JSON.stringify(users) ? portalCall(callId) : undefined;
    });
  const settled = (callId: string) =>
    eventually(async () => {
      const { body } = await callStatus(h, callId);
      return body.state === 'finished' && body.nextStep === null ? portalCall(callId) : undefined;
    });

  /** Plays `call` round by round: after each round's card (`rounds[i]`) shows, that round goes on. */
  async function rungInRounds(call: CallDescription, rounds: number[][]) {
    const playing = pbx.play({ ...call, holdRinging: true, holdEachRound: true });
    for (const users of rounds) {
      await cardShownTo(playing.linkedid, users);
      playing.pickUp();
    }
    await playing.done;
    return settled(playing.linkedid);
  }

  const log = (call: { cardLog: { by: string; shown: number[]; hidden: number[] }[] }) =>
    call.cardLog.map((change) => [change.by, change.shown, change.hidden]);

  it('queue: 101 rings, times out, 102 rings and answers: card to 101 then 102, hidden for 101, finished by 102', async () => {
    const done = await rungInRounds(
      {
        kind: 'inbound',
        from: '+4915112345681',
        to: ['101', '102'],
        queue: '400',
        answeredBy: '102',
        talk: 25,
      },
      [[2], [2, 3]],
    );
    expect(done).toMatchObject({ USER_ID: 2, registerRequests: 1, shownTo: [] });
    expect(done.finished).toMatchObject({ USER_ID: 3, DURATION: 25, STATUS_CODE: '200' });
    // The answer's hide for 101 and the end's finish may share a request (the call is short): in either order.
    expect(log(done).slice(0, 2)).toEqual([
      ['register', [2], []],
      ['show', [3], []],
    ]);
    expect(log(done).slice(2)).toEqual(
      expect.arrayContaining([
        ['hide', [], [2]],
        ['finish', [], [3]],
      ]),
    );
    expect(done.cardLog).toHaveLength(4);
  });

  it('ring group hunt: 101, then 102, then 103 answers: each shown the card as it rings, once', async () => {
    const done = await rungInRounds(
      {
        kind: 'inbound',
        from: '+4915112345682',
        to: ['101', '102', '103'],
        strategy: 'hunt',
        answeredBy: '103',
        talk: 40,
      },
      [[2], [2, 3], [2, 3, 4]],
    );
    expect(done.finished).toMatchObject({ USER_ID: 4, DURATION: 40, STATUS_CODE: '200' });
    expect(done.shownTo).toEqual([]);
    expect(log(done).slice(0, 3)).toEqual([
      ['register', [2], []],
      ['show', [3], []],
      ['show', [4], []],
    ]);
    for (const user of [2, 3, 4]) {
      expect(done.cardLog.filter((change) => change.shown.includes(user))).toHaveLength(1);
      expect(done.cardLog.filter((change) => change.hidden.includes(user))).toHaveLength(1);
    }
  });

  it("forwarded out through a second trunk after 101 rang: finished answered with the outside leg's talk time", async () => {
    const playing = pbx.play({
      kind: 'inbound',
      from: '+4915112345683',
      to: '101',
      forwardTo: '015112349999',
      talk: 70,
      holdRinging: true,
    });
    await cardShownTo(playing.linkedid, [2]);
    playing.pickUp();
    await playing.done;
    const done = await settled(playing.linkedid);
    expect(done).toMatchObject({ USER_ID: 2, shownTo: [] });
    expect(done.finished).toMatchObject({ USER_ID: 2, DURATION: 70, STATUS_CODE: '200' });
  });
});
