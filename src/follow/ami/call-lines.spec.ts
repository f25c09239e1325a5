import { followedLine } from '../followed-calls';
import { EarlyLines, lineNoteOf, lineOf } from './call-lines';

/** AMI events as FreePBX sends them (real PBX output), reduced to the fields the line is read from. */
describe('the line of a followed AMI call (docs/API.md "Lines")', () => {
  it("reads FreePBX's inbound route: VarSet __FROM_DID, or FROM_DID as a channel variable", () => {
    expect(
      lineNoteOf({ Event: 'VarSet', Variable: '__FROM_DID', Value: '0309900001', Context: 'ext-did-0001' }),
    ).toEqual({ did: '0309900001' });
    expect(lineNoteOf({ Event: 'Newstate', 'ChanVariable(FROM_DID)': '+49309900001' })).toEqual({
      did: '+49309900001',
    });
    // Empty until the inbound route sets it (every snapshot carries it with channelvars).
    expect(lineNoteOf({ Event: 'Newchannel', 'ChanVariable(FROM_DID)': '' })).toBeUndefined();
    expect(lineNoteOf({ Event: 'VarSet', Variable: 'FROM_DIDX', Value: '0309900001' })).toBeUndefined();
  });

  it("reads the outbound route's Set(CDR(outbound_cnum)=…), seen only as a Newexten's AppData", () => {
    expect(
      lineNoteOf({ Event: 'Newexten', Application: 'Set', AppData: 'CDR(outbound_cnum)=0309900004' }),
    ).toEqual({ outboundCnum: '0309900004' });
    expect(lineNoteOf({ Event: 'Newexten', Application: 'Set', AppData: 'CDR(outbound_cnum)=' })).toBe(
      undefined,
    );
    expect(
      lineNoteOf({ Event: 'Newexten', Application: 'NoOp', AppData: 'CDR(outbound_cnum)=0309900004' }),
    ).toBeUndefined();
  });

  it("chooses FROM_DID over the trunk's Exten inbound, outbound_cnum over the presented caller ID outbound", () => {
    const notes = { did: '0309900001', exten: '9900001', outboundCnum: '0309900004', presented: '4930' };
    expect(lineOf(notes, 'inbound')).toBe('0309900001');
    expect(lineOf(notes, 'outbound')).toBe('0309900004');
    expect(lineOf({ exten: '9900001', presented: '0309900005' }, 'inbound')).toBe('9900001');
    expect(lineOf({ exten: '9900001', presented: '0309900005' }, 'outbound')).toBe('0309900005');
    expect(lineOf({}, 'inbound')).toBeUndefined();
  });

  it('takes no value the intake would refuse as a line: the event it rides on is never lost', () => {
    for (const value of ['', ' ', 's', '<unknown>', 'anonymous', '0309,900}1', `030\r\n99`, 'x'.repeat(60)]) {
      expect(followedLine(value)).toBeUndefined();
    }
    expect(followedLine(' +49 30 9900001 ')).toBe('+49 30 9900001');
  });

  it('keeps notes made before the call opens for its Linkedid, bounded', () => {
    const early = new EarlyLines(2);
    early.note('1.1', { outboundCnum: '0309900004' });
    early.note('1.2', { did: '0309900001' });
    early.note('1.3', { did: '0309900002' });
    expect(early.take('1.1')).toEqual({});
    expect(early.take('1.3')).toEqual({ did: '0309900002' });
    expect(early.take('1.3')).toEqual({});
  });
});
