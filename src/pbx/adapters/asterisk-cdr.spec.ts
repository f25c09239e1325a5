import { BadRequestException } from '@nestjs/common';
import { asteriskCdrToEvents, extensionOfChannel, InternalNumbers, statusOf } from './asterisk-cdr';
import { AdapterOutcome } from './native-record';

/** A directory that knows the employees with internal numbers 101 and 7001234, and the default 6 digits. */
const numbers: InternalNumbers = {
  isEmployee: (number) => ['101', '7001234'].includes(number),
  maxDigits: 6,
};

/** The call's end among the events an outcome carries (an answered call has its answer first). */
const endOf = (outcome: AdapterOutcome) => outcome.events.find((event) => event.event === 'call.ended')!;

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

  it("takes FreePBX's did (inbound) and outbound_cnum (outbound) as the call's line", () => {
    const inbound = asteriskCdrToEvents(form({ did: '4930123456', outbound_cnum: 'x' }), 'UTC', numbers);
    expect(endOf(inbound).line).toBe('4930123456');
    expect(inbound.sources.line).toBe('did');
    const outbound = asteriskCdrToEvents(
      form({
        direction: 'outbound',
        src: '101',
        dst: '030555060606',
        did: 'y',
        outbound_cnum: '+4930123456',
      }),
      'UTC',
      numbers,
    );
    expect(endOf(outbound).line).toBe('+4930123456');
    expect(endOf(asteriskCdrToEvents(form(), 'UTC', numbers)).line).toBeUndefined();
  });

  it('keys the call on linkedid, reads the local start in the zone, ends it duration seconds later', () => {
    expect(asteriskCdrToEvents(form(), 'Europe/Berlin', numbers).events).toEqual([
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
    const inbound = endOf(asteriskCdrToEvents(form({ extension: '101', recording: '' }), 'UTC', numbers));
    expect(inbound).toMatchObject({ extension: '101', recordingUrl: undefined });
    const outbound = endOf(
      asteriskCdrToEvents(form({ direction: 'OUTBOUND', src: '102', dst: '0301234567' }), 'UTC', numbers),
    );
    expect(outbound).toMatchObject({ direction: 'outbound', phoneNumber: '0301234567', extension: '102' });
  });

  it('reads a summer start with the summer offset', () => {
    const [event] = asteriskCdrToEvents(
      form({ start: '2026-07-01 10:00:00' }),
      'Europe/Berlin',
      numbers,
    ).events;
    expect(event.startedAt).toBe('2026-07-01T10:00:00+02:00');
  });

  describe('without direction', () => {
    const infer = (src: string | undefined, dst: string, internal: InternalNumbers = numbers) => {
      const fields = form({ dst });
      delete (fields as Partial<typeof fields>).direction;
      if (src === undefined) delete (fields as Partial<typeof fields>).src;
      else fields.src = src;
      const outcome = asteriskCdrToEvents(fields, 'UTC', internal);
      const event: Record<string, unknown> = { ...endOf(outcome) };
      event.directionInferred = outcome.directionInferred;
      return event;
    };
    const refusal = (src: string, dst: string, internal: InternalNumbers = numbers) => {
      try {
        infer(src, dst, internal);
      } catch (error) {
        return (error as BadRequestException).getResponse() as {
          errors: { field: string; problems: string[] }[];
        };
      }
      throw new Error('expected a 400');
    };

    it.each([
      [
        '101',
        '030555060606',
        'outbound',
        "src 101 is an employee's internal number, dst is outside: outbound",
      ],
      [
        '7001234',
        '+4930555060606',
        'outbound',
        "src 7001234 is an employee's internal number, dst is outside: outbound",
      ],
      [
        '104',
        '030555060606',
        'outbound',
        'src 104 is a short number (at most 6 digits), dst is outside: outbound',
      ],
      ['015112345678', '101', 'inbound', "dst 101 is an employee's internal number, src is outside: inbound"],
      [
        '+4915112345678',
        '2000',
        'inbound',
        'dst 2000 is a short number (at most 6 digits), src is outside: inbound',
      ],
      [undefined, '101', 'inbound', "dst 101 is an employee's internal number, src is outside: inbound"],
    ] as const)('src %s, dst %s: %s', (src, dst, direction, because) => {
      const event = infer(src, dst);
      expect(event).toMatchObject({ direction, directionInferred: because });
      expect(event.phoneNumber).toBe(direction === 'outbound' ? dst : src);
      expect(event.extension).toBe(direction === 'outbound' ? src : dst);
    });

    it('an E.164 number written without + or with 00 is outside, however many digits are internal', () => {
      const wide = { ...numbers, maxDigits: 15 };
      expect(infer('102', '4930555060606', wide)).toMatchObject({ direction: 'outbound' });
      expect(infer('102', '004930555060606', wide)).toMatchObject({ direction: 'outbound' });
      expect(infer('4915112345678', '102', wide)).toMatchObject({ direction: 'inbound' });
    });

    it('both sides internal, or neither: a 400 naming src and dst', () => {
      const both = refusal('101', '102');
      expect(both.errors.map((error) => error.field)).toEqual(['src', 'dst']);
      expect(both.errors[0].problems[0]).toContain(
        'both src and dst are internal numbers (src 101, dst 102)',
      );
      const neither = refusal('030555060606', '4930123456');
      expect(neither.errors.map((error) => error.field)).toEqual(['src', 'dst']);
      expect(neither.errors[0].problems[0]).toContain("neither src nor dst is an employee's internal number");
    });

    it('a direction the dialplan sets is used as it is, with nothing inferred', () => {
      const outcome = asteriskCdrToEvents(
        form({ direction: 'outbound', src: '101', dst: '102' }),
        'UTC',
        numbers,
      );
      expect(endOf(outcome).direction).toBe('outbound');
      expect(outcome.directionInferred).toBeUndefined();
    });
  });
});

