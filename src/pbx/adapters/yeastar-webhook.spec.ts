import { cdrStatusOf, yeastarWebhookToEvents } from './yeastar-webhook';

const state = (members: unknown[]) => ({ type: 30011, sn: '3631A2124XXX', msg: { call_id: '1.1', members } });

describe('Yeastar webhook mapping', () => {
  it.each([
    ['ANSWERED', 'answered'],
    ['ANSWERD', 'answered'],
    ['NO ANSWER', 'missed'],
    ['VOICEMAIL', 'missed'],
    ['ABANDONED', 'missed'],
    ['BUSY', 'busy'],
    ['FAILED', 'failed'],
  ] as const)('CDR status %s is %s', (status, mapped) => {
    expect(cdrStatusOf(status).status).toBe(mapped);
  });

  it('an outbound call: started while it rings, answered when the outside party answers', () => {
    const ringing = yeastarWebhookToEvents(
      state([
        { extension: { number: '102', channel_id: 'PJSIP/102-1', member_status: 'ALERT' } },
        { outbound: { from: '102', to: '004930555', trunk_name: 'sip', member_status: 'RING' } },
      ]),
      'UTC',
    );
    expect(ringing.events).toEqual([
      expect.objectContaining({
        event: 'call.started',
        direction: 'outbound',
        phoneNumber: '004930555',
        extension: '102',
      }),
    ]);
    const talking = yeastarWebhookToEvents(
      state([
        { extension: { number: '102', member_status: 'ANSWERED' } },
        { outbound: { from: '102', to: '004930555', member_status: 'ANSWER' } },
      ]),
      'UTC',
    );
    expect(talking.events.map((event) => event.event)).toEqual(['call.started', 'call.answered']);
  });

  it('an inbound call waiting in an IVR (no phone rings yet) and an internal call store nothing', () => {
    const ivr = yeastarWebhookToEvents(
      state([{ inbound: { from: '0301', to: '6500', member_status: 'ALERT' } }]),
      'UTC',
    );
    expect(ivr.ignored).toContain('no employee');
    const internal = yeastarWebhookToEvents(
      state([
        { extension: { number: '101', member_status: 'ALERT' } },
        { extension: { number: '102', member_status: 'RING' } },
      ]),
      'UTC',
    );
    expect(internal.ignored).toContain('internal call');
  });

  it('accepts msg as an object as well as a JSON string, and the type as a string', () => {
    const cdr = {
      call_id: '2.2',
      time_start: '2026-11-22 10:00:00',
      call_from: '101',
      call_to: '0301234567',
      call_duration: '30',
      talk_duration: '20',
      status: 'answered',
      type: 'Outbound',
      recording: 'https://pbx.example.com/rec/2.2.wav',
    };
    const [event] = yeastarWebhookToEvents({ type: '30012', msg: cdr }, 'Europe/Berlin').events;
    expect(event).toMatchObject({
      callId: '2.2',
      direction: 'outbound',
      startedAt: '2026-11-22T10:00:00+01:00',
      at: '2026-11-22T10:00:30+01:00',
      durationSec: 20,
      recordingUrl: 'https://pbx.example.com/rec/2.2.wav',
    });
  });
});

/** A P-Series Call_Info event (30011/30013/30014) for an inbound call from 015112345679 via DID 4930123456. */
const inboundCall = (type: number, extensions: [string, string][], trunkStatus = 'ALERT') => ({
  type,
  sn: '3631A2124XXX',
  msg: JSON.stringify({
    call_id: '1795338000.700',
    members: [
      {
        inbound: {
          from: '015112345679',
          to: '4930123456',
          trunk_name: 'carrier-sip',
          channel_id: 'PJSIP/trunk-carrier-sip-endpoint-000000c1',
          member_status: trunkStatus,
          call_path: '6300',
        },
      },
      ...extensions.map(([number, status], i) => ({
        extension: {
          number,
          channel_id: `PJSIP/${number}-000000c${i + 2}`,
          member_status: status,
          call_path: '6300',
        },
      })),
    ],
  }),
});

