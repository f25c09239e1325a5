import { freeSwitchCdrToEvents, statusOf } from './freeswitch-cdr';

/** A minimal a-leg record: what FreeSWITCH always writes, plus `vars` and the first caller profile. */
function cdr(vars: Record<string, string> = {}, profile: Record<string, unknown> = {}) {
  return {
    variables: {
      uuid: 'a-leg-1',
      start_epoch: '1795338000',
      answer_epoch: '1795338009',
      bridge_epoch: '1795338009',
      end_epoch: '1795338130',
      billsec: '121',
      hangup_cause: 'NORMAL_CLEARING',
      ...vars,
    },
    callflow: [
      {
        profile_index: '1',
        caller_profile: {
          caller_id_number: '+4930555010101',
          destination_number: '4930123456',
          context: 'public',
          originatee: { originatee_caller_profiles: [{ destination_number: '101' }] },
          ...profile,
        },
      },
    ],
  };
}

/** The call's end (an answered call has its `call.answered` first). */
const only = (body: unknown) =>
  freeSwitchCdrToEvents(body, 'Europe/Berlin').events.find((event) => event.event === 'call.ended')!;

describe('FreeSWITCH CDR mapping', () => {
  it.each([
    ['NORMAL_CLEARING', true, 'inbound', 'answered'],
    ['NORMAL_CLEARING', false, 'inbound', 'missed'],
    ['USER_BUSY', false, 'inbound', 'busy'],
    ['NO_ANSWER', false, 'outbound', 'missed'],
    ['NO_USER_RESPONSE', false, 'inbound', 'missed'],
    ['ORIGINATOR_CANCEL', false, 'inbound', 'missed'],
    ['ORIGINATOR_CANCEL', false, 'outbound', 'cancelled'],
    ['CALL_REJECTED', false, 'inbound', 'declined'],
    ['NORMAL_TEMPORARY_FAILURE', false, 'outbound', 'failed'],
    ['SYSTEM_SHUTDOWN', true, 'inbound', 'answered'],
    ['MEDIA_TIMEOUT', true, 'outbound', 'answered'],
    ['SYSTEM_SHUTDOWN', false, 'inbound', 'failed'],
  ] as const)('%s (answered: %s) on an %s call is %s', (cause, answered, direction, status) => {
    expect(statusOf(cause, answered, direction).status).toBe(status);
  });

  it('gives a failed call its hang-up cause as the reason', () => {
    expect(statusOf('UNALLOCATED_NUMBER', false, 'outbound')).toEqual({
      status: 'failed',
      failedReason: 'UNALLOCATED_NUMBER',
    });
  });

  it('an inbound call: caller from the caller profile, extension from the dialled leg, times in the zone', () => {
    expect(only(cdr())).toEqual({
      event: 'call.ended',
      callId: 'a-leg-1',
      direction: 'inbound',
      phoneNumber: '+4930555010101',
      extension: '101',
      startedAt: '2026-11-22T10:00:00+01:00',
      at: '2026-11-22T10:02:10+01:00',
      durationSec: 121,
      status: 'answered',
      failedReason: undefined,
      recordingUrl: undefined,
      // Its line (docs/API.md "Lines"): the number the inbound leg dialled.
      line: '4930123456',
    });
  });

  it("an outbound call's line is the caller ID it presented (effective_caller_id_number)", () => {
    const outboundProfile = { context: 'default', caller_id_number: '102' };
    const call = only(
      cdr({ call_direction: 'outbound', effective_caller_id_number: '+4930123456' }, outboundProfile),
    );
    expect(call).toMatchObject({ direction: 'outbound', line: '+4930123456' });
    expect(only(cdr({ call_direction: 'outbound' }, outboundProfile)).line).toBeUndefined();
  });

  it('reads the direction from call_direction, then the context, then a bridge to a directory user', () => {
    const outboundProfile = { context: 'default', caller_id_number: '102' };
    expect(only(cdr({ call_direction: 'Outbound' }, outboundProfile))).toMatchObject({
      direction: 'outbound',
      extension: '102',
      phoneNumber: '101',
    });
    expect(only(cdr({}, { ...outboundProfile, originatee: undefined }))).toMatchObject({
      direction: 'outbound',
      phoneNumber: '4930123456',
    });
    const local = freeSwitchCdrToEvents(cdr({ dialed_user: '103' }, outboundProfile), 'UTC');
    expect(local.events).toEqual([]);
    expect(local.ignored).toContain('internal call a-leg-1');
  });

  it('takes the call from the oldest caller profile even when FreeSWITCH lists the newest first', () => {
    const record = cdr();
    record.callflow.unshift({
      profile_index: '2',
      caller_profile: {
        caller_id_number: '+4930555010101',
        destination_number: '101',
        context: 'default',
        originatee: { originatee_caller_profiles: [{ destination_number: '103' }] },
      },
    });
    expect(only(record)).toMatchObject({ direction: 'inbound', extension: '103' });
  });

  it('accepts the single callflow object of FreeSWITCH before 1.6', () => {
    const record = { ...cdr(), callflow: cdr().callflow[0] };
    expect(only(record)).toMatchObject({ callId: 'a-leg-1', extension: '101' });
  });

  it('decodes variables URL-encoded by encode-values, recognised by start_stamp', () => {
    const record = cdr({
      start_stamp: '2026-11-22%2010%3A00%3A00',
      record_url: 'https%3A//pbx.example.com/rec/a%20b.wav',
    });
    expect(only(record).recordingUrl).toBe('https://pbx.example.com/rec/a b.wav');
    const plain = cdr({
      start_stamp: '2026-11-22 10:00:00',
      record_url: 'https://pbx.example.com/rec/a%20b.wav',
    });
    expect(only(plain).recordingUrl).toBe('https://pbx.example.com/rec/a%20b.wav');
  });

  it('counts talk time from answer_epoch when billsec is missing', () => {
    const record = cdr();
    delete (record.variables as Record<string, string | undefined>).billsec;
    expect(only(record).durationSec).toBe(121);
  });

  it('recognises a b-leg by its originator profile or by originating_leg_uuid', () => {
    const byProfile = cdr({}, { originator: { originator_caller_profiles: [{}] } });
    expect(freeSwitchCdrToEvents(byProfile, 'UTC').ignored).toContain('b-leg a-leg-1');
    const byVariable = freeSwitchCdrToEvents(cdr({ originating_leg_uuid: 'the-a-leg' }), 'UTC');
    expect(byVariable.ignored).toBe("b-leg a-leg-1 of call the-a-leg: the a-leg's record reports the call");
  });

  it('reads {cdr: "<JSON>"} from an encode=true form and names cdr when it is not JSON', () => {
    expect(only({ cdr: JSON.stringify(cdr()) })).toMatchObject({ callId: 'a-leg-1' });
    expect(() => freeSwitchCdrToEvents({ cdr: '{' }, 'UTC')).toThrow('invalid FreeSWITCH CDR');
  });
});

