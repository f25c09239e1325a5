import { CrmMatch } from '../../crm/crm-match';
import { toThreeCxContact } from './threecx-contact';
import { threeCxCallId, threeCxJournalToEvents } from './threecx-journal';

const call = {
  direction: 'inbound' as const,
  number: '+4930555121212',
  agent: '101',
  startedAt: '2026-11-22T09:00:00Z',
};

describe('3CX journal mapping', () => {
  it('derives one call id for one call, whatever form its number and start are written in', () => {
    const id = threeCxCallId(call, 'DE');
    expect(id).toMatch(/^3cx-[0-9a-f]{32}$/);
    expect(
      threeCxCallId({ ...call, number: '030 555121212', startedAt: '2026-11-22T10:00:00+01:00' }, 'DE'),
    ).toBe(id);
  });

  it.each([
    ['direction', { direction: 'outbound' as const }],
    ['number', { number: '+4930555121213' }],
    ['agent', { agent: '102' }],
    ['start', { startedAt: '2026-11-22T09:00:01Z' }],
  ])('derives another id when the %s differs', (_part, change) => {
    expect(threeCxCallId({ ...call, ...change }, 'DE')).not.toBe(threeCxCallId(call, 'DE'));
  });

  it.each([
    ['2026-11-22T09:00:00Z', '2026-11-22T09:00:00Z'],
    ['2026-11-22T09:00:00', '2026-11-22T09:00:00Z'],
    ['2026-11-22 09:00:00', '2026-11-22T09:00:00Z'],
    ['11/22/2026 9:00:00 AM', '2026-11-22T09:00:00Z'],
    ['22.11.2026 09:00:00', '2026-11-22T09:00:00Z'],
    ['1795338000000', '2026-11-22T09:00:00Z'],
  ])('reads CallStartTimeUTC %s as %s', (written, startedAt) => {
    const body = {
      CallType: 'Inbound',
      Number: '+4930555121212',
      Agent: '101',
      Duration: '0:02:01',
      CallStartTimeUTC: written,
    };
    const [event] = threeCxJournalToEvents(body, 'Europe/Berlin', 'DE').events;
    expect(event).toMatchObject({
      startedAt,
      at: '2026-11-22T09:02:01Z',
      durationSec: 121,
      status: 'answered',
    });
  });

  it('takes the direction from CallType unless CallDirection says it', () => {
    const base = { Number: '+4930555121212', Duration: '15', CallStartTimeUTC: '2026-11-22T09:00:00Z' };
    const direction = (body: object) =>
      threeCxJournalToEvents({ ...base, ...body }, 'UTC').events[0].direction;
    expect(direction({ CallType: 'Missed' })).toBe('inbound');
    expect(direction({ CallType: 'Notanswered' })).toBe('outbound');
    expect(direction({ CallType: 'Inbound', CallDirection: 'Outbound' })).toBe('outbound');
  });
});

describe('3CX contact answer', () => {
  const match = (entityType: CrmMatch['entityType'], name: string) => ({
    phone: '+4930555121212',
    match: { entityType, entityId: 7, name, responsibleUserId: 2, responsibleExtension: '101' },
  });

  it('splits a contact name, keeps a lead name whole, files a company under companyName', () => {
    expect(
      toThreeCxContact(match('CONTACT', 'Anna Maria Berger'), 'https://portal.example.com'),
    ).toMatchObject({
      firstName: 'Anna Maria',
      lastName: 'Berger',
      companyName: '',
      contactUrl: 'https://portal.example.com/crm/contact/details/7/',
    });
    expect(toThreeCxContact(match('LEAD', 'Website enquiry'), undefined)).toMatchObject({
      firstName: '',
      lastName: 'Website enquiry',
      contactUrl: '',
    });
    expect(toThreeCxContact(match('COMPANY', 'Acme GmbH'), 'https://p.example')).toMatchObject({
      companyName: 'Acme GmbH',
      contactUrl: 'https://p.example/crm/company/details/7/',
    });
  });

  it('answers no id without a match, and the reason when the portal could not say', () => {
    expect(toThreeCxContact({ phone: '+49301', match: null }, undefined)).toEqual({ phone: '+49301' });
    expect(toThreeCxContact({ phone: '+49301', match: null, reason: 'timeout' }, undefined)).toEqual({
      phone: '+49301',
      reason: 'timeout',
    });
  });
});
