import { BadRequestException } from '@nestjs/common';
import { InternalNumbers } from './asterisk-cdr';
import { asteriskLiveToEvents, asteriskPostToEvents, ringingExtensions } from './asterisk-live';

const numbers: InternalNumbers = { isEmployee: (number) => ['101', '102'].includes(number), maxDigits: 6 };

const ringing = (fields: Record<string, string> = {}) => ({
  event: 'ringing',
  linkedid: '1795356000.600',
  direction: 'inbound',
  src: '030555060612',
  dst: '4930123456',
  at: '2026-11-22 14:00:00',
  ...fields,
});

describe('Asterisk live events', () => {
  it('ringing with a Dial() string of several phones: call.started with them all as extensions', () => {
    const { events } = asteriskLiveToEvents(
      ringing({ dial: 'PJSIP/101&PJSIP/102&Local/103@from-internal&PJSIP/0301234@carrier,30,tT' }),
      'Europe/Berlin',
      numbers,
    );
    expect(events).toEqual([
      {
        event: 'call.started',
        callId: '1795356000.600',
        direction: 'inbound',
        phoneNumber: '030555060612',
        extension: '101',
        extensions: ['101', '102', '103'],
        at: '2026-11-22T14:00:00+01:00',
      },
    ]);
  });

  it("a queue's QUEUE_MEMBER_LIST, and one phone (no group)", () => {
    expect(ringingExtensions({ members: 'PJSIP/101,Local/102@from-queue/n,SIP/103' }, numbers)).toEqual([
      '101',
      '102',
      '103',
    ]);
    const single = asteriskLiveToEvents(ringing({ dial: 'PJSIP/101,30' }), 'UTC', numbers).events[0];
    expect(single).toMatchObject({ extension: '101' });
    expect(single).not.toHaveProperty('extensions');
    const named = asteriskLiveToEvents(ringing({ extension: '102', dial: 'PJSIP/101' }), 'UTC', numbers);
    expect(named.events[0]).toMatchObject({ extension: '102', extensions: ['102', '101'] });
  });

  it('answered: the channel that picked up, else the extension; neither is a 400 naming dstchannel', () => {
    const answered = asteriskLiveToEvents(
      {
        event: 'ANSWERED',
        linkedid: '1795356000.600',
        dstchannel: 'PJSIP/102-0000001b',
        at: '2026-11-22 14:00:07',
      },
      'UTC',
      numbers,
    );
    expect(answered.events).toEqual([
      { event: 'call.answered', callId: '1795356000.600', extension: '102', at: '2026-11-22T14:00:07Z' },
    ]);
    const byNumber = asteriskLiveToEvents(
      { event: 'answered', linkedid: 'x', extension: '101' },
      'UTC',
      numbers,
    );
    expect(byNumber.events[0]).toMatchObject({ extension: '101' });
    expect(() =>
      asteriskLiveToEvents(
        { event: 'answered', linkedid: 'x', dstchannel: 'PJSIP/carrier-00000001' },
        'UTC',
        numbers,
      ),
    ).toThrow(BadRequestException);
  });

  it('an unknown event is a 400; a post without event is the CDR', () => {
    expect(() => asteriskPostToEvents(ringing({ event: 'hangup' }), 'UTC', numbers)).toThrow(
      BadRequestException,
    );
    expect(() => asteriskPostToEvents(ringing({ dst: '' }), 'UTC', numbers)).toThrow(BadRequestException);
    const cdr = asteriskPostToEvents(
      {
        linkedid: '1.1',
        direction: 'inbound',
        src: '030555060612',
        dst: '101',
        disposition: 'NO ANSWER',
        duration: '20',
        billsec: '0',
        start: '2026-11-22 14:00:00',
      },
      'UTC',
      numbers,
    );
    expect(cdr.events.map((event) => event.event)).toEqual(['call.ended']);
  });
});