describe('FreeSWITCH CDR: who answered, and the recording', () => {
  /** A ring group's a-leg: it dialled 101, 102 and 103 at once; `last_bridge_to` is the leg that answered. */
  const ringGroup = (vars: Record<string, string> = {}) =>
    cdr(
      { bridge_epoch: '1795338012', ...vars },
      {
        destination_number: '6300',
        originatee: {
          originatee_caller_profiles: [
            { destination_number: '101', uuid: 'b-101', chan_name: 'sofia/internal/101@192.0.2.21:5060' },
            { destination_number: '102', uuid: 'b-102', chan_name: 'sofia/internal/102@192.0.2.22:5060' },
            { destination_number: '103', uuid: 'b-103', chan_name: 'sofia/internal/103@192.0.2.23:5060' },
          ],
        },
      },
    );
  const events = (body: unknown, template?: string) =>
    freeSwitchCdrToEvents(body, 'Europe/Berlin', { recordingTemplate: template }).events;

  it('a ring group member answered: call.answered names the leg last bridged to, at bridge_epoch', () => {
    const [answered, ended] = events(ringGroup({ last_bridge_to: 'b-102' }));
    expect(answered).toEqual({
      event: 'call.answered',
      callId: 'a-leg-1',
      extension: '102',
      at: '2026-11-22T10:00:12+01:00',
    });
    expect(ended).toMatchObject({ event: 'call.ended', extension: '101', status: 'answered' });
  });

  it('else bridge_channel (sip: or not), else dialed_user; answer_epoch when there is no bridge_epoch', () => {
    expect(events(ringGroup({ bridge_channel: 'sofia/internal/sip:103@192.0.2.23:5060' }))[0]).toMatchObject({
      extension: '103',
    });
    expect(events(cdr({ dialed_user: '104', bridge_epoch: '0', last_bridge_to: 'b-104' }))[0]).toMatchObject({
      event: 'call.answered',
      extension: '104',
      at: '2026-11-22T10:00:09+01:00',
    });
    // A bridge to an outside number (a forward to a mobile) is no employee: the call's own extension.
    expect(
      events(cdr({ bridge_channel: 'sofia/external/+4915112345678@sip.carrier.example' }))[0],
    ).toMatchObject({ extension: '101' });
  });

  it('an outbound call is answered by its caller; a missed call has no call.answered', () => {
    const outbound = cdr({ call_direction: 'outbound' }, { context: 'default', caller_id_number: '102' });
    expect(events(outbound)[0]).toMatchObject({ event: 'call.answered', extension: '102' });
    const missed = events(cdr({ billsec: '0', answer_epoch: '0', hangup_cause: 'NO_ANSWER' }));
    expect(missed.map((event) => event.event)).toEqual(['call.ended']);
  });

  it('an inbound a-leg answered but never bridged (voicemail, an IVR) is missed, without talk time or answerer', () => {
    const voicemail = cdr({
      bridge_epoch: '0',
      last_app: 'voicemail',
      record_url: 'https://pbx.example.com/vm.wav',
    });
    expect(events(voicemail).map((event) => event.event)).toEqual(['call.ended']);
    expect(only(voicemail)).toMatchObject({ status: 'missed', durationSec: 0, recordingUrl: undefined });
  });

  it('record_path (+ record_name) becomes a URL through FREESWITCH_RECORDING_URL; record_url wins', () => {
    const fusion = cdr({
      record_path: '/var/lib/freeswitch/recordings/pbx.example.com/archive/2026/Nov/22',
      record_name: 'a-leg-1.wav',
    });
    expect(only(fusion).recordingUrl).toBeUndefined();
    expect(events(fusion, 'https://pbx.local/recordings/{file}')[1].recordingUrl).toBe(
      'https://pbx.local/recordings/a-leg-1.wav',
    );
    expect(events(fusion, 'https://pbx.local/{path}')[1].recordingUrl).toBe(
      'https://pbx.local/var/lib/freeswitch/recordings/pbx.example.com/archive/2026/Nov/22/a-leg-1.wav',
    );
    const withUrl = cdr({ record_path: '/rec/x.wav', record_url: 'https://pbx.example.com/x.wav' });
    expect(events(withUrl, 'https://pbx.local/')[1].recordingUrl).toBe('https://pbx.example.com/x.wav');
  });
});

