import { EslCallDescription, EslDouble } from '../../../test/support/esl-double';
import { flushedUntil, shortNumbers as numbers, summary } from '../../../test/support/follow-spec';
import { CallEvent } from '../../calls/call';
import { EslEvent, EslFramer, parseJsonEvent } from './esl-message';
import { EslTracker } from './esl-tracker';
import { Legs } from './legs';

/** Plays calls on the event socket double (no connection: its framed events are parsed and fed to a tracker). */
async function follow(
  calls: EslCallDescription[],
  options: { trunks?: string[]; template?: string; unseen?: (event: EslEvent) => boolean } = {},
): Promise<{ events: CallEvent[]; callIds: string[]; tracker: EslTracker; fired: EslEvent[] }> {
  const pbx = await EslDouble.start();
  const tracker = new EslTracker(new Legs(options.trunks ?? [], numbers), {
    recordingTemplate: options.template ?? 'https://pbx.example/rec/{file}',
  });
  const events: CallEvent[] = [];
  const fired: EslEvent[] = [];
  let clock = Date.now();
  const framer = new EslFramer((message) => {
    expect(message.headers['Content-Type']).toBe('text/event-json');
    const event = parseJsonEvent(message.body);
    if (event) fired.push(event);
    if (event && !options.unseen?.(event)) events.push(...tracker.handle(event, clock++));
  });
  pbx.observe((frame) => framer.push(Buffer.from(frame)));
  const playing = calls.map((call) => pbx.play({ stepMs: 1, ...call }));
  await flushedUntil(
    playing.map((call) => call.done),
    tracker,
    events,
  );
  await pbx.close();
  return { events, callIds: playing.map((call) => call.callId), tracker, fired };
}

