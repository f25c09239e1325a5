import { AmiDouble, CallDescription } from '../../../test/support/ami-double';
import { CallEvent } from '../../calls/call';
import { AmiFramer, AmiMessage } from './ami-message';
import { CallTracker } from './call-tracker';
import { Endpoints } from './endpoints';

const numbers = { isEmployee: () => false, maxDigits: 4 };

/** Plays calls on the AMI double (no connection: its event texts are framed and fed to a tracker). */
async function follow(
  calls: CallDescription[],
  options: { trunks?: string[]; template?: string } = {},
): Promise<{ events: CallEvent[]; linkedids: string[]; tracker: CallTracker }> {
  const pbx = await AmiDouble.start();
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
  const flusher = setInterval(() => events.push(...tracker.flush()), 2);
  await Promise.all(playing.map((call) => call.done));
  clearInterval(flusher);
  events.push(...tracker.flush());
  await pbx.close();
  return { events, linkedids: playing.map((call) => call.linkedid), tracker };
}

const summary = (events: CallEvent[]) =>
  events.map((e) => [e.event, e.extension ?? null, e.extensions ?? null, e.status ?? null]);

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

  it('blind transfer: a second call.answered by the target, talk time from the first answer', async () => {
    const { events } = await follow([
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
      ['call.answered', '102', null, null],
      ['call.ended', '102', null, 'answered'],
    ]);
    expect(events[3].durationSec).toBeGreaterThanOrEqual(30);
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

describe('CallTracker memory', () => {
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
