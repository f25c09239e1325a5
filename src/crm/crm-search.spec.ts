import { PortalError } from '../portal/portal-error';
import { resultFor, searchCommands } from './crm-search';

describe('searchCommands', () => {
  it('asks findbycomm for every written form and lists each type by the ids it found, newest first', () => {
    const commands = searchCommands('n0', ['+4915112345678', '015112345678']);
    expect(commands.map((command) => command.label)).toEqual([
      'dup_n0',
      'contact_n0',
      'company_n0',
      'lead_n0',
    ]);
    expect(commands[0]).toEqual({
      label: 'dup_n0',
      method: 'crm.duplicate.findbycomm',
      params: { type: 'PHONE', values: ['+4915112345678', '015112345678'] },
    });
    expect(commands[2]).toEqual({
      label: 'company_n0',
      method: 'crm.company.list',
      params: {
        filter: { ID: '$result[dup_n0][COMPANY]' },
        select: ['ID', 'TITLE', 'ASSIGNED_BY_ID', 'DATE_MODIFY'],
        order: { DATE_MODIFY: 'DESC', ID: 'DESC' },
        start: -1,
      },
    });
  });
});

describe('resultFor', () => {
  const unresolved = new PortalError('invalid', 'INVALID_ARGUMENT', 'Batch reference cannot be resolved');

  it('is null when findbycomm found nothing (the portal answers [])', () => {
    expect(resultFor({ results: { dup_n0: [] }, errors: { contact_n0: unresolved } }, 'n0')).toBeNull();
  });

  it('prefers a contact to a company and a company to a lead, whatever their dates', () => {
    const outcome = {
      results: {
        dup_n0: { LEAD: [7], COMPANY: [3] },
        company_n0: [
          { ID: '3', TITLE: 'Acme GmbH', ASSIGNED_BY_ID: '4', DATE_MODIFY: '2025-01-01T00:00:00+01:00' },
        ],
        lead_n0: [{ ID: '7', TITLE: 'Call', ASSIGNED_BY_ID: '2', DATE_MODIFY: '2026-06-01T00:00:00+02:00' }],
      },
      errors: { contact_n0: unresolved },
    };
    expect(resultFor(outcome, 'n0')).toEqual({
      entityType: 'COMPANY',
      entityId: 3,
      name: 'Acme GmbH',
      responsibleUserId: 4,
    });
  });

  it('takes the most recently changed record of a type, whatever order the portal listed them in', () => {
    const outcome = {
      results: {
        dup_n0: { CONTACT: [1, 2, 3] },
        contact_n0: [
          {
            ID: '1',
            NAME: 'Old',
            LAST_NAME: '',
            ASSIGNED_BY_ID: '2',
            DATE_MODIFY: '2026-01-01T10:00:00+01:00',
          },
          {
            ID: '2',
            NAME: 'Newest',
            LAST_NAME: 'One',
            ASSIGNED_BY_ID: '3',
            DATE_MODIFY: '2026-01-01T10:00:00-05:00',
          },
          { ID: '3', NAME: 'Middle', ASSIGNED_BY_ID: '2', DATE_MODIFY: '2026-01-01T12:00:00+01:00' },
        ],
      },
      errors: {},
    };
    expect(resultFor(outcome, 'n0')).toMatchObject({ entityId: 2, name: 'Newest One', responsibleUserId: 3 });
  });

  it("names a lead by the person's name when it has one, else by its title", () => {
    const lead = (fields: Record<string, string>) =>
      resultFor(
        {
          results: { dup_n0: { LEAD: [5] }, lead_n0: [{ ID: '5', ASSIGNED_BY_ID: '0', ...fields }] },
          errors: {},
        },
        'n0',
      );
    expect(lead({ NAME: 'Tom', LAST_NAME: 'Weber', TITLE: 'Website enquiry' })).toMatchObject({
      name: 'Tom Weber',
      responsibleUserId: null,
    });
    expect(lead({ NAME: '', LAST_NAME: '  ', TITLE: 'Website enquiry' })).toMatchObject({
      name: 'Website enquiry',
    });
  });

  it('ignores rows findbycomm did not name, as a portal that ignored an empty filter would list them', () => {
    const outcome = {
      results: {
        dup_n0: { CONTACT: [9], LEAD: [4] },
        contact_n0: [
          { ID: '1', NAME: 'Someone', LAST_NAME: 'Else', DATE_MODIFY: '2026-01-01T00:00:00+00:00' },
        ],
        lead_n0: [{ ID: '4', TITLE: 'The caller', ASSIGNED_BY_ID: '2' }],
      },
      errors: {},
    };
    expect(resultFor(outcome, 'n0')).toMatchObject({ entityType: 'LEAD', entityId: 4 });
  });

  it('is the error of findbycomm, or of a list findbycomm named ids for', () => {
    const denied = new PortalError('rights', 'ACCESS_DENIED', 'Access denied!');
    expect(resultFor({ results: {}, errors: { dup_n0: denied } }, 'n0')).toBe(denied);
    expect(resultFor({ results: { dup_n0: { CONTACT: [1] } }, errors: { contact_n0: denied } }, 'n0')).toBe(
      denied,
    );
  });

  it('keeps the numbers of one batch apart by their key', () => {
    const outcome = {
      results: {
        dup_n0: [],
        dup_n1: { CONTACT: ['8'] },
        contact_n1: [{ ID: '8', NAME: 'Second', LAST_NAME: 'Number', ASSIGNED_BY_ID: '3' }],
      },
      errors: {},
    };
    expect(resultFor(outcome, 'n0')).toBeNull();
    expect(resultFor(outcome, 'n1')).toMatchObject({ entityType: 'CONTACT', entityId: 8 });
  });
});
