import { normaliseLine } from './line-number';
import { checkLineRules, lineBook, ruleOf } from './lines';

describe('lines (docs/API.md "Lines")', () => {
  it('a phone number is normalised to E.164, a name kept as given, anything else refused', () => {
    expect(normaliseLine('+49 30 123456-7')).toBe('+49301234567');
    expect(normaliseLine('030 1234567', 'DE')).toBe('+49301234567');
    expect(normaliseLine('trunk_2.main')).toBe('trunk_2.main');
    expect(normaliseLine('pbx-bridge')).toBe('pbx-bridge');
    expect(normaliseLine('two words')).toBeUndefined();
    expect(normaliseLine('x'.repeat(51))).toBeUndefined();
  });

  it('rules are checked once, each problem naming the line and the field', () => {
    expect(checkLineRules([{ number: '+4930123456', name: 'Berlin', report: false }], 'LINES')).toEqual({
      rules: [{ number: '+4930123456', name: 'Berlin', report: false }],
    });
    const checked = checkLineRules(
      [
        { number: '+4930123456', crmCreate: 'no', colour: 'red' },
        { number: 'bad line' },
        { number: '+49 30 123456', defaultUserId: 0, crmSource: 'a b' },
        'text',
      ],
      'LINES',
    );
    expect(checked).toEqual({
      problems: [
        'LINES[0] (+4930123456): colour is not a line rule field (number, name, crmCreate, crmSource, defaultUserId, report, missedCallTask)',
        'LINES[0] (+4930123456): crmCreate must be true or false',
        'LINES[1] (bad line): number must be a phone number, or 1-50 letters, digits, dots, pluses, dashes or underscores',
        'LINES[2] (+49 30 123456): number is listed twice (also LINES[0])',
        'LINES[2] (+49 30 123456): crmSource must be a lead source id (crm.status.list ENTITY_ID=SOURCE), 1-50 letters, digits, ".", ":", "_", "-"',
        'LINES[2] (+49 30 123456): defaultUserId must be a portal user id (a whole number of at least 1)',
        'LINES[3]: each line must be an object with a number',
      ],
    });
    expect(checkLineRules({}, 'lines')).toEqual({
      problems: ['lines must be a JSON array of line rules: [{"number": "+4930…", …}]'],
    });
  });

  it("a call's normalised line finds its rule; a line not listed has none", () => {
    const book = lineBook([{ number: '030 1234567', crmSource: 'WEB' }], '+49 30 999', 'DE');
    expect(ruleOf(book, '+49301234567')).toEqual({ number: '030 1234567', crmSource: 'WEB' });
    expect(ruleOf(book, '+49301234568')).toBeUndefined();
    expect(book.defaultLine).toBe('+4930999');
  });
});