describe('FreeSWITCH CDR: what FreeSWITCH really writes', () => {
  it('answered and hung up within the first second: billsec 0, answered by what answer/bridge epochs and billmsec say', () => {
    const quick = cdr({
      answer_epoch: '1795338009',
      bridge_epoch: '1795338009',
      end_epoch: '1795338009',
      billsec: '0',
      billmsec: '640',
      last_bridge_to: 'b-101',
    });
    const [answered, ended] = freeSwitchCdrToEvents(quick, 'Europe/Berlin').events;
    expect(answered).toMatchObject({ event: 'call.answered', extension: '101' });
    expect(ended).toMatchObject({ status: 'answered', durationSec: 0 });
    const outbound = cdr(
      { call_direction: 'outbound', billsec: '0', billmsec: '300', end_epoch: '1795338009' },
      { context: 'default', caller_id_number: '102' },
    );
    expect(only(outbound)).toMatchObject({ status: 'answered' });
  });

  it("a plain record_session (no record_path/record_name): the file from app_log's record_session", () => {
    const recorded = {
      ...cdr(),
      app_log: {
        applications: [
          { app_name: 'set', app_data: 'call_timeout=30', app_stamp: '1795338001000000' },
          { app_name: 'record_session', app_data: '/var/lib/freeswitch/recordings/a-leg-1.wav' },
          { app_name: 'bridge', app_data: 'user/101@pbx.example.com' },
        ],
      },
    };
    const events = freeSwitchCdrToEvents(recorded, 'Europe/Berlin', {
      recordingTemplate: 'https://pbx.local/rec/{file}',
    }).events;
    expect(events.at(-1)?.recordingUrl).toBe('https://pbx.local/rec/a-leg-1.wav');
  });

  it.each([
    'anonymous',
    'Anonymous',
    '<unknown>',
    'unknown',
    'restricted',
    'unavailable',
    '+31260xxxxxx',
    '',
  ])('a withheld caller %j is reported as anonymous', (caller) => {
    expect(only(cdr({}, { caller_id_number: caller })).phoneNumber).toBe('anonymous');
  });

  it('a caller whose presentation is prohibited (SIP Privacy: id) is anonymous, whatever number it sent', () => {
    expect(only(cdr({ sip_Privacy: 'id' })).phoneNumber).toBe('anonymous');
    expect(only(cdr()).phoneNumber).toBe('+4930555010101');
  });
});
