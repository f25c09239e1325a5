import { Endpoints } from '../ami/endpoints';
import { CdrRow, ledgerCallOf, rowKey } from './cdr-calls';

/** FreePBX `cdr` rows as real PBX output describes them (one per Party A / Party B pair). */
const row = (over: Partial<CdrRow>): CdrRow => ({
  calldate: '2026-11-26 10:00:00',
  ended: '2026-11-26 10:01:00',
  src: '+4915100000001',
  dst: '5550100',
  channel: 'PJSIP/trunk1-00000010',
  dstchannel: '',
  lastapp: 'Dial',
  duration: 60,
  billsec: 0,
  disposition: 'NO ANSWER',
  uniqueid: '1764151200.10',
  did: '5550100',
  recordingfile: '',
  cnum: '',
  linkedid: '1764151200.10',
  sequence: 1,
  ...over,
});

const mapping = {
  endpoints: new Endpoints([], { isEmployee: () => false, maxDigits: 4 }),
  zone: 'Europe/Berlin',
  recordingTemplate: 'https://pbx.example.com/rec/{file}',
};
const ID = '1764151200.10';

describe('a finished call from its CDR rows', () => {
  it('queue: the trunk row to the member Local half, the half row to the phone: answered by 102, talk time, recording', () => {
    const outcome = ledgerCallOf(
      ID,
      [
        row({ dstchannel: 'Local/101@from-queue-00000001;1', disposition: 'NO ANSWER', sequence: 1 }),
        row({
          dstchannel: 'Local/102@from-queue-00000002;1',
          disposition: 'ANSWERED',
          billsec: 45,
          recordingfile: 'q-400-1.wav',
          sequence: 2,
        }),
        row({
          channel: 'Local/102@from-queue-00000002;2',
          uniqueid: '1764151205.14',
          calldate: '2026-11-26 10:00:10',
          dstchannel: 'PJSIP/102-00000011',
          disposition: 'ANSWERED',
          duration: 50,
          billsec: 45,
          sequence: 3,
        }),
      ],
      mapping,
    );
    expect(outcome).toEqual({
      events: [
        expect.objectContaining({ event: 'call.answered', callId: ID, extension: '102' }),
        expect.objectContaining({
          event: 'call.ended',
          callId: ID,
          direction: 'inbound',
          phoneNumber: '+4915100000001',
          extension: '102',
          startedAt: '2026-11-26T10:00:00+01:00',
          durationSec: 45,
          status: 'answered',
          recordingUrl: 'https://pbx.example.com/rec/q-400-1.wav',
        }),
      ],
    });
  });

  it('rang 101, then voicemail answered the trunk: missed, no talk time, no recording', () => {
    const outcome = ledgerCallOf(
      ID,
      [
        row({ dstchannel: 'PJSIP/101-00000011', disposition: 'NO ANSWER', sequence: 1 }),
        row({ dstchannel: '', lastapp: 'VoiceMail', disposition: 'ANSWERED', billsec: 30, sequence: 2 }),
      ],
      mapping,
    );
    expect(outcome).toEqual({
      events: [
        expect.objectContaining({ event: 'call.ended', extension: '101', status: 'missed', durationSec: 0 }),
      ],
    });
  });

  it('blind transfer 101 → 102: answered, the finish by 102, talk time from the first answer', () => {
    const outcome = ledgerCallOf(
      ID,
      [
        row({
          dstchannel: 'PJSIP/101-00000011',
          disposition: 'ANSWERED',
          duration: 60,
          billsec: 55,
          sequence: 1,
        }),
        row({
          calldate: '2026-11-26 10:00:20',
          dstchannel: 'PJSIP/102-00000012',
          disposition: 'ANSWERED',
          duration: 40,
          billsec: 38,
          sequence: 2,
        }),
      ],
      mapping,
    );
    expect('events' in outcome && outcome.events.at(-1)).toMatchObject({ extension: '102', durationSec: 55 });
  });

  it('outbound 103 → trunk, busy', () => {
    const outcome = ledgerCallOf(
      ID,
      [
        row({
          channel: 'PJSIP/103-00000013',
          src: '103',
          cnum: '103',
          dst: '+4930123456',
          did: '',
          dstchannel: 'PJSIP/trunk1-00000014',
          disposition: 'BUSY',
        }),
      ],
      mapping,
    );
    expect(outcome).toEqual({
      events: [
        expect.objectContaining({
          direction: 'outbound',
          phoneNumber: '+4930123456',
          extension: '103',
          status: 'busy',
        }),
      ],
    });
  });

  it('phone to phone: ignored; rows are keyed by uniqueid and sequence', () => {
    const internal = row({ channel: 'PJSIP/101-00000015', dstchannel: 'PJSIP/102-00000016' });
    expect(ledgerCallOf(ID, [internal], mapping)).toEqual({
      ignored: expect.stringContaining('between phones'),
    });
    expect(rowKey(internal)).toBe('1764151200.10#1');
  });
});
