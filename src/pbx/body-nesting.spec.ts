import { nestsDeeperThan, verifyNesting } from './body-nesting';

describe('nestsDeeperThan', () => {
  it('counts arrays and objects, not brackets inside strings', () => {
    expect(nestsDeeperThan('[{"callId":"a"}]', 2)).toBe(false);
    expect(nestsDeeperThan('[{"callId":["a"]}]', 2)).toBe(true);
    expect(nestsDeeperThan('{"callId":"[[[{{{"}', 1)).toBe(false);
    expect(nestsDeeperThan('{"callId":"\\"[[["}', 1)).toBe(false);
    expect(nestsDeeperThan('{"a":"\\\\"}', 1)).toBe(false);
    expect(nestsDeeperThan('"text"', 0)).toBe(false);
  });

  it('reads UTF-8 bytes the way it reads text', () => {
    const json = '{"name":"Müller 🙂 [x]","n":[[1]]}';
    expect(nestsDeeperThan(Buffer.from(json), 3)).toBe(false);
    expect(nestsDeeperThan(Buffer.from(json), 2)).toBe(true);
  });

  it('refuses a body nested a million deep without recursing', () => {
    const deep = Buffer.from('['.repeat(1_000_000) + ']'.repeat(1_000_000));
    expect(nestsDeeperThan(deep, 16)).toBe(true);
  });
});

describe('verifyNesting', () => {
  it('refuses JSON in another charset than UTF-8, whose bytes it cannot count', () => {
    const verify = verifyNesting(2);
    expect(() => verify(undefined, undefined, Buffer.from('[]'), 'utf-8')).not.toThrow();
    expect(() => verify(undefined, undefined, Buffer.from('[]', 'utf16le'), 'utf-16le')).toThrow(
      expect.objectContaining({ type: 'charset.unsupported' }),
    );
    expect(() => verify(undefined, undefined, Buffer.from('[[[]]]'), 'utf-8')).toThrow(
      expect.objectContaining({ type: 'entity.too.deep' }),
    );
  });
});
