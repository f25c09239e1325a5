import { Harness, startHarness } from '../support/bridge-harness';
import {
  basic,
  callStatus,
  finishedOnPortal,
  fixtureForm,
  fixtureText,
  namedFields,
} from './adapter-support';

/** POST /v1/pbx/asterisk: the form a dialplan hang-up handler posts with CURL(), to the portal over HTTP. */
describe('Asterisk CURL() hang-up handler adapter', () => {
  let h: Harness;

  beforeAll(async () => {
    // PBX_TIME_ZONE stays UTC: the Asterisk in these tests says its zone with ?tz=.
    h = await startHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  /** As Asterisk's CURL() posts: a form, HTTP Basic from CURLOPT(userpwd). */
  const post = (
    body: string | URLSearchParams,
    query = '?tz=Europe/Berlin',
    type = 'application/x-www-form-urlencoded',
  ) =>
    h.http
      .post(`/v1/pbx/asterisk${query}`)
      .set('Authorization', basic('asterisk'))
      .set('Content-Type', type)
      .send(body.toString());

  /** A fixture as another call: its linkedid changed, and any field replaced. */
  const variant = (path: string, linkedid: string, fields: Record<string, string> = {}) => {
    const form = fixtureForm(path);
    form.set('linkedid', linkedid);
    form.set('uniqueid', linkedid);
    for (const [name, value] of Object.entries(fields)) form.set(name, value);
    return form;
  };

  it('delivers an answered inbound call with its recording, its local start in the URL time zone', async () => {
    const response = await post(fixtureText('asterisk/inbound-answered.txt'));
    expect(response.status).toBe(202);
    // An answered call: its call.answered (extension 101) and its call.ended.
    expect(response.body).toEqual({ accepted: 2, duplicates: 0, callId: '1795338000.101' });
    const call = await finishedOnPortal(h, '1795338000.101', true);
    expect(call).toMatchObject({
      PHONE_NUMBER: '+4930555060606',
      TYPE: 2,
      USER_ID: 2,
      SHOW: false,
      CALL_START_DATE: '2026-11-22T10:00:00+01:00',
    });
    expect(call.finished).toMatchObject({ DURATION: 121, STATUS_CODE: '200' });
    expect(call.records.map((record) => record.RECORD_URL)).toEqual([
      'https://pbx.example.com/monitor/2026/11/22/in-1795338000.101.wav',
    ]);
  });

  it.each([
    [
      'outbound-no-answer.txt',
      '1795341600.214',
      { TYPE: 1, USER_ID: 3, PHONE_NUMBER: '+4989555070707' },
      '304',
    ],
    ['inbound-busy.txt', '1795345200.330', { TYPE: 2, USER_ID: 4, PHONE_NUMBER: '+4940555080808' }, '486'],
    [
      'outbound-congestion.txt',
      '1795348800.412',
      { TYPE: 1, USER_ID: 2, PHONE_NUMBER: '+49221555090909' },
      'OTHER',
    ],
  ])('delivers %s with STATUS_CODE as mapped', async (fixture, callId, fields, code) => {
    expect((await post(fixtureText(`asterisk/${fixture}`))).status).toBe(202);
    const call = await finishedOnPortal(h, callId);
    expect(call).toMatchObject(fields);
    expect(call.finished).toMatchObject({ DURATION: 0, STATUS_CODE: code });
    if (code === 'OTHER') expect(call.finished?.FAILED_REASON).toBe('CONGESTION');
  });

  it.each([
    ['CANCEL', 'outbound', '603-S'],
    ['CANCEL', 'inbound', '304'],
    ['FAILED', 'outbound', 'OTHER'],
    ['CHANUNAVAIL', 'inbound', 'OTHER'],
    ['NOANSWER', 'inbound', '304'],
  ])('maps disposition %s of an %s call to STATUS_CODE %s', async (disposition, direction, code) => {
    const callId = `1795352400.${disposition.toLowerCase()}-${direction}`;
    const parties: Record<string, string> =
      direction === 'inbound' ? { src: '030555161616', dst: '4930123456' } : {};
    const form = variant('asterisk/outbound-no-answer.txt', callId, { disposition, direction, ...parties });
    expect((await post(form)).status).toBe(202);
    const call = await finishedOnPortal(h, callId);
    expect(call.finished?.STATUS_CODE).toBe(code);
  });

  it('without ?tz= reads the start in PBX_TIME_ZONE (UTC here)', async () => {
    const form = variant('asterisk/inbound-answered.txt', '1795338000.utc', { recording: '' });
    expect((await post(form, '')).status).toBe(202);
    const call = await finishedOnPortal(h, '1795338000.utc');
    expect(Date.parse(call.CALL_START_DATE)).toBe(Date.parse('2026-11-22T10:00:00Z'));
  });

  it('counts a second post of one call (both legs run the handler) as a duplicate: one call on the portal', async () => {
    const form = variant('asterisk/inbound-answered.txt', '1795338000.dup', { recording: '' });
    expect((await post(form)).body).toEqual({ accepted: 2, duplicates: 0, callId: '1795338000.dup' });
    expect((await post(form)).body).toEqual({ accepted: 0, duplicates: 2, callId: '1795338000.dup' });
    const call = await finishedOnPortal(h, '1795338000.dup');
    expect(call.registerRequests).toBe(1);
  });

  describe('malformed posts: 400 naming the field, nothing stored', () => {
    it('names each missing or bad field', async () => {
      const form = variant('asterisk/inbound-answered.txt', '1795338000.bad1', {
        disposition: 'HUNG UP',
        start: '22.11.2026 10:00',
        billsec: '-1',
      });
      form.set('direction', 'sideways');
      const response = await post(form);
      expect(response.status).toBe(400);
      expect(namedFields(response.body).sort()).toEqual(['billsec', 'direction', 'disposition', 'start']);
      expect((await callStatus(h, '1795338000.bad1')).status).toBe(404);
    });

    it('names linkedid when it is missing', async () => {
      const form = variant('asterisk/inbound-answered.txt', '');
      form.delete('linkedid');
      const response = await post(form);
      expect(response.status).toBe(400);
      expect(namedFields(response.body)).toEqual(['linkedid']);
    });

    it('a start that does not exist, a field sent twice, a number that is none', async () => {
      const impossible = variant('asterisk/inbound-answered.txt', '1795338000.bad2', {
        start: '2026-02-30 10:00:00',
      });
      const first = await post(impossible);
      expect(first.status).toBe(400);
      expect(namedFields(first.body)).toEqual(['start']);

      const twice = `${variant('asterisk/inbound-answered.txt', '1795338000.bad3')}&src=0301234`;
      const second = await post(twice);
      expect(second.status).toBe(400);
      expect(namedFields(second.body)).toEqual(['src']);

      const none = variant('asterisk/inbound-answered.txt', '1795338000.bad4', { src: 'Ext. 12' });
      const third = await post(none);
      expect(third.status).toBe(400);
      expect(third.body.errors).toEqual([expect.objectContaining({ field: 'phoneNumber', pbxField: 'src' })]);
      for (const callId of ['1795338000.bad2', '1795338000.bad3', '1795338000.bad4']) {
        expect((await callStatus(h, callId)).status).toBe(404);
      }
    });

    it('an unknown ?tz= is a 400 naming tz; JSON is a 415', async () => {
      const zone = await post(fixtureText('asterisk/inbound-busy.txt'), '?tz=Mars/Olympus_Mons');
      expect(zone.status).toBe(400);
      expect(namedFields(zone.body)).toEqual(['tz']);
      const json = await post('{"linkedid":"1"}', '', 'application/json');
      expect(json.status).toBe(415);
      expect(json.body.message).toContain('application/x-www-form-urlencoded');
    });
  });
});
