import { asteriskCdrToEvents, statusOf } from './asterisk-cdr';

const form = (fields: Record<string, string> = {}) => ({
  uniqueid: '1795338000.101',
  linkedid: '1795338000.100',
  direction: 'inbound',
  src: '030555060606',
  dst: '4930123456',
  disposition: 'ANSWERED',
  duration: '130',
  billsec: '121',
  start: '2026-11-22 10:00:00',
  ...fields,
});

describe('Asterisk CDR mapping', () => {
  it.each([
    ['ANSWERED', 'inbound', 'answered'],
    ['ANSWER', 'outbound', 'answered'],
    ['NO ANSWER', 'inbound', 'missed'],
    ['NOANSWER', 'outbound', 'missed'],
    ['BUSY', 'inbound', 'busy'],
    ['CANCEL', 'inbound', 'missed'],
    ['CANCEL', 'outbound', 'cancelled'],
    ['FAILED', 'outbound', 'failed'],
    ['CONGESTION', 'outbound', 'failed'],
    ['CHANUNAVAIL', 'inbound', 'failed'],
  ] as const)('%s on an %s call is %s', (disposition, direction, status) => {
    expect(statusOf(disposition, direction).status).toBe(status);
  });

  it('keys the call on linkedid, reads the local start in the zone, ends it duration seconds later', () => {
    expect(asteriskCdrToEvents(form(), 'Europe/Berlin').events).toEqual([
      {
        event: 'call.ended',
        callId: '1795338000.100',
        direction: 'inbound',
        phoneNumber: '030555060606',
        extension: '4930123456',
        startedAt: '2026-11-22T10:00:00+01:00',
        at: '2026-11-22T10:02:10+01:00',
        durationSec: 121,
        status: 'answered',
        failedReason: undefined,
        recordingUrl: undefined,
      },
    ]);
  });

  it('takes the extension the dialplan names over src/dst; an empty recording is no recording', () => {
    const [inbound] = asteriskCdrToEvents(form({ extension: '101', recording: '' }), 'UTC').events;
    expect(inbound).toMatchObject({ extension: '101', recordingUrl: undefined });
    const [outbound] = asteriskCdrToEvents(
      form({ direction: 'OUTBOUND', src: '102', dst: '0301234567' }),
      'UTC',
    ).events;
    expect(outbound).toMatchObject({ direction: 'outbound', phoneNumber: '0301234567', extension: '102' });
  });

  it('reads a summer start with the summer offset', () => {
    const [event] = asteriskCdrToEvents(form({ start: '2026-07-01 10:00:00' }), 'Europe/Berlin').events;
    expect(event.startedAt).toBe('2026-07-01T10:00:00+02:00');
  });
});