describe('EslTracker: FreeSWITCH events of real flows → call events', () => {
  it('inbound to one user, answered, record_session: started, answered, ended with talk time and URL', async () => {
    const { events, callIds, tracker } = await follow([
      { kind: 'inbound', from: '+4915112345678', to: '101', answeredBy: '101', talk: 42, recording: true },
    ]);
    expect(summary(events)).toEqual([
      ['call.started', '101', null, null],
      ['call.answered', '101', null, null],
      ['call.ended', '101', null, 'answered'],
    ]);
    expect(events.every((e) => e.callId === callIds[0])).toBe(true);
    expect(events[2]).toMatchObject({ direction: 'inbound', phoneNumber: '+4915112345678', durationSec: 42 });
    expect(events[2].recordingUrl).toBe(`https://pbx.example/rec/${callIds[0]}.wav`);
    expect(tracker.activeCalls).toBe(0);
    expect(tracker.activeLegs).toBe(0);
  });

  it('the recording path through the {path} of FREESWITCH_RECORDING_URL', async () => {
    const withPath = await follow(
      [{ kind: 'inbound', from: '+4915112345678', to: '101', answeredBy: '101', recording: true }],
      { template: 'https://pbx.example/{path}' },
    );
    expect(withPath.events.at(-1)?.recordingUrl).toBe(
      `https://pbx.example/var/lib/freeswitch/recordings/203.0.113.10/archive/2026/Nov/26/${withPath.callIds[0]}.wav`,
    );
  });

  it.each([
    [{}, 'missed'],
    [{ busy: true }, 'busy'],
    [{ voicemail: true }, 'missed'],
  ])('inbound not answered %j: %s, no talk time, no recording', async (variant, status) => {
    const { events } = await follow([
      { kind: 'inbound', from: '+4915112345678', to: '101', recording: true, ...variant },
    ]);
    expect(summary(events)).toEqual([
      ['call.started', '101', null, null],
      ['call.ended', '101', null, status],
    ]);
    expect(events[1]).toMatchObject({ durationSec: 0 });
    expect(events[1].recordingUrl).toBeUndefined();
  });

  it('simultaneous ring (user/101,user/102,user/103): one call.started with every phone; 102 answers', async () => {
    const { events } = await follow([
      { kind: 'inbound', from: '+4915112345678', to: ['101', '102', '103'], answeredBy: '102', talk: 30 },
    ]);
    expect(summary(events)).toEqual([
      ['call.started', '101', ['101', '102', '103'], null],
      ['call.answered', '102', null, null],
      ['call.ended', '102', null, 'answered'],
    ]);
    expect(events[2].durationSec).toBe(30);
  });

  it('mod_callcenter: agent legs with their own call uuid ring the card; 102 answers after 101 did not', async () => {
    const { events, callIds } = await follow([
      {
        kind: 'inbound',
        from: '+4915112345678',
        to: ['101', '102'],
        queue: 'support',
        answeredBy: '102',
        talk: 25,
      },
    ]);
    expect(summary(events)).toEqual([
      ['call.started', '101', null, null],
      // 102 starts ringing after 101 gave up: a later call.started shows the card to 102 as well.
      ['call.started', '102', null, null],
      ['call.answered', '102', null, null],
      ['call.ended', '102', null, 'answered'],
    ]);
    expect(events.every((e) => e.callId === callIds[0])).toBe(true);
    expect(events[3].durationSec).toBe(25);
  });

  it('a queue call nobody answers (answered by mod_callcenter, the caller gives up) is missed', async () => {
    const { events } = await follow([
      { kind: 'inbound', from: '+4915112345678', to: ['101'], queue: 'support' },
    ]);
    expect(summary(events)).toEqual([
      ['call.started', '101', null, null],
      ['call.ended', '101', null, 'missed'],
    ]);
  });

  it('attended transfer to 103: a second call.answered, the end names the target', async () => {
    const to = '103';
    const { events, callIds } = await follow([
      {
        kind: 'inbound',
        from: '+4915112345678',
        to: '101',
        answeredBy: '101',
        talk: 20,
        transfer: { kind: 'attended', to },
      },
    ]);
    expect(summary(events)).toEqual([
      ['call.started', '101', null, null],
      ['call.answered', '101', null, null],
      ['call.answered', to, null, null],
      ['call.ended', to, null, 'answered'],
    ]);
    expect(events.every((e) => e.callId === callIds[0])).toBe(true);
    // Talk time from the first answer: 10 s before the transfer, the consultation, then 20 s.
    expect(events[3].durationSec).toBeGreaterThanOrEqual(30);
  });

  it('blind transfer to 102: the target ringing after the answer gets a call.started at its ring, then answers', async () => {
    const { events, callIds, fired } = await follow([
      {
        kind: 'inbound',
        from: '+4915112345678',
        to: '101',
        answeredBy: '101',
        talk: 20,
        transfer: { kind: 'blind', to: '102' },
      },
    ]);
    expect(summary(events)).toEqual([
      ['call.started', '101', null, null],
      ['call.answered', '101', null, null],
      ['call.started', '102', null, null],
      ['call.answered', '102', null, null],
      ['call.ended', '102', null, 'answered'],
    ]);
    const targetRings = fired.find(
      (e) => e['Event-Name'] === 'CHANNEL_CREATE' && e.variable_dialed_user === '102',
    );
    expect(events[2]).toMatchObject({
      callId: callIds[0],
      direction: 'inbound',
      phoneNumber: '+4915112345678',
      at: new Date(Math.round(Number(targetRings?.['Event-Date-Timestamp']) / 1000)).toISOString(),
    });
    expect(Date.parse(events[2].at)).toBeGreaterThan(Date.parse(events[1].at));
    expect(events[4].durationSec).toBeGreaterThanOrEqual(30);
  });

  it("an answer nobody saw (the socket was down): the outside leg's hang-up says who was bridged, and when", async () => {
    const { events, fired } = await follow(
      [
        {
          kind: 'inbound',
          from: '+4915112345678',
          to: '101',
          answeredBy: '101',
          talk: 42,
          recording: 'plain',
        },
      ],
      { unseen: (event) => ['CHANNEL_BRIDGE', 'RECORD_START'].includes(String(event['Event-Name'])) },
    );
    expect(summary(events)).toEqual([
      ['call.started', '101', null, null],
      ['call.answered', '101', null, null],
      ['call.ended', '101', null, 'answered'],
    ]);
    const bridge = fired.find((event) => event['Event-Name'] === 'CHANNEL_BRIDGE');
    expect(events[1].at).toBe(new Date(Number(bridge?.['Event-Date-Timestamp']) / 1000).toISOString());
    expect(events[2]).toMatchObject({ durationSec: 42 });
    // A plain record_session seen only at its RECORD_STOP (which comes at the hang-up).
    expect(events[2].recordingUrl).toMatch(/^https:\/\/pbx\.example\/rec\/[0-9a-f-]{36}\.wav$/);
  });

  it.each([
    ['anonymous', {}],
    ['<unknown>', {}],
    ['unavailable', {}],
    ['+31260xxxxxx', {}],
    ['door-phone', {}],
    ['+4915112345678', { privacy: true }],
  ])('a withheld or non-number caller %s %j is anonymous', async (from, variant) => {
    const { events } = await follow([{ kind: 'inbound', from, to: '101', answeredBy: '101', ...variant }]);
    expect(events.map((event) => event.phoneNumber ?? null)).toEqual(['anonymous', null, 'anonymous']);
  });

  it('outbound through a gateway: started at the dial by the phone, callId the phone leg, answered by it', async () => {
    const { events, callIds } = await follow([
      { kind: 'outbound', from: '103', to: '+4930123456', answeredBy: 'y', talk: 61 },
    ]);
    expect(summary(events)).toEqual([
      ['call.started', '103', null, null],
      ['call.answered', '103', null, null],
      ['call.ended', '103', null, 'answered'],
    ]);
    expect(events.every((e) => e.callId === callIds[0])).toBe(true);
    expect(events[0]).toMatchObject({ direction: 'outbound', phoneNumber: '+4930123456' });
    expect(events[2].durationSec).toBe(61);
  });

  it('an outbound call the employee blind-transfers: the gateway leg dials the target (its own call uuid by then)', async () => {
    const { events, callIds } = await follow([
      {
        kind: 'outbound',
        from: '103',
        to: '+4930123456',
        answeredBy: 'y',
        transfer: { kind: 'blind', to: '102' },
      },
    ]);
    expect(summary(events)).toEqual([
      ['call.started', '103', null, null],
      ['call.answered', '103', null, null],
      ['call.started', '102', null, null],
      ['call.answered', '102', null, null],
      ['call.ended', '102', null, 'answered'],
    ]);
    expect(events[2]).toMatchObject({ direction: 'outbound', phoneNumber: '+4930123456' });
    expect(events.every((e) => e.callId === callIds[0])).toBe(true);
  });

  it.each([
    [{ busy: true }, 'busy'],
    [{}, 'missed'],
  ])('outbound not answered %j: %s', async (variant, status) => {
    const { events } = await follow([{ kind: 'outbound', from: '103', to: '+4930123456', ...variant }]);
    expect(summary(events)).toEqual([
      ['call.started', '103', null, null],
      ['call.ended', '103', null, status],
    ]);
  });

  it("click-to-call: the originate's crm_call_id rides on the call's events", async () => {
    const { events } = await follow([
      { kind: 'outbound', from: '103', to: '+4930123456', answeredBy: 'y', crmCallId: 'externalCall.abc.1' },
    ]);
    expect(events.find((e) => e.event === 'call.started')?.crmCallId).toBe('externalCall.abc.1');
    expect(events.find((e) => e.event === 'call.ended')?.crmCallId).toBe('externalCall.abc.1');
  });

  it('phone to phone gives nothing', async () => {
    const { events, tracker } = await follow([{ kind: 'internal', from: '101', to: '102', answeredBy: 'y' }]);
    expect(events).toEqual([]);
    expect(tracker.activeLegs).toBe(0);
  });

  it('with PBX_TRUNKS patterns, sofia/external legs are trunks and every other leg a phone', async () => {
    const { events } = await follow(
      [
        { kind: 'inbound', from: '+4915112345678', to: '101', answeredBy: '101' },
        { kind: 'internal', from: '101', to: '102', answeredBy: 'y' },
      ],
      { trunks: ['sofia/external/*'] },
    );
    expect(summary(events)).toEqual([
      ['call.started', '101', null, null],
      ['call.answered', '101', null, null],
      ['call.ended', '101', null, 'answered'],
    ]);
  });

  it('legs without dialed_user: a bridge to sofia/internal/101@… is the phone 101; a gateway leg a trunk', () => {
    const legs = new Legs([], numbers);
    const dialled = {
      'Call-Direction': 'outbound',
      'Channel-Name': 'sofia/internal/sip:101@192.0.2.21:5060',
    };
    expect(legs.classify({ ...dialled, 'Caller-Destination-Number': '101@203.0.113.10' })).toEqual({
      kind: 'phone',
      extension: '101',
    });
    expect(
      legs.classify({
        'Call-Direction': 'outbound',
        'Channel-Name': 'sofia/external/101@sip.carrier.example',
        variable_sip_gateway_name: 'carrier',
      }),
    ).toEqual({ kind: 'trunk' });
    expect(
      legs.classify({
        'Call-Direction': 'inbound',
        'Channel-Name': 'sofia/external/102@sip.carrier.example',
        'Caller-Context': 'public',
        'Caller-Caller-ID-Number': '102',
      }),
    ).toEqual({ kind: 'trunk' });
    expect(legs.classify({ 'Call-Direction': 'outbound', 'Channel-Name': 'loopback/101-a' })).toEqual({
      kind: 'other',
    });
  });

  it('many calls at once keep apart, and the tracker forgets them when they end', async () => {
    const calls: EslCallDescription[] = Array.from({ length: 40 }, (_, i) =>
      i % 4 === 0
        ? { kind: 'outbound', from: '101', to: `+49301234${String(i).padStart(3, '0')}`, answeredBy: 'y' }
        : i % 4 === 1
          ? {
              kind: 'inbound',
              from: `+4915100000${String(i).padStart(3, '0')}`,
              to: ['101', '102'],
              answeredBy: '102',
            }
          : i % 4 === 2
            ? {
                kind: 'inbound',
                from: `+4915100000${String(i).padStart(3, '0')}`,
                to: ['101', '102'],
                queue: 'q',
                answeredBy: '102',
              }
            : { kind: 'internal', from: '101', to: '103', answeredBy: 'y' },
    );
    const { events, callIds, tracker } = await follow(calls);
    for (const [i, callId] of callIds.entries()) {
      const mine = events.filter((e) => e.callId === callId).map((e) => e.event);
      // Queue calls (i % 4 === 2): the agents ring one after the other, so 102 gets a later call.started.
      const expected =
        i % 4 === 3
          ? []
          : i % 4 === 2
            ? ['call.started', 'call.started', 'call.answered', 'call.ended']
            : ['call.started', 'call.answered', 'call.ended'];
      expect(mine).toEqual(expected);
    }
    expect(tracker.activeCalls).toBe(0);
    expect(tracker.activeLegs).toBe(0);
  });

  it('resync: a call whose outside leg is gone is lost; one still up goes on; the session counter tells the unseen', () => {
    const tracker = new EslTracker(new Legs([], numbers));
    const at = Date.now() * 1000;
    const create = (uuid: string, name: string, extra: Record<string, string>) =>
      tracker.handle(
        {
          'Event-Name': 'CHANNEL_CREATE',
          'Event-Date-Timestamp': String(at),
          'Channel-Name': name,
          'Unique-ID': uuid,
          'Channel-Call-UUID': extra['Channel-Call-UUID'] ?? uuid,
          ...extra,
        },
        Date.now(),
      );
    create('a1', 'sofia/external/+4915112345678@carrier', {
      'Call-Direction': 'inbound',
      'Caller-Context': 'public',
      'Caller-Caller-ID-Number': '+4915112345678',
      variable_session_id: '7',
    });
    create('a2', 'sofia/external/+4915112345679@carrier', {
      'Call-Direction': 'inbound',
      'Caller-Context': 'public',
      'Caller-Caller-ID-Number': '+4915112345679',
      variable_session_id: '8',
    });
    const outcome = tracker.resync(
      {
        channels: [
          {
            uuid: 'a2',
            direction: 'inbound',
            name: 'sofia/external/+4915112345679@carrier',
            context: 'default',
            initial_context: 'public',
            cid_num: '+4915112345679',
            call_uuid: 'a2',
            created_epoch: '1',
          },
          {
            uuid: 'b2',
            direction: 'outbound',
            name: 'sofia/internal/102@192.0.2.22:5060',
            context: 'default',
            dest: '102',
            presence_id: '102@pbx',
            call_uuid: 'a2',
            created_epoch: '1',
          },
        ],
        bridged: [['a2', 'b2']],
        sessionsSinceStartup: 14,
      },
      Date.now(),
    );
    expect(outcome.lost).toEqual(['a1']);
    // Sessions 9–14 were given while disconnected; b2 is one of them: 5 unseen.
    expect(outcome.unseenChannels).toBe(5);
    expect(summary(outcome.events)).toEqual([
      ['call.started', '102', null, null],
      ['call.answered', '102', null, null],
    ]);
    expect(tracker.activeCalls).toBe(1);
  });
  it('resync: a call whose hang-up arrived while the lists were read is not lost; its held hang-up ends it', () => {
    const tracker = new EslTracker(new Legs([], numbers));
    const base = {
      'Event-Date-Timestamp': String(Date.now() * 1000),
      'Channel-Name': 'sofia/external/+4915112345678@carrier',
      'Unique-ID': 'a1',
      'Channel-Call-UUID': 'a1',
      'Call-Direction': 'inbound',
      'Caller-Context': 'public',
      'Caller-Caller-ID-Number': '+4915112345678',
    };
    tracker.handle({ ...base, 'Event-Name': 'CHANNEL_CREATE' }, Date.now());
    const outcome = tracker.resync({ channels: [], bridged: [] }, Date.now(), new Set(['a1']));
    expect(outcome.lost).toEqual([]);
    const ended = tracker.handle(
      { ...base, 'Event-Name': 'CHANNEL_HANGUP_COMPLETE', 'Hangup-Cause': 'NORMAL_CLEARING' },
      Date.now(),
    );
    expect(summary(ended)).toEqual([['call.ended', null, null, 'missed']]);
    expect(tracker.activeCalls).toBe(0);
  });
});
