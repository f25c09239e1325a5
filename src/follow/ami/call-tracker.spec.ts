import { AmiDouble, CallDescription, PbxSetup } from '../../../test/support/ami-double';
import { flushedUntil, shortNumbers as numbers, summary } from '../../../test/support/follow-spec';
import { CallEvent } from '../../calls/call';
import { AmiFramer, AmiMessage } from './ami-message';
import { CallTracker } from './call-tracker';
import { Endpoints } from './endpoints';

/** Plays calls on the AMI double (no connection: its event texts are framed and fed to a tracker). */
async function follow(
  calls: CallDescription[],
  options: { trunks?: string[]; template?: string; setup?: PbxSetup } = {},
): Promise<{ events: CallEvent[]; linkedids: string[]; tracker: CallTracker }> {
  const pbx = await AmiDouble.start(undefined, undefined, options.setup);
  const tracker = new CallTracker(new Endpoints(options.trunks ?? [], numbers), {
    recordingTemplate: options.template ?? 'https://pbx.example/rec/{file}',
  });
  const events: CallEvent[] = [];
  let clock = Date.now();
  const framer = new AmiFramer(
    () => undefined,
    (message: AmiMessage) => events.push(...tracker.handle(message, clock++)),
  );
  framer.push('Asterisk Call Manager/9.0.0\r\n');
  // Each emitted event arrives as its own read, then the follower flushes (the worst case for ring groups
  // is covered by the parallel DialBegins being emitted together, as app_dial does).
  pbx.observe((text) => {
    framer.push(text);
  });
  const playing = calls.map((call) => pbx.play({ stepMs: 1, ...call }));
  await flushedUntil(
    playing.map((call) => call.done),
    tracker,
    events,
  );
  await pbx.close();
  return { events, linkedids: playing.map((call) => call.linkedid), tracker };
}