describe('Asterisk CDR: who answered, and the recording', () => {
  const outcome = (fields: Record<string, string>, template?: string) =>
    asteriskCdrToEvents(form({ extension: '101', ...fields }), 'Europe/Berlin', numbers, template);

  it.each([
    ['PJSIP/201-0000001a', '201'],
    ['SIP/202-00000003', '202'],
    ['IAX2/203-12345', '203'],
    ['Local/204@from-queue-00000012;1', '204'],
    ['PJSIP/carrier-0000001b', undefined],
    ['PJSIP/4930555060606-0000001c', undefined],
    ['', undefined],
  ])('dstchannel %s is answered by %s', (channel, extension) => {
    expect(extensionOfChannel(channel || undefined, numbers)).toBe(extension);
  });

  it('an answered inbound call: call.answered by the dstchannel extension at CDR(answer), before call.ended', () => {
    const { events } = outcome({
      dstchannel: 'PJSIP/201-0000001a',
      lastapp: 'Dial',
      lastdata: 'PJSIP/201&PJSIP/202&PJSIP/203,30',
      answer: '2026-11-22 10:00:09',
    });
    expect(events).toEqual([
      { event: 'call.answered', callId: '1795338000.100', extension: '201', at: '2026-11-22T10:00:09+01:00' },
      expect.objectContaining({ event: 'call.ended', extension: '101', status: 'answered' }),
    ]);
  });

  it('a queue member answering through a Local channel; without CDR(answer), start plus the ringing time', () => {
    const [answered] = outcome({ dstchannel: 'Local/204@from-queue-00000012;1', lastapp: 'Queue' }).events;
    // duration 130, billsec 121: answered 9 s after the start.
    expect(answered).toMatchObject({
      event: 'call.answered',
      extension: '204',
      at: '2026-11-22T10:00:09+01:00',
    });
  });

  it('without a usable dstchannel the call is answered by its own extension; an outbound call by the caller', () => {
    expect(outcome({ dstchannel: 'PJSIP/carrier-0000001b' }).events[0]).toMatchObject({
      event: 'call.answered',
      extension: '101',
    });
    const outbound = outcome({ direction: 'outbound', src: '102', dst: '0301234567', extension: '' });
    expect(outbound.events[0]).toMatchObject({ event: 'call.answered', extension: '102' });
  });

  it('a call nobody answered has no call.answered; neither has one whose employee is no internal number', () => {
    const missed = outcome({ disposition: 'NO ANSWER', billsec: '0', dstchannel: 'PJSIP/201-0000001a' });
    expect(missed.events.map((event) => event.event)).toEqual(['call.ended']);
    const did = asteriskCdrToEvents(form(), 'UTC', numbers);
    expect(did.events.map((event) => event.event)).toEqual(['call.ended']);
  });

  it('a CDR(answer) that is no date is a 400 naming answer', () => {
    expect(() => outcome({ answer: '22.11.2026 10:00' })).toThrow(BadRequestException);
  });

  it('recordingfile / MIXMONITOR_FILENAME become a URL through ASTERISK_RECORDING_URL; a full URL wins', () => {
    const file = 'in-4930123456-030555060606-20261122-100000-1795338000.100.wav';
    expect(endOf(outcome({ recordingfile: file })).recordingUrl).toBeUndefined();
    expect(endOf(outcome({ recordingfile: file }, 'https://pbx.local/monitor/')).recordingUrl).toBe(
      `https://pbx.local/monitor/${file}`,
    );
    const mix = '/var/spool/asterisk/monitor/2026/11/22/1795338000.100.wav';
    expect(endOf(outcome({ MIXMONITOR_FILENAME: mix }, 'https://pbx.local/rec/{path}')).recordingUrl).toBe(
      'https://pbx.local/rec/var/spool/asterisk/monitor/2026/11/22/1795338000.100.wav',
    );
    const both = outcome(
      { recording: 'https://pbx.example.com/r.wav', recordingfile: file },
      'https://x.local/',
    );
    expect(endOf(both).recordingUrl).toBe('https://pbx.example.com/r.wav');
  });
});