describe('Yeastar: ring groups, answers, transfers, recordings', () => {
  it('a ring group ringing: call.started with every member ringing as extensions', () => {
    const { events } = yeastarWebhookToEvents(
      inboundCall(30011, [
        ['101', 'RING'],
        ['102', 'RING'],
        ['103', 'RING'],
      ]),
      'UTC',
    );
    expect(events).toEqual([
      expect.objectContaining({
        event: 'call.started',
        callId: '1795338000.700',
        direction: 'inbound',
        phoneNumber: '015112345679',
        extension: '101',
        extensions: ['101', '102', '103'],
      }),
    ]);
  });

  it('one member answers: call.answered names them, whatever their place in the list', () => {
    const { events } = yeastarWebhookToEvents(
      inboundCall(
        30011,
        [
          ['101', 'BYE'],
          ['102', 'ANSWER'],
          ['103', 'BYE'],
        ],
        'ANSWERED',
      ),
      'UTC',
    );
    expect(events.map((event) => [event.event, event.extension])).toEqual([
      ['call.started', '102'],
      ['call.answered', '102'],
    ]);
    // Only one phone is left in the call: the start names no group.
    expect(events[0]).not.toHaveProperty('extensions');
  });

  it('a transfer (30013) and a forward (30014) answer the call again for whoever talks now', () => {
    const transfer = yeastarWebhookToEvents(
      inboundCall(
        30013,
        [
          ['102', 'BYE'],
          ['104', 'ANSWER'],
        ],
        'ANSWERED',
      ),
      'UTC',
    );
    expect(transfer.events.find((event) => event.event === 'call.answered')).toMatchObject({
      callId: '1795338000.700',
      extension: '104',
    });
    const forward = yeastarWebhookToEvents(inboundCall(30014, [['105', 'RING']]), 'UTC');
    expect(forward.events.map((event) => event.event)).toEqual(['call.started']);
    // A blind transfer still ringing names nobody yet: the 30011 that follows does.
    const blind = yeastarWebhookToEvents(
      inboundCall(
        30013,
        [
          ['102', 'BYE'],
          ['104', 'RING'],
        ],
        'ANSWERED',
      ),
      'UTC',
    );
    expect(blind.events.map((event) => event.event)).toEqual(['call.started']);
  });

  it('an attended transfer being completed: the talking member listed last wins over one holding', () => {
    const { events } = yeastarWebhookToEvents(
      inboundCall(
        30013,
        [
          ['102', 'HOLD'],
          ['104', 'ANSWER'],
        ],
        'ANSWERED',
      ),
      'UTC',
    );
    expect(events[1]).toMatchObject({ event: 'call.answered', extension: '104' });
    const held = yeastarWebhookToEvents(inboundCall(30011, [['102', 'HOLD']], 'ANSWERED'), 'UTC');
    expect(held.events[1]).toMatchObject({ event: 'call.answered', extension: '102' });
  });

  it("the CDR's recording file name becomes a URL through YEASTAR_RECORDING_URL", () => {
    const cdr = (recording: string, template?: string) =>
      yeastarWebhookToEvents(
        {
          type: 30012,
          msg: {
            call_id: '1795338000.700',
            time_start: '2026-11-22 10:00:00',
            call_from: '015112345679',
            call_to: '102',
            call_duration: 40,
            talk_duration: 28,
            status: 'ANSWERED',
            type: 'Inbound',
            recording,
          },
        },
        'UTC',
        template,
      ).events[0].recordingUrl;
    const file = '20261122100012-1795338000.700-015112345679-102-Inbound.wav';
    expect(cdr(file)).toBeUndefined();
    expect(cdr(file, 'https://recordings.pbx.local/yeastar')).toBe(
      `https://recordings.pbx.local/yeastar/${file}`,
    );
    expect(cdr(file, 'https://recordings.pbx.local/get?name={file}')).toBe(
      `https://recordings.pbx.local/get?name=${file}`,
    );
    expect(cdr('', 'https://recordings.pbx.local/')).toBeUndefined();
  });
});
