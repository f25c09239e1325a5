import { EslCallDescription, EslDouble } from '../support/esl-double';
import { eventually, Harness, startHarness } from '../support/bridge-harness';
import { basic, callStatus, finishedOnPortal } from '../pbx-adapters/adapter-support';
import { SandboxCall } from '../support/sandbox-inspect';

/**
 * PBX_EVENTS=esl end to end: the bridge logs in to an event socket double over real TCP, follows calls played
 * as real PBX output event sequences, stores them through the durable intake and delivers them to the sandbox
 * portal over real HTTP. Sandbox users: 2 = ext 101, 3 = 102, 4 = 103.
 */
describe('following FreeSWITCH over the event socket (PBX_EVENTS=esl)', () => {
  let pbx: EslDouble;
  let h: Harness;

  beforeAll(async () => {
    pbx = await EslDouble.start();
    h = await startHarness({
      PBX_EVENTS: 'esl',
      ESL_URL: pbx.url(),
      FREESWITCH_RECORDING_URL: 'https://pbx.example.com/rec/{file}',
      DELIVERY_MAX_BACKOFF_SEC: '1',
    });
    await following();
  });
  afterAll(async () => {
    await h.close();
    await pbx.close();
  });

  const health = async () => {
    const { body } = await h.http.get('/health/ready');
    return (body.details ?? body.info).pbxFollow as Record<string, unknown>;
  };
  const following = () => eventually(async () => ((await health())?.connected ? true : undefined), 30000);

  /** Waits until the portal shows the call's card to exactly `users`. */
  const cardShownTo = (callId: string, users: number[]) =>
    eventually(async () => {
      const call = h.sandbox.calls({ EXTERNAL_CALL_ID: callId })[0];
      const shown = [...(call?.shownTo ?? [])].sort();
      return call && JSON.stringify(shown) === JSON.stringify(users) ? call : undefined;
    });

  /** Plays a call whose phones ring until the portal shows the card to `ringing`, then lets it go on. */
  async function rung(
    call: EslCallDescription,
    ringing: number[],
    movedTo?: number[],
  ): Promise<SandboxCall & PortalExtras> {
    const playing = pbx.play({ ...call, holdRinging: true, holdOpen: Boolean(movedTo) });
    await cardShownTo(playing.callId, ringing);
    playing.pickUp();
    if (movedTo) {
      await cardShownTo(playing.callId, movedTo);
      playing.hangUp();
    }
    await playing.done;
    return (await finishedOnPortal(h, playing.callId, Boolean(call.recording))) as SandboxCall & PortalExtras;
  }

  async function played(call: EslCallDescription): Promise<SandboxCall & PortalExtras> {
    const playing = pbx.play(call);
    await playing.done;
    return (await finishedOnPortal(h, playing.callId)) as SandboxCall & PortalExtras;
  }

  /** mod_json_cdr's a-leg record of an inbound call answered by 101 (the ledger posting the same call). */
  const cdrOf = (callId: string, caller: string, billsec: number) => {
    const end = Math.floor(Date.now() / 1000);
    return {
      variables: {
        uuid: callId,
        call_uuid: callId,
        direction: 'inbound',
        start_epoch: String(end - billsec - 5),
        answer_epoch: String(end - billsec),
        bridge_epoch: String(end - billsec),
        end_epoch: String(end),
        billsec: String(billsec),
        hangup_cause: 'NORMAL_CLEARING',
        dialed_user: '101',
        last_bridge_to: 'b-leg',
        bridge_channel: 'sofia/internal/101@192.0.2.21:5060',
      },
      callflow: [
        {
          profile_index: '1',
          caller_profile: {
            caller_id_number: caller,
            destination_number: '4930123456',
            context: 'public',
            originatee: { originatee_caller_profiles: [{ destination_number: '101' }] },
          },
        },
      ],
    };
  };
  const postCdr = (cdr: object) =>
    h.http
      .post('/v1/pbx/freeswitch')
      .set('Authorization', basic('freeswitch'))
      .set('Content-Type', 'application/json')
      .send(JSON.stringify(cdr));

  it('logs in with the password from ESL_URL and subscribes to the events it follows', () => {
    expect(pbx.commands).toContain('auth Cl0eCon-s3cr3t');
    expect(pbx.commands).toContain(
      'event json CHANNEL_CREATE CHANNEL_ANSWER CHANNEL_BRIDGE CHANNEL_UNBRIDGE CHANNEL_HANGUP_COMPLETE CHANNEL_UUID RECORD_START RECORD_STOP CUSTOM callcenter::info',
    );
    expect(pbx.commands).toEqual(
      expect.arrayContaining(['api status', 'api show channels as json', 'api show calls as json']),
    );
  });

  it('inbound to one user, answered and recorded: card to 101, register and finish by 101, talk time, recording', async () => {
    const call = await rung(
      { kind: 'inbound', from: '+4915112345678', to: '101', answeredBy: '101', talk: 42, recording: true },
      [2],
    );
    expect(call).toMatchObject({ TYPE: 2, USER_ID: 2, PHONE_NUMBER: '+4915112345678', registerRequests: 1 });
    expect(call.finished).toMatchObject({ USER_ID: 2, DURATION: 42, STATUS_CODE: '200' });
    expect(call.records.at(-1)?.RECORD_URL).toMatch(/^https:\/\/pbx\.example\.com\/rec\/[0-9a-f-]{36}\.wav$/);
    expect(call.cardLog[0]).toMatchObject({ shown: [2] });
  });

  it('simultaneous ring: the card shown to 101, 102, 103; 102 answers and finishes', async () => {
    const call = await rung(
      { kind: 'inbound', from: '+4915112345679', to: ['101', '102', '103'], answeredBy: '102', talk: 30 },
      [2, 3, 4],
    );
    expect(call.cardLog.flatMap((change) => change.shown).sort()).toEqual(expect.arrayContaining([2, 3, 4]));
    expect(call.finished).toMatchObject({ USER_ID: 3, DURATION: 30, STATUS_CODE: '200' });
    expect(call.shownTo).toEqual([]);
  });

  it('mod_callcenter queue: offered to 101 first, 102 answers and finishes', async () => {
    const call = await rung(
      {
        kind: 'inbound',
        from: '+4915112345680',
        to: ['101', '102'],
        queue: 'support',
        answeredBy: '102',
        talk: 25,
      },
      [2],
    );
    expect(call).toMatchObject({ USER_ID: 2 });
    expect(call.finished).toMatchObject({ USER_ID: 3, DURATION: 25, STATUS_CODE: '200' });
  });

  it.each([
    [{ busy: true }, '486'],
    [{}, '304'],
    [{ voicemail: true }, '304'],
  ])('inbound not answered %j: status %s, no talk time', async (variant, code) => {
    const call = await played({ kind: 'inbound', from: '+4915112345681', to: '101', ...variant });
    expect(call.finished).toMatchObject({ USER_ID: 2, DURATION: 0, STATUS_CODE: code });
  });

  it('outbound through a gateway: TYPE 1, by the dialling employee', async () => {
    const call = await played({
      kind: 'outbound',
      from: '103',
      to: '+4930123456',
      answeredBy: 'y',
      talk: 61,
    });
    expect(call).toMatchObject({ TYPE: 1, USER_ID: 4, PHONE_NUMBER: '+4930123456' });
    expect(call.finished).toMatchObject({ USER_ID: 4, DURATION: 61, STATUS_CODE: '200' });
  });

  it.each([
    ['blind', '102', 3],
    ['attended', '103', 4],
  ] as const)(
    '%s transfer from 101 to %s: the card moves, finish names the target',
    async (kind, to, user) => {
      const call = await rung(
        {
          kind: 'inbound',
          from: '+4915112345682',
          to: '101',
          answeredBy: '101',
          talk: 20,
          transfer: { kind, to },
        },
        [2],
        [user],
      );
      expect(call).toMatchObject({ USER_ID: 2, registerRequests: 1 });
      expect(call.finished).toMatchObject({ USER_ID: user, STATUS_CODE: '200' });
      expect(call.cardLog.flatMap((change) => change.shown)).toEqual([2, user]);
      expect(call.shownTo).toEqual([]);
    },
  );

  it('blind transfer from 101 to 102: the card is shown to 102 while it rings, after the answer, then 102 answers', async () => {
    const playing = pbx.play({
      kind: 'inbound',
      from: '+4915112345685',
      to: '101',
      answeredBy: '101',
      talk: 20,
      transfer: { kind: 'blind', to: '102' },
      holdTransferRinging: true,
    });
    await playing.answered;
    // Passes once src/calls shows the card to a phone that starts ringing after the answer (the core helper's part).
    await eventually(async () => {
      const call = h.sandbox.calls({ EXTERNAL_CALL_ID: playing.callId })[0] as unknown as
        PortalExtras | undefined;
      return call?.shownTo.includes(3) ? true : undefined;
    });
    playing.pickUpTransfer();
    await playing.done;
    const call = (await finishedOnPortal(h, playing.callId)) as SandboxCall & PortalExtras;
    expect(call).toMatchObject({ USER_ID: 2, registerRequests: 1 });
    expect(call.finished).toMatchObject({ USER_ID: 3, STATUS_CODE: '200' });
    expect(call.shownTo).toEqual([]);
  });

  it.each([
    ['anonymous', {}],
    ['+31260xxxxxx', {}],
    ['+4915112345686', { privacy: true }],
  ])('a withheld caller (%s %j) is reported as anonymous, answered by 101', async (from, variant) => {
    const call = await played({ kind: 'inbound', from, to: '101', answeredBy: '101', talk: 12, ...variant });
    expect(call).toMatchObject({ PHONE_NUMBER: 'anonymous', registerRequests: 1 });
    expect(call.finished).toMatchObject({ USER_ID: 2, DURATION: 12, STATUS_CODE: '200' });
  });

  it('phone-to-phone calls reach neither the store nor the portal', async () => {
    const internal = pbx.play({ kind: 'internal', from: '101', to: '102', answeredBy: 'y' });
    const outside = pbx.play({ kind: 'inbound', from: '+4915112345683', to: '103', answeredBy: '103' });
    await Promise.all([internal.done, outside.done]);
    await finishedOnPortal(h, outside.callId);
    expect((await callStatus(h, internal.callId)).status).toBe(404);
    expect(h.sandbox.calls({ EXTERNAL_CALL_ID: internal.callId })).toEqual([]);
  });

  it('the same call followed and posted by mod_json_cdr (a-leg uuid): one call on the portal', async () => {
    const playing = pbx.play({
      kind: 'inbound',
      from: '+4915112345684',
      to: '101',
      answeredBy: '101',
      talk: 121,
    });
    await playing.done;
    await finishedOnPortal(h, playing.callId);
    const response = await postCdr(cdrOf(playing.callId, '+4915112345684', 121));
    expect(response.status).toBe(202);
    expect(response.body).toMatchObject({ accepted: 0, duplicates: 2, callId: playing.callId });
    const call = await finishedOnPortal(h, playing.callId);
    expect(call.registerRequests).toBe(1);
    expect(call.finished).toMatchObject({ USER_ID: 2, DURATION: 121, STATUS_CODE: '200' });
  });

  it('ring-to-card: 20 ringing calls one after another, each card on both phones while they ring, once', async () => {
    // How fast is the follow bench's (`BENCH_SCENARIOS=esl-idle`): a timed assertion here would measure
    // this shared machine, not the bridge.
    const ringing = new Map<string, number>();
    pbx.observe((_frame, event) => {
      if (event['Event-Name'] !== 'CHANNEL_CREATE' || !event.variable_dialed_user) return;
      const callId = String(event['Channel-Call-UUID']);
      ringing.set(callId, (ringing.get(callId) ?? 0) + 1);
    });
    for (let i = 0; i < 20; i++) {
      const playing = pbx.play({
        kind: 'inbound',
        from: `+49151300${String(i).padStart(5, '0')}`,
        to: ['101', '102'],
        answeredBy: '101',
        holdRinging: true,
      });
      // The phones ring until pickUp: the card reached both of them before anyone answered.
      const call = await cardShownTo(playing.callId, [2, 3]);
      expect(ringing.get(playing.callId)).toBe(2);
      expect(call.registerRequests).toBe(1);
      playing.pickUp();
      await playing.done;
    }
  });

  it('50 calls at once: each delivered exactly once, internal ones never', async () => {
    const calls: EslCallDescription[] = Array.from({ length: 50 }, (_, i) => {
      const from = `+49151200${String(i).padStart(5, '0')}`;
      if (i % 5 === 0) {
        return {
          kind: 'outbound',
          from: '101',
          to: `+4930${String(i).padStart(6, '0')}`,
          answeredBy: 'y',
          stepMs: 20,
        };
      }
      if (i % 5 === 1) {
        return { kind: 'inbound', from, to: ['101', '102'], queue: 'support', answeredBy: '102', stepMs: 20 };
      }
      if (i % 5 === 2) {
        return { kind: 'inbound', from, to: ['101', '102', '103'], answeredBy: '103', stepMs: 20 };
      }
      if (i % 5 === 3) return { kind: 'inbound', from, to: '102', stepMs: 20 };
      return { kind: 'internal', from: '101', to: '103', answeredBy: 'y', stepMs: 20 };
    });
    const playing = calls.map((call) => pbx.play(call));
    await Promise.all(playing.map((call) => call.done));
    for (const [i, call] of playing.entries()) {
      if (i % 5 === 4) continue;
      const done = await finishedOnPortal(h, call.callId);
      expect(done.registerRequests).toBe(1);
      expect(done.finished?.STATUS_CODE).toBe(i % 5 === 3 ? '304' : '200');
    }
    for (const [i, call] of playing.entries()) {
      if (i % 5 === 4) expect((await callStatus(h, call.callId)).status).toBe(404);
    }
  });

  it('connection dropped mid-call and refused for 5 s: spanning calls delivered once, calls gone meanwhile counted, mod_json_cdr fills the gap', async () => {
    const before = await health();
    const spanning = pbx.play({
      kind: 'inbound',
      from: '+4915112345690',
      to: '101',
      answeredBy: '101',
      talk: 50,
      holdOpen: true,
    });
    const endsInOutage = pbx.play({
      kind: 'inbound',
      from: '+4915112345691',
      to: '102',
      answeredBy: '102',
      talk: 33,
      holdOpen: true,
    });
    await Promise.all([spanning.answered, endsInOutage.answered]);
    await eventually(async () => {
      const states = await Promise.all([spanning, endsInOutage].map((c) => callStatus(h, c.callId)));
      return states.every((s) => s.status === 200) ? true : undefined;
    });
    await pbx.refuseFor(5000);
    const inside = pbx.play({
      kind: 'inbound',
      from: '+4915112345692',
      to: '103',
      answeredBy: '103',
      talk: 10,
    });
    endsInOutage.hangUp();
    await Promise.all([inside.done, endsInOutage.done]);
    await eventually(
      async () =>
        ((await health()).reconnects as number) > (before.reconnects as number) && (await health()).connected
          ? true
          : undefined,
      40000,
    );
    spanning.hangUp();
    await spanning.done;
    const call = await finishedOnPortal(h, spanning.callId);
    expect(call).toMatchObject({ USER_ID: 2, registerRequests: 1 });
    expect(call.finished).toMatchObject({ USER_ID: 2, DURATION: 50, STATUS_CODE: '200' });
    const after = await health();
    expect(after.possiblyLost).toBe((before.possiblyLost as number) + 1);
    // The call entirely inside the outage: its a-leg and phone leg were never seen (session counter).
    expect(after.unseenChannels as number).toBeGreaterThanOrEqual((before.unseenChannels as number) + 2);
    expect((await callStatus(h, inside.callId)).status).toBe(404);
    // The ledger: mod_json_cdr posts the call that ended while nobody listened; it is finished once.
    expect((await postCdr(cdrOf(endsInOutage.callId, '+4915112345691', 33))).status).toBe(202);
    const gap = await finishedOnPortal(h, endsInOutage.callId);
    expect(gap).toMatchObject({ registerRequests: 1 });
    expect(gap.finished).toMatchObject({ DURATION: 33, STATUS_CODE: '200' });
    // No secret in the health details or the metrics.
    expect(JSON.stringify(after)).not.toContain('s3cr3t');
    expect(after).toMatchObject({ source: 'esl', target: `tcp://127.0.0.1:${pbx.port}` });
    const { text } = await h.http.get('/metrics');
    expect(text).not.toContain('s3cr3t');
    expect(text).toMatch(/bridge_pbx_follow_calls_lost_total [1-9]/);
    expect(text).toMatch(/bridge_pbx_follow_connected 1/);
  }, 120000);
});

describe('PBX_EVENTS=esl with a wrong password', () => {
  it('says login refused in the health details, without the password, and keeps retrying', async () => {
    const pbx = await EslDouble.start();
    const h = await startHarness({ PBX_EVENTS: 'esl', ESL_URL: pbx.url('wr0ng-s3cr3t-pw') });
    try {
      const details = await eventually(async () => {
        const { body } = await h.http.get('/health/ready');
        const follow = (body.details ?? body.info).pbxFollow as Record<string, unknown>;
        return (follow?.reconnects as number) >= 2 ? follow : undefined;
      }, 30000);
      expect(details).toMatchObject({ connected: false, source: 'esl' });
      expect(String(details.lastError)).toMatch(/login refused .*-ERR invalid/);
      expect(JSON.stringify(details)).not.toContain('s3cr3t');
    } finally {
      await h.close();
      await pbx.close();
    }
  }, 60000);
});

interface PortalExtras {
  shownTo: number[];
  cardLog: { by: string; shown: number[]; hidden: number[] }[];
}
