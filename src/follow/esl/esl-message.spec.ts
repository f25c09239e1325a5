import { EslFramer, EslMessage, header, MAX_BODY_BYTES, MAX_HEAD_BYTES, parseJsonEvent } from './esl-message';

const framed = (body: string, type = 'text/event-json') =>
  `Content-Length: ${Buffer.byteLength(body)}\nContent-Type: ${type}\n\n${body}`;

function collect(): { framer: EslFramer; messages: EslMessage[] } {
  const messages: EslMessage[] = [];
  return { framer: new EslFramer((message) => messages.push(message)), messages };
}

describe('EslFramer: event socket framing (Content-Length bodies)', () => {
  const stream = [
    'Content-Type: auth/request\n\n',
    'Content-Type: command/reply\nReply-Text: +OK accepted\n\n',
    framed('{"Event-Name":"CHANNEL_CREATE","Caller-Caller-ID-Name":"Jürgen Müller"}'),
    framed('UP 0 years\n3 session(s) since startup\n', 'api/response'),
  ].join('');

  it('splits heads and bodies, counting UTF-8 bodies in bytes, whatever the chunking', () => {
    const bytes = Buffer.from(stream);
    for (const size of [1, 2, 7, 64, bytes.length]) {
      const { framer, messages } = collect();
      for (let i = 0; i < bytes.length; i += size) framer.push(bytes.subarray(i, i + size));
      expect(messages.map((m) => m.headers['Content-Type'])).toEqual([
        'auth/request',
        'command/reply',
        'text/event-json',
        'api/response',
      ]);
      expect(parseJsonEvent(messages[2].body)?.['Caller-Caller-ID-Name']).toBe('Jürgen Müller');
      expect(messages[3].body).toContain('3 session(s) since startup');
    }
  });

  it('accepts CRLF heads', () => {
    const { framer, messages } = collect();
    framer.push(Buffer.from('Content-Type: command/reply\r\nReply-Text: +OK\r\n\r\n'));
    expect(messages[0].headers['Reply-Text']).toBe('+OK');
  });

  it('throws past the bounds: an endless head, a body announced too large, a length that is no count', () => {
    expect(() => collect().framer.push(Buffer.alloc(MAX_HEAD_BYTES + 1, 'a'))).toThrow(/head longer/);
    expect(() =>
      collect().framer.push(Buffer.from(`Content-Length: ${MAX_BODY_BYTES + 1}\nContent-Type: x\n\n`)),
    ).toThrow(/body of \d+ bytes/);
    expect(() => collect().framer.push(Buffer.from('Content-Length: -3\n\n'))).toThrow(/not a byte count/);
  });

  it('event json: multi-valued headers are arrays; header() takes the newest value', () => {
    const event = parseJsonEvent(
      '{"variable_transfer_history":["1:a:bl_xfer:101/default/XML","2:b:att_xfer:x"]}',
    );
    expect(header(event ?? {}, 'variable_transfer_history')).toBe('2:b:att_xfer:x');
    expect(parseJsonEvent('not json')).toBeUndefined();
    expect(parseJsonEvent('[1]')).toBeUndefined();
  });
});
