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
  outbound_cnum: '',
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

  it("queue rows (REAL-PBX.md §8): the Queue rows' answer is the queue's; talk time from the agent's answer", () => {
    const queue = { lastapp: 'Queue', disposition: 'NO ANSWER' };
    const outcome = ledgerCallOf(
      ID,
      [
        // Member 101 rang 20 s: the trunk's Queue row has billsec 20 (answered by the queue), its ;2 row 0.
        row({
          ...queue,
          ended: '2026-11-26 10:00:20',
          dstchannel: 'Local/101@from-queue-00000001;1',
          duration: 20,
          billsec: 20,
          sequence: 1,
        }),
        row({
          channel: 'Local/101@from-queue-00000001;2',
          uniqueid: '1764151200.12',
          ended: '2026-11-26 10:00:20',
          dstchannel: 'PJSIP/101-00000013',
          duration: 20,
          sequence: 3,
        }),
        row({
          ...queue,
          calldate: '2026-11-26 10:00:20',
          ended: '2026-11-26 10:01:30',
          dstchannel: 'Local/102@from-queue-00000004;1',
          disposition: 'ANSWERED',
          duration: 70,
          billsec: 70,
          sequence: 6,
        }),
        row({
          channel: 'Local/102@from-queue-00000004;2',
          uniqueid: '1764151220.15',
          calldate: '2026-11-26 10:00:20',
          ended: '2026-11-26 10:01:30',
          dstchannel: 'PJSIP/102-00000016',
          disposition: 'ANSWERED',
          duration: 70,
          billsec: 64,
          sequence: 8,
        }),
      ],
      mapping,
    );
    expect(outcome).toEqual({
      events: [
        expect.objectContaining({ event: 'call.answered', extension: '102' }),
        expect.objectContaining({
          event: 'call.ended',
          status: 'answered',
          durationSec: 64,
          extension: '102',
        }),
      ],
    });
  });

  it('a queue no agent took: NO ANSWER Queue rows with billsec > 0 and the trailing Hangup row are missed', () => {
    const outcome = ledgerCallOf(
      ID,
      [
        row({ lastapp: 'Queue', dstchannel: 'PJSIP/101-00000011', duration: 11, billsec: 11, sequence: 10 }),
        row({
          lastapp: 'Queue',
          calldate: '2026-11-26 10:00:16',
          dstchannel: 'PJSIP/102-00000012',
          duration: 3,
          billsec: 3,
          sequence: 13,
        }),
        row({
          lastapp: 'Hangup',
          calldate: '2026-11-26 10:00:19',
          disposition: 'ANSWERED',
          duration: 0,
          sequence: 14,
        }),
      ],
      mapping,
    );
    expect(outcome).toEqual({
      events: [expect.objectContaining({ event: 'call.ended', status: 'missed', durationSec: 0 })],
    });
  });

  it('outbound, blind-transferred: the trunk row written at its hang-up names the phone that took it', () => {
    const outbound = { src: '103', cnum: '103', dst: '+4930123456', did: '' };
    const outcome = ledgerCallOf(
      ID,
      [
        row({
          ...outbound,
          channel: 'PJSIP/103-00000017',
          dstchannel: 'PJSIP/trunk1-00000018',
          ended: '2026-11-26 10:05:00',
          disposition: 'ANSWERED',
          duration: 300,
          billsec: 295,
        }),
        row({
          ...outbound,
          channel: 'PJSIP/trunk1-00000018',
          uniqueid: '1764151201.11',
          calldate: '2026-11-26 10:00:01',
          ended: '2026-11-26 10:07:01',
          dstchannel: 'PJSIP/102-00000019',
          disposition: 'ANSWERED',
          duration: 420,
          billsec: 116,
          sequence: 2,
        }),
      ],
      mapping,
    );
    expect(outcome).toEqual({
      events: [
        expect.objectContaining({ event: 'call.answered', extension: '102' }),
        expect.objectContaining({ direction: 'outbound', extension: '102', durationSec: 416 }),
      ],
    });
  });
});
