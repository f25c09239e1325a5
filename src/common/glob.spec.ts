import { Glob, GlobSet } from './glob';

/** The regular expression the bridge built from a pattern before (issue 36): the semantics to keep. */
function oldRegExp(pattern: string): RegExp {
  return new RegExp(
    `^${pattern
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}`,
    'i',
  );
}

/** The hostile pattern of issue 36: backtracking regular expressions take seconds at 35–45 characters. */
const HOSTILE = `PJSIP/${'*0'.repeat(12)}*X`;
const hostileName = (length: number) => `PJSIP/${'0'.repeat(length - 'PJSIP/'.length)}`;

describe('Glob (PBX_TRUNKS patterns)', () => {
  const cases: [string, string][] = [
    ['PJSIP/trunk*', 'PJSIP/trunk-0000001a'],
    ['PJSIP/trunk*', 'pjsip/TRUNK-0000001a'],
    ['PJSIP/trunk*', 'PJSIP/101-0000001a'],
    ['PJSIP/trunk', 'PJSIP/trunk-0000001a'],
    ['PJSIP/trunk', 'PJSIP/trun'],
    ['*carrier*', 'SIP/my-carrier-01'],
    ['*carrier*', 'SIP/my-carier-01'],
    ['sofia/external/*', 'sofia/external/+4930123456@gw.example.com'],
    ['sofia/external/*', 'sofia/internal/101@pbx'],
    ['PJSIP/a?b.c', 'PJSIP/a?b.c-01'],
    ['PJSIP/a?b.c', 'PJSIP/axb.c-01'],
    ['PJSIP/a?b.c', 'PJSIP/a?bxc-01'],
    ['PJSIP/(x)+[y]{2}$^|\\', 'PJSIP/(x)+[y]{2}$^|\\-01'],
    ['a*b*c', 'aXXbYYc'],
    ['a*b*c', 'aXXcYYb'],
    ['a*aa*a', 'aaa'],
    ['a*aa*a', 'aaaa'],
    ['ab*abab*b', 'abababab'],
    ['ab*abab*b', 'ababab'],
    ['*', ''],
    ['', 'anything'],
    ['**x**', 'yyx'],
    ['PJSIP/*-x', 'PJSIP/a\n-x'],
    ['PJSIP/*', 'PJSIP/\u212A'],
    ['PJSIP/k', 'PJSIP/\u212A'],
    ['PJSIP/\u00e9*', 'PJSIP/\u00c9-01'],
    ['PJSIP/\u017f', 'PJSIP/s'],
    [HOSTILE, `${hostileName(20)}X`],
    [HOSTILE, hostileName(20)],
  ];

  it.each(cases)('%j on %j answers as the old regular expression did', (pattern, name) => {
    expect(new Glob(pattern).matches(name)).toBe(oldRegExp(pattern).test(name));
  });

  it('answers as the old regular expression on random short patterns and names', () => {
    let seed = 36;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const pick = (alphabet: string, length: number) =>
      Array.from({ length }, () => alphabet[random(alphabet.length)]).join('');
    for (let i = 0; i < 3000; i++) {
      const pattern = pick('abA*', 1 + random(6));
      const name = pick('abBA', random(9));
      expect({ pattern, name, matches: new Glob(pattern).matches(name) }).toEqual({
        pattern,
        name,
        matches: oldRegExp(pattern).test(name),
      });
    }
  });

  it.each([45, 10_000])(
    'finishes the hostile pattern on a %i-character name within 2·n + m comparisons',
    (length) => {
      const glob = new Glob(HOSTILE);
      for (const name of [hostileName(length), `${hostileName(length - 1)}X`]) {
        const meter = { steps: 0 };
        const matches = glob.matches(name, meter);
        expect(matches).toBe(name.endsWith('X'));
        expect(meter.steps).toBeLessThanOrEqual(2 * name.length + HOSTILE.length);
      }
    },
  );

  it('bounds any pattern: at most 2·n + m comparisons, whatever repeats in the name', () => {
    // (The old regular expressions would not finish most of these: no comparison with them here.)
    const names = ['a'.repeat(5000), 'ab'.repeat(2500), 'abcab'.repeat(1000)];
    const expected: [string, boolean[]][] = [
      ['*aab', [false, false, false]],
      ['*aaaaaaaaab*c', [false, false, false]],
      ['a*a*a*a*a*a*b', [false, true, true]],
      ['*abcabd*abcabd*x', [false, false, false]],
      [`${'*a'.repeat(50)}b`, [false, true, true]],
    ];
    for (const [pattern, answers] of expected) {
      for (const [index, name] of names.entries()) {
        const meter = { steps: 0 };
        expect({ pattern, index, matches: new Glob(pattern).matches(name, meter) }).toEqual({
          pattern,
          index,
          matches: answers[index],
        });
        expect(meter.steps).toBeLessThanOrEqual(2 * name.length + pattern.length);
      }
    }
  });

  it('GlobSet: a name matching any pattern; none when there are no patterns', () => {
    const set = new GlobSet(['PJSIP/trunk*', 'SIP/carrier*']);
    expect(set.size).toBe(2);
    expect(set.matchesAny('sip/CARRIER-01')).toBe(true);
    expect(set.matchesAny('PJSIP/101-01')).toBe(false);
    expect(new GlobSet([]).matchesAny('PJSIP/trunk-01')).toBe(false);
  });
});
