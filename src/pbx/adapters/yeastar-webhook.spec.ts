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
