import { asteriskCdrToEvents, InternalNumbers } from './asterisk-cdr';
import { asteriskLiveToEvents } from './asterisk-live';
import { freeSwitchCdrToEvents } from './freeswitch-cdr';

/** Click-to-call: the portal's CALL_ID as each PBX carries it (docs/PBX.md "Click-to-call: CRM_CALL_ID"). */
const numbers: InternalNumbers = { isEmployee: (number) => ['101', '102'].includes(number), maxDigits: 6 };
const CALL_ID = 'externalCall.2f5e8c0b9a7d4e1f.1732269000';

const cdr = (fields: Record<string, string> = {}) => ({
  uniqueid: '1795341600.214',
  linkedid: '1795341600.214',
  direction: 'outbound',
  src: '102',
  dst: '004989555070707',
  extension: '102',
  disposition: 'ANSWERED',
  duration: '25',
  billsec: '20',
  start: '2026-11-22 11:00:00',
  ...fields,
});

const fsCdr = (vars: Record<string, string> = {}) => ({
  variables: {
    uuid: 'a-leg-c2c',
    direction: 'inbound',
    call_direction: 'outbound',
    start_epoch: '1795338000',
    end_epoch: '1795338030',
    billsec: '0',
    hangup_cause: 'USER_BUSY',
    ...vars,
  },
  callflow: [
    {
      profile_index: '1',
      caller_profile: { caller_id_number: '102', destination_number: '04089555070707', context: 'default' },
    },
  ],
});

describe('crmCallId from the PBXs', () => {
  it('Asterisk CDR: the CRM_CALL_ID field, on the call.ended', () => {
    const { events, sources } = asteriskCdrToEvents(cdr({ CRM_CALL_ID: CALL_ID }), 'Europe/Berlin', numbers);
    expect(events.find((event) => event.event === 'call.ended')).toMatchObject({ crmCallId: CALL_ID });
    expect(sources.crmCallId).toBe('CRM_CALL_ID');
  });

  it('Asterisk CDR: an empty ${CRM_CALL_ID} (no click) or garbage is no crmCallId', () => {
    for (const value of ['', '   ', 'not a call id']) {
      const { events } = asteriskCdrToEvents(cdr({ CRM_CALL_ID: value }), 'Europe/Berlin', numbers);
      expect(events.every((event) => event.crmCallId === undefined)).toBe(true);
    }
  });

  it('Asterisk live: ringing and answered carry CRM_CALL_ID', () => {
    const ringing = asteriskLiveToEvents(
      {
        event: 'ringing',
        linkedid: '1795356000.601',
        direction: 'outbound',
        src: '101',
        dst: '030555060612',
        CRM_CALL_ID: CALL_ID,
      },
      'Europe/Berlin',
      numbers,
    );
    expect(ringing.events[0]).toMatchObject({ event: 'call.started', crmCallId: CALL_ID });
    const answered = asteriskLiveToEvents(
      { event: 'answered', linkedid: '1795356000.601', extension: '101', CRM_CALL_ID: CALL_ID },
      'Europe/Berlin',
      numbers,
    );
    expect(answered.events[0]).toMatchObject({ event: 'call.answered', crmCallId: CALL_ID });
  });

  it('FreeSWITCH: variables.crm_call_id', () => {
    const { events, sources } = freeSwitchCdrToEvents(fsCdr({ crm_call_id: CALL_ID }), 'Europe/Berlin');
    expect(events.find((event) => event.event === 'call.ended')).toMatchObject({
      direction: 'outbound',
      crmCallId: CALL_ID,
    });
    expect(sources.crmCallId).toBe('variables.crm_call_id');
    const plain = freeSwitchCdrToEvents(fsCdr(), 'Europe/Berlin');
    expect(plain.events.every((event) => event.crmCallId === undefined)).toBe(true);
  });
});
