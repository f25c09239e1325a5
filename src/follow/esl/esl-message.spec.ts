import { connect } from 'node:net';
import { EslDouble } from '../../../test/support/esl-double';
import {
  EslEvent,
  EslFramer,
  EslMessage,
  header,
  MAX_BODY_BYTES,
  MAX_HEAD_BYTES,
  parseJsonEvent,
  parsePlainEvent,
} from './esl-message';

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

describe('parsePlainEvent: text/event-plain as FreeSWITCH writes it', () => {
  const body = [
    'Event-Name: CHANNEL_HANGUP_COMPLETE',
    'Event-Date-Local: 2026-11-22%2010%3A00%3A00',
    'Channel-Name: sofia/internal/1001%40192.0.2.21',
    'variable_Event-Name: REQUEST_PARAMS',
    'variable_originated_legs: ARRAY%3A%3Ab-leg%3BOutbound%20Call%3B1002%7C%3Ab-leg%3BOutbound%20Call%3B1002',
    'Content-Length: 6',
    '',
    '+OK 1\n',
  ].join('\n');

  it('decodes values, keeps a variable copying a header apart from it, splits ARRAY:: values, keeps a body', () => {
    const event = parsePlainEvent(body);
    expect(event).toMatchObject({
      'Event-Name': 'CHANNEL_HANGUP_COMPLETE',
      'Event-Date-Local': '2026-11-22 10:00:00',
      'Channel-Name': 'sofia/internal/1001@192.0.2.21',
      'variable_Event-Name': 'REQUEST_PARAMS',
      variable_originated_legs: ['b-leg;Outbound Call;1002', 'b-leg;Outbound Call;1002'],
      _body: '+OK 1\n',
    });
  });
});

describe('the event socket double over TCP: event plain, frames in random chunks', () => {
  it('every plain event read back equals the event the switch fired', async () => {
    const pbx = await EslDouble.start('pw', { seed: 7 });
    const names = ['CHANNEL_CREATE', 'CHANNEL_BRIDGE', 'CHANNEL_HANGUP_COMPLETE'];
    const fired: Record<string, string | string[]>[] = [];
    pbx.observe((_frame, event) => {
      if (names.includes(String(event['Event-Name']))) fired.push(event);
    });
    const read: EslEvent[] = [];
    let subscribed: () => void = () => undefined;
    const listening = new Promise<void>((resolve) => (subscribed = resolve));
    const framer = new EslFramer((message) => {
      if (message.headers['Reply-Text'] === '+OK event listener enabled plain') subscribed();
      if (message.headers['Content-Type'] === 'text/event-plain') read.push(parsePlainEvent(message.body));
    });
    // TCP may join the double's chunks into one read on a busy machine: the reader splits each read again
    // (seeded), so frames always reach the framer cut mid-header and mid-body.
    const pushes: number[] = [];
    let state = 7;
    const nextSize = () => 1 + ((state = (state * 1103515245 + 12345) % 2 ** 31) % 700);
    const socket = connect(pbx.port, '127.0.0.1');
    socket.on('data', (chunk: Buffer) => {
      for (let at = 0; at < chunk.length;) {
        const piece = chunk.subarray(at, at + nextSize());
        pushes.push(piece.length);
        framer.push(piece);
        at += piece.length;
      }
    });
    socket.write(`auth pw\n\nevent plain ${names.join(' ')}\n\n`);
    await listening;
    await pbx.play({ kind: 'inbound', from: '+4915112345678', to: '101', answeredBy: '101', stepMs: 1 }).done;
    while (read.length < fired.length) await new Promise((resolve) => setImmediate(resolve));
    socket.destroy();
    await pbx.close();
    expect(read).toEqual(fired);
    expect(pushes.length).toBeGreaterThan(read.length);
  });
});
