import { AmiFramer, AmiMessage, MAX_MESSAGE_BYTES, parseAmiMessage } from './ami-message';

describe('AMI framing', () => {
  const collect = () => {
    const banners: string[] = [];
    const messages: AmiMessage[] = [];
    const framer = new AmiFramer(
      (line) => banners.push(line),
      (message) => messages.push(message),
    );
    return { framer, banners, messages };
  };

  it('reads the banner line, then blank-line terminated blocks, whatever the chunk boundaries', () => {
    const { framer, banners, messages } = collect();
    const text =
      'Asterisk Call Manager/9.0.0\r\n' +
      'Response: Success\r\nActionID: 1\r\nMessage: Authentication accepted\r\n\r\n' +
      'Event: Newchannel\r\nPrivilege: call,all\r\nChannel: PJSIP/trunk1-00000010\r\nUniqueid: 1.1\r\n\r\n';
    for (let i = 0; i < text.length; i += 7) framer.push(text.slice(i, i + 7));
    expect(banners).toEqual(['Asterisk Call Manager/9.0.0']);
    expect(messages).toEqual([
      { Response: 'Success', ActionID: '1', Message: 'Authentication accepted' },
      { Event: 'Newchannel', Privilege: 'call,all', Channel: 'PJSIP/trunk1-00000010', Uniqueid: '1.1' },
    ]);
  });

  it("accepts the '\\r\\n\\n' terminator CoreShowChannelMap once sent", () => {
    const { framer, messages } = collect();
    framer.push('Asterisk Call Manager/9.0.0\r\nEvent: A\r\n\nEvent: B\r\n\r\n');
    expect(messages.map((m) => m.Event)).toEqual(['A', 'B']);
  });

  it('keeps every ChanVariable (and DestChanVariable) by name; values may contain ": " and "="', () => {
    const message = parseAmiMessage(
      [
        'Event: Hangup',
        'ChanVariable: MIXMONITOR_FILENAME=/var/spool/asterisk/monitor/a=b.wav',
        'ChanVariable: CDR(recordingfile)=in-101.wav',
        'DestChanVariable: FROM_DID=5550100',
        'AppData: Set(x=1): y',
      ].join('\r\n'),
    );
    expect(message).toEqual({
      Event: 'Hangup',
      'ChanVariable(MIXMONITOR_FILENAME)': '/var/spool/asterisk/monitor/a=b.wav',
      'ChanVariable(CDR(recordingfile))': 'in-101.wav',
      'DestChanVariable(FROM_DID)': '5550100',
      AppData: 'Set(x=1): y',
    });
  });

  it('a message that never ends past the bound throws instead of growing the buffer', () => {
    const { framer } = collect();
    framer.push('Asterisk Call Manager/9.0.0\r\n');
    expect(() => framer.push(`Event: X\r\nData: ${'a'.repeat(MAX_MESSAGE_BYTES)}`)).toThrow(/longer than/);
  });

  it('a banner that never ends is bounded too', () => {
    const { framer } = collect();
    expect(() => framer.push('x'.repeat(MAX_MESSAGE_BYTES + 1))).toThrow(/longer than/);
  });
});