describe('CallTracker: AMI events of real flows → call events', () => {
  it('inbound to one extension, answered, recorded: started, answered, ended with talk time and URL', async () => {
    const { events, linkedids, tracker } = await follow([
      { kind: 'inbound', from: '+4915112345678', to: '101', answeredBy: '101', talk: 42, recording: true },
    ]);
    expect(summary(events)).toEqual([
      ['call.started', '101', null, null],
      ['call.answered', '101', null, null],
      ['call.ended', '101', null, 'answered'],
    ]);
    expect(events.every((e) => e.callId === linkedids[0])).toBe(true);
    const ended = events[2];
    expect(ended).toMatchObject({ direction: 'inbound', phoneNumber: '+4915112345678', durationSec: 42 });
    expect(ended.recordingUrl).toMatch(/^https:\/\/pbx\.example\/rec\/in-101-.*\.wav$/);
    expect(tracker.activeCalls).toBe(0);
    expect(tracker.activeChannels).toBe(0);
  });

  it.each([16, 17] as const)('FreePBX %i contexts give the same events', async (freepbx) => {
    const { events } = await follow([
      { kind: 'inbound', from: '+4915112345678', to: '101', answeredBy: '101', freepbx },
    ]);
    expect(summary(events)).toEqual([
      ['call.started', '101', null, null],
      ['call.answered', '101', null, null],
      ['call.ended', '101', null, 'answered'],
    ]);
  });

  it('inbound not answered: missed, no talk time, no recording', async () => {
    const { events } = await follow([
      { kind: 'inbound', from: '+4915112345678', to: '101', recording: true },
    ]);
    expect(summary(events)).toEqual([
      ['call.started', '101', null, null],
      ['call.ended', '101', null, 'missed'],
    ]);
    expect(events[1]).toMatchObject({ durationSec: 0 });
    expect(events[1].recordingUrl).toBeUndefined();
  });

  it('inbound to a busy phone: busy', async () => {
    const { events } = await follow([{ kind: 'inbound', from: '+4915112345678', to: '101', busy: true }]);
    expect(summary(events)).toEqual([
      ['call.started', '101', null, null],
      ['call.ended', '101', null, 'busy'],
    ]);
  });

  it('only voicemail answered the trunk: missed, not answered', async () => {
    const { events } = await follow([
      { kind: 'inbound', from: '+4915112345678', to: '101', voicemail: true },
    ]);
    expect(summary(events)).toEqual([
      ['call.started', '101', null, null],
      ['call.ended', '101', null, 'missed'],
    ]);
  });

  it('forwarded out through a second trunk (follow-me to a mobile): answered, talk time of the outside leg', async () => {
    const { events, tracker } = await follow([
      {
        kind: 'inbound',
        from: '+4915112345678',
        to: '101',
        forwardTo: '015112349999',
        ring: 15,
        talk: 70,
        recording: true,
      },
    ]);
    // No employee picked up: no call.answered; the call is answered (forwarded), not missed.
    expect(summary(events)).toEqual([
      ['call.started', '101', null, null],
      ['call.ended', '101', null, 'answered'],
    ]);
    expect(events[1]).toMatchObject({ durationSec: 70, phoneNumber: '+4915112345678', direction: 'inbound' });
    expect(events[1].recordingUrl).toMatch(/\/in-101-/);
    expect(tracker.activeCalls).toBe(0);
  });

  it('ring group ringall: every ringing phone in extensions, the answerer answers', async () => {
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

  it('queue with Local ;1/;2 members: 101 times out, 102 answers through the Local pair', async () => {
    const { events } = await follow([
      {
        kind: 'inbound',
        from: '+4915112345678',
        to: ['101', '102'],
        queue: '400',
        answeredBy: '102',
        talk: 25,
        recording: true,
      },
    ]);
    // The queue's next member rings later: a later call.started names it (its card), before the answer.
    expect(summary(events)).toEqual([
      ['call.started', '101', null, null],
      ['call.started', '102', null, null],
      ['call.answered', '102', null, null],
      ['call.ended', '102', null, 'answered'],
    ]);
    expect(events[1]).toMatchObject({ direction: 'inbound', phoneNumber: '+4915112345678' });
    expect(Date.parse(events[1].at)).toBeGreaterThan(Date.parse(events[0].at));
    expect(events[3]).toMatchObject({ durationSec: 25 });
    expect(events[3].recordingUrl).toMatch(/\/q-400-/);
  });

  it('ring group hunt: each next phone gives a later call.started; none after the answer', async () => {
    const { events } = await follow([
      {
        kind: 'inbound',
        from: '+4915112345678',
        to: ['101', '102', '103'],
        strategy: 'hunt',
        answeredBy: '102',
        talk: 20,
      },
    ]);
    expect(summary(events)).toEqual([
      ['call.started', '101', null, null],
      ['call.started', '102', null, null],
      ['call.answered', '102', null, null],
      ['call.ended', '102', null, 'answered'],
    ]);
    expect(events[3]).toMatchObject({ durationSec: 20 });
  });

  it('ring group memory-hunt nobody answers: each round names the phones ringing then; missed', async () => {
    const { events } = await follow([
      { kind: 'inbound', from: '+4915112345678', to: ['101', '102', '103'], strategy: 'memoryhunt' },
    ]);
    expect(summary(events)).toEqual([
      ['call.started', '101', null, null],
      ['call.started', '101', ['101', '102'], null],
      ['call.started', '101', ['101', '102', '103'], null],
      ['call.ended', '101', null, 'missed'],
    ]);
  });

  it('queue nobody answers (caller abandons): missed', async () => {
    const { events } = await follow([{ kind: 'inbound', from: '+4915112345678', to: ['101'], queue: '400' }]);
    expect(summary(events)).toEqual([
      ['call.started', '101', null, null],
      ['call.ended', '101', null, 'missed'],
    ]);
  });

  it('outbound via the trunk: started by the dialling phone, answered, ended', async () => {
    const { events } = await follow([
      { kind: 'outbound', from: '101', to: '+4930123456', answeredBy: 'yes', talk: 61 },
    ]);
    expect(summary(events)).toEqual([
      ['call.started', '101', null, null],
      ['call.answered', '101', null, null],
      ['call.ended', '101', null, 'answered'],
    ]);
    expect(events[0]).toMatchObject({ direction: 'outbound', phoneNumber: '+4930123456' });
    expect(events[2].durationSec).toBe(61);
  });

  it.each([
    [{ busy: true }, 'busy'],
    [{}, 'missed'],
  ])('outbound not answered %j: %s', async (variant, status) => {
    const { events } = await follow([{ kind: 'outbound', from: '101', to: '+4930123456', ...variant }]);
    expect(summary(events)).toEqual([
      ['call.started', '101', null, null],
      ['call.ended', '101', null, status],
    ]);
  });

  it('blind transfer: the target ringing gets a later call.started, then a second call.answered; talk time from the first answer', async () => {
    const { events, linkedids } = await follow([
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
    // The customer's channel dials the target after the answer: the same call, dated when 102 rang.
    expect(events[2]).toMatchObject({
      callId: linkedids[0],
      direction: 'inbound',
      phoneNumber: '+4915112345678',
    });
    expect(Date.parse(events[2].at)).toBeGreaterThan(Date.parse(events[1].at));
    expect(Date.parse(events[2].at)).toBeLessThan(Date.parse(events[3].at));
    expect(events[4].durationSec).toBeGreaterThanOrEqual(30);
  });

  it('queue member whose Local pair optimises away, then blind-transfers (BlindTransfer after the ;2 Hangup, a new Local pair)', async () => {
    const { events, tracker } = await follow([
      {
        kind: 'inbound',
        from: '+4915112345678',
        to: ['101'],
        queue: '400',
        answeredBy: '101',
        talk: 20,
        localOptimization: true,
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
    expect(tracker.activeChannels).toBe(0);
  });

  it.each([
    ['the event filter drops Agent* events', { agentEvents: false }],
    [
      'several manager sessions repeat events (backward SequenceNumbers)',
      { managerDebug: true, repeatedEvents: true },
    ],
    ['timestampevents off', { timestampEvents: false }],
  ] as const)('%s: the same call events', async (_, setup) => {
    const calls: CallDescription[] = [
      { kind: 'inbound', from: '+4915112345678', to: ['101', '102'], queue: '400', answeredBy: '102' },
      {
        kind: 'inbound',
        from: '+4915112345679',
        to: '103',
        answeredBy: '103',
        transfer: { kind: 'attended', to: '101' },
      },
    ];
    const { events, linkedids } = await follow(calls, { setup });
    const of = (i: number) => summary(events.filter((e) => e.callId === linkedids[i]));
    expect(of(0)).toEqual([
      ['call.started', '101', null, null],
      ['call.started', '102', null, null],
      ['call.answered', '102', null, null],
      ['call.ended', '102', null, 'answered'],
    ]);
    expect(of(1)).toEqual([
      ['call.started', '103', null, null],
      ['call.answered', '103', null, null],
      ['call.answered', '101', null, null],
      ['call.ended', '101', null, 'answered'],
    ]);
  });

  it("the phone's BridgeEnter before the caller's DialEnd: answered once", async () => {
    const { events } = await follow([
      { kind: 'inbound', from: '+4915112345678', to: ['101', '102'], answeredBy: '102', bridgeFirst: true },
    ]);
    expect(summary(events)).toEqual([
      ['call.started', '101', ['101', '102'], null],
      ['call.answered', '102', null, null],
      ['call.ended', '102', null, 'answered'],
    ]);
  });

  it.each(['anonymous', 'masked', 'prohibited'] as const)(
    'a withheld caller (%s): phoneNumber anonymous',
    async (withheld) => {
      const { events } = await follow([
        { kind: 'inbound', from: '+31260010001', to: '101', answeredBy: '101', withheld },
      ]);
      expect(events.map((e) => [e.event, e.phoneNumber ?? null])).toEqual([
        ['call.started', 'anonymous'],
        ['call.answered', null],
        ['call.ended', 'anonymous'],
      ]);
    },
  );

  it('outbound recorded: FreePBX records on the phone before the trunk is dialled; the call gets it', async () => {
    const { events } = await follow(
      [{ kind: 'outbound', from: '101', to: '+4930123456', answeredBy: 'y', recording: true }],
      { template: 'https://pbx.example/monitor/{yyyy}/{mm}/{dd}/{file}' },
    );
    expect(events.at(-1)).toMatchObject({
      event: 'call.ended',
      status: 'answered',
      phoneNumber: '+4930123456',
    });
    expect(events.at(-1)?.recordingUrl).toMatch(
      /^https:\/\/pbx\.example\/monitor\/\d{4}\/\d{2}\/\d{2}\/out-%2B4930123456-101-\d{8}-\d{6}-[\d.]+\.wav$/,
    );
  });

  it('attended transfer: the consultation (phone to phone) is not a call; the target answers after the Linkedid rewrite', async () => {
    const { events, linkedids } = await follow([
      {
        kind: 'inbound',
        from: '+4915112345678',
        to: '101',
        answeredBy: '101',
        transfer: { kind: 'attended', to: '103' },
      },
    ]);
    expect(summary(events)).toEqual([
      ['call.started', '101', null, null],
      ['call.answered', '101', null, null],
      ['call.answered', '103', null, null],
      ['call.ended', '103', null, 'answered'],
    ]);
    expect(new Set(events.map((e) => e.callId))).toEqual(new Set([linkedids[0]]));
  });

  it('phone-to-phone calls give nothing', async () => {
    const { events, tracker } = await follow([
      { kind: 'internal', from: '101', to: '102', answeredBy: 'yes' },
      { kind: 'internal', from: '103', to: '104' },
    ]);
    expect(events).toEqual([]);
    expect(tracker.activeChannels).toBe(0);
  });

  it('PBX_TRUNKS: a trunk named like a number is still the outside party', async () => {
    const { events } = await follow(
      [{ kind: 'inbound', from: '+4915112345678', to: '101', answeredBy: '101' }],
      { trunks: ['PJSIP/trunk*'] },
    );
    expect(events.map((e) => e.event)).toEqual(['call.started', 'call.answered', 'call.ended']);
  });

  it('100 calls at once, interleaved: each gets its own events, memory is dropped at the end', async () => {
    const calls: CallDescription[] = Array.from({ length: 100 }, (_, i) =>
      i % 4 === 0
        ? {
            kind: 'inbound',
            from: `+49151000${String(i).padStart(4, '0')}`,
            to: ['101', '102'],
            answeredBy: '102',
          }
        : i % 4 === 1
          ? { kind: 'outbound', from: '103', to: `+4930${String(i).padStart(6, '0')}`, answeredBy: 'y' }
          : i % 4 === 2
            ? {
                kind: 'inbound',
                from: `+49151000${String(i).padStart(4, '0')}`,
                to: ['104'],
                queue: '400',
                answeredBy: '104',
              }
            : { kind: 'internal', from: '105', to: '106', answeredBy: 'y' },
    );
    const { events, linkedids, tracker } = await follow(calls);
    for (const [i, linkedid] of linkedids.entries()) {
      const mine = events.filter((e) => e.callId === linkedid).map((e) => e.event);
      expect(mine).toEqual(i % 4 === 3 ? [] : ['call.started', 'call.answered', 'call.ended']);
    }
    expect(tracker.activeCalls).toBe(0);
    expect(tracker.activeChannels).toBe(0);
  });
});

describe('CallTracker.resync (after a reconnect)', () => {
  const endpoints = new Endpoints([], numbers);
  const channel = (name: string, uniqueid: string, linkedid: string, extra: Record<string, string> = {}) => ({
    Event: 'CoreShowChannel',
    Channel: name,
    ChannelState: '6',
    ChannelStateDesc: 'Up',
    CallerIDNum: name.includes('trunk') ? '+4915112345678' : name.slice(6, 9),
    Uniqueid: uniqueid,
    Linkedid: linkedid,
    Duration: '00:01:05',
    BridgeId: '',
    ...extra,
  });
  const event = (name: string, fields: Record<string, string>) => ({ Event: name, ...fields });
  const now = Date.parse('2026-11-26T10:00:00Z');

  /** An inbound call answered by 101 in bridge B1: trunk 1700000000.10, phone 1700000000.11. */
  function answeredCall(tracker: CallTracker): CallEvent[] {
    const trunk = {
      Channel: 'PJSIP/trunk1-00000010',
      Uniqueid: '1700000000.10',
      Linkedid: '1700000000.10',
      CallerIDNum: '+4915112345678',
    };
    const phone = {
      Channel: 'PJSIP/101-00000011',
      Uniqueid: '1700000000.11',
      Linkedid: '1700000000.10',
      CallerIDNum: '101',
    };
    const dest = Object.fromEntries(Object.entries(phone).map(([k, v]) => [`Dest${k}`, v]));
    return [
      ...tracker.handle(event('Newchannel', trunk), now),
      ...tracker.handle(event('Newchannel', phone), now),
      ...tracker.handle(event('DialBegin', { ...trunk, ...dest }), now),
      ...tracker.handle(event('DialEnd', { ...trunk, ...dest, DialStatus: 'ANSWER' }), now + 5000),
      ...tracker.handle(event('BridgeEnter', { ...trunk, BridgeUniqueid: 'B1' }), now + 5000),
      ...tracker.handle(event('BridgeEnter', { ...phone, BridgeUniqueid: 'B1' }), now + 5000),
    ];
  }

  it('a call still live is kept: its hang-up after the reconnect ends it once, with the full talk time', () => {
    const tracker = new CallTracker(endpoints);
    expect(answeredCall(tracker).map((e) => e.event)).toEqual(['call.started', 'call.answered']);
    const outcome = tracker.resync(
      [
        channel('PJSIP/trunk1-00000010', '1700000000.10', '1700000000.10', { BridgeId: 'B1' }),
        channel('PJSIP/101-00000011', '1700000000.11', '1700000000.10', { BridgeId: 'B1' }),
      ],
      now + 20_000,
    );
    expect(outcome).toEqual({ lost: [], unseenChannels: 0, events: [] });
    const ended = tracker.handle(
      event('Hangup', {
        Channel: 'PJSIP/trunk1-00000010',
        Uniqueid: '1700000000.10',
        Linkedid: '1700000000.10',
      }),
      now + 65_000,
    );
    expect(ended).toMatchObject([
      { event: 'call.ended', status: 'answered', durationSec: 60, extension: '101' },
    ]);
  });

  it('a transfer that happened while disconnected is a new call.answered from the listed bridges', () => {
    const tracker = new CallTracker(endpoints);
    answeredCall(tracker);
    const outcome = tracker.resync(
      [
        channel('PJSIP/trunk1-00000010', '1700000000.10', '1700000000.10', { BridgeId: 'B2' }),
        channel('PJSIP/102-00000014', '1700000000.14', '1700000000.10', { BridgeId: 'B2' }),
      ],
      now + 20_000,
    );
    expect(outcome.events).toMatchObject([{ event: 'call.answered', extension: '102' }]);
    expect(outcome.unseenChannels).toBe(2); // .12 and .13: the transfer's legs, gone meanwhile
  });

  it('a call followed before and gone after is lost (no guessed end), and memory is freed', () => {
    const tracker = new CallTracker(endpoints);
    answeredCall(tracker);
    const outcome = tracker.resync([], now + 20_000);
    expect(outcome.lost).toEqual(['1700000000.10']);
    expect(outcome.events).toEqual([]);
    expect(tracker.activeCalls).toBe(0);
    expect(tracker.activeChannels).toBe(0);
  });

  it('a call that began while disconnected is followed from the listed channels: started when it began, answered', () => {
    const tracker = new CallTracker(endpoints);
    const outcome = tracker.resync(
      [
        channel('PJSIP/trunk1-00000020', '1700000000.20', '1700000000.20', {
          BridgeId: 'B3',
          Duration: '00:00:40',
        }),
        channel('PJSIP/103-00000021', '1700000000.21', '1700000000.20', { BridgeId: 'B3' }),
      ],
      now,
    );
    expect(outcome.events).toMatchObject([
      {
        event: 'call.started',
        callId: '1700000000.20',
        direction: 'inbound',
        phoneNumber: '+4915112345678',
        extension: '103',
        at: new Date(now - 40_000).toISOString(),
      },
      { event: 'call.answered', extension: '103' },
    ]);
  });

  it('channels nobody saw are counted from the Uniqueid counter when the next channel appears', () => {
    const tracker = new CallTracker(endpoints);
    answeredCall(tracker);
    tracker.resync(
      [
        channel('PJSIP/trunk1-00000010', '1700000000.10', '1700000000.10', { BridgeId: 'B1' }),
        channel('PJSIP/101-00000011', '1700000000.11', '1700000000.10', { BridgeId: 'B1' }),
      ],
      now,
    );
    expect(tracker.unseenChannels).toBe(0);
    tracker.handle(
      event('Newchannel', {
        Channel: 'PJSIP/trunk1-00000030',
        Uniqueid: '1700000050.17',
        Linkedid: '1700000050.17',
      }),
      now,
    );
    expect(tracker.unseenChannels).toBe(5); // .12 to .16
  });
});

describe('CallTracker on the PBX clock', () => {
  const endpoints = new Endpoints([], numbers);
  const now = Date.parse('2026-11-26T10:00:00Z');
  const behind = now - 600_000;
  const trunk = {
    Channel: 'PJSIP/trunk1-00000020',
    Uniqueid: '1700000000.20',
    Linkedid: '1700000000.20',
    CallerIDNum: '+4915112345678',
  };
  const phone = { Channel: 'PJSIP/103-00000021', Uniqueid: '1700000000.21', Linkedid: '1700000000.20' };
  const listed = [
    { Event: 'CoreShowChannel', ...trunk, BridgeId: 'B3', Duration: '00:00:40' },
    { Event: 'CoreShowChannel', ...phone, BridgeId: 'B3', Duration: '00:00:38' },
  ];
  const hangup = { Event: 'Hangup', ...trunk, Timestamp: String((behind + 90_000) / 1000) };

  it('a PBX 10 minutes behind: a resync dates on its clock (Ping), so the hang-up on its Timestamp gives the talk time', () => {
    const tracker = new CallTracker(endpoints);
    tracker.noteClock(behind, now);
    const { events } = tracker.resync(listed, now);
    expect(events).toMatchObject([
      { event: 'call.started', at: new Date(behind - 40_000).toISOString() },
      { event: 'call.answered', at: new Date(behind).toISOString() },
    ]);
    expect(tracker.handle(hangup, now + 90_000)).toMatchObject([
      { event: 'call.ended', durationSec: 90, startedAt: new Date(behind - 40_000).toISOString() },
    ]);
  });

  it('an answer time from the store (a takeover) is on the PBX clock and kept', () => {
    const tracker = new CallTracker(endpoints);
    tracker.noteClock(behind, now);
    const { events } = tracker.resync(listed, now, new Map([['1700000000.20', behind - 30_000]]));
    expect(events[1]).toMatchObject({ event: 'call.answered', at: new Date(behind - 30_000).toISOString() });
    expect(tracker.handle(hangup, now + 90_000)).toMatchObject([{ durationSec: 120 }]);
  });

  it('events without a Timestamp are dated on the PBX clock as last read; with none read, on arrival', () => {
    const tracker = new CallTracker(endpoints);
    expect(tracker.handle({ Event: 'Newchannel', ...trunk }, now)).toEqual([]);
    const ring = {
      Event: 'DialBegin',
      ...trunk,
      ...Object.fromEntries(Object.entries(phone).map(([k, v]) => [`Dest${k}`, v])),
    };
    tracker.handle(ring, now);
    expect(tracker.flush()).toMatchObject([{ at: new Date(now).toISOString() }]);
    const late = new CallTracker(endpoints);
    late.noteClock(behind, now);
    late.handle({ Event: 'Newchannel', ...trunk }, now + 1000);
    late.handle(ring, now + 1000);
    expect(late.flush()).toMatchObject([{ at: new Date(behind + 1000).toISOString() }]);
  });
});

describe('CallTracker memory', () => {
  it('200 000 channels that never hang up past a cap of 1 000: every map stays bounded; a live call keeps its trunk', () => {
    const tracker = new CallTracker(new Endpoints([], numbers), { maxChannels: 1000 });
    const trunk = {
      Channel: 'PJSIP/trunk1-00000001',
      Uniqueid: '1700000000.1',
      Linkedid: '1700000000.1',
      CallerIDNum: '+4915112345678',
    };
    tracker.handle({ Event: 'Newchannel', ...trunk }, Date.now());
    for (let n = 2; n < 200_000; n++) {
      const id = `1700000000.${n}`;
      tracker.handle(
        {
          Event: 'Newchannel',
          Channel: `PJSIP/${100 + (n % 50)}-${n.toString(16)}`,
          Uniqueid: id,
          Linkedid: id,
        },
        Date.now(),
      );
      tracker.handle(
        {
          Event: 'BridgeEnter',
          Channel: `PJSIP/${100 + (n % 50)}-${n.toString(16)}`,
          Uniqueid: id,
          Linkedid: id,
          BridgeUniqueid: `B${n}`,
        },
        Date.now(),
      );
    }
    expect(tracker.activeChannels).toBe(1000);
    const maps = tracker as unknown as { byName: Map<string, string>; bridges: Map<string, Set<string>> };
    expect(maps.byName.size).toBe(1000);
    expect(maps.bridges.size).toBeLessThanOrEqual(1000);
    // The call's outside party was never evicted: its hang-up still ends the call.
    expect(tracker.handle({ Event: 'Hangup', ...trunk }, Date.now())).toMatchObject([
      { event: 'call.ended', callId: '1700000000.1' },
    ]);
  });

  it('holds at most maxCalls calls: the oldest is forgotten and counted', () => {
    const tracker = new CallTracker(new Endpoints([], numbers), { maxCalls: 2 });
    for (const n of [1, 2, 3]) {
      tracker.handle(
        {
          Event: 'Newchannel',
          Channel: `PJSIP/trunk1-0000000${n}`,
          Uniqueid: `1700000000.${n}`,
          Linkedid: `1700000000.${n}`,
          CallerIDNum: '+4915112345678',
        },
        Date.now(),
      );
    }
    expect(tracker.activeCalls).toBe(2);
    expect(tracker.forgottenCalls).toBe(1);
  });
});
