import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { threeCxCallId } from '../../src/pbx/adapters/threecx-journal';
import { Harness, PBX_TOKEN, startHarness } from '../support/bridge-harness';
import { callStatus, finishedOnPortal, fixtureJson, fixtureText, namedFields } from './adapter-support';

const template = readFileSync(resolve(__dirname, '../../docs/pbx/3cx-crm-template.xml'), 'utf8');

/** The 3CX server-side CRM template's two scenarios: contact lookup and call journaling (ReportCall). */
describe('3CX CRM template adapter', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({ PBX_TIME_ZONE: 'Europe/Berlin' });
  });
  afterAll(async () => {
    await h.close();
  });

  /** As the template authenticates: `<Authentication Type="Basic"><Value>3cx:[Token]</Value>`. */
  const auth = `Basic ${Buffer.from(`3cx:${PBX_TOKEN}`).toString('base64')}`;
  const lookup = (query: string) => h.http.get(`/v1/pbx/3cx/lookup${query}`).set('Authorization', auth);
  const journal = (body: string | object, type = 'application/json') =>
    h.http
      .post('/v1/pbx/3cx/calls')
      .set('Authorization', auth)
      .set('Content-Type', type)
      .send(typeof body === 'string' ? body : JSON.stringify(body));

  describe('contact lookup', () => {
    it('answers a contact flat: names, the portal link, the responsible employee and her extension', async () => {
      // 3CX puts [Number] in the URL as it is: the leading + arrives unencoded.
      const response = await lookup('?number=+4915112345678').expect(200);
      expect(response.body).toEqual({
        phone: '+4915112345678',
        id: 1,
        entityType: 'CONTACT',
        firstName: 'Max',
        lastName: 'Mustermann',
        companyName: '',
        name: 'Max Mustermann',
        contactUrl: `${h.sandbox.url}/crm/contact/details/1/`,
        responsibleUserId: 2,
        responsibleExtension: '101',
      });
    });

    it('answers a company with its name as companyName', async () => {
      const response = await lookup(`?number=${encodeURIComponent('+44 20 7946 0958')}`).expect(200);
      expect(response.body).toMatchObject({
        id: 2,
        entityType: 'COMPANY',
        companyName: 'Globex Ltd',
        firstName: '',
        lastName: '',
        contactUrl: `${h.sandbox.url}/crm/company/details/2/`,
        responsibleExtension: '103',
      });
    });

    it('answers only the phone (no id: the template finds no contact) for an unknown number', async () => {
      const response = await lookup('?number=030%205550000').expect(200);
      expect(response.body).toEqual({ phone: '+49305550000' });
    });

    it('400 naming number when it is missing or not a number; 401 without the token', async () => {
      const missing = await lookup('').expect(400);
      expect(namedFields(missing.body)).toEqual(['number']);
      const bad = await lookup('?number=anonymous').expect(400);
      expect(namedFields(bad.body)).toEqual(['number']);
      await h.http.get('/v1/pbx/3cx/lookup?number=%2B4915112345678').expect(401);
    });
  });

  describe('call journaling', () => {
    it('delivers an answered inbound call under a derived call id', async () => {
      const response = await journal(fixtureJson('3cx/report-call-inbound.json'));
      expect(response.status).toBe(202);
      expect(response.body).toEqual({
        accepted: 1,
        duplicates: 0,
        callId: expect.stringMatching(/^3cx-[0-9a-f]{32}$/),
      });
      const call = await finishedOnPortal(h, response.body.callId);
      expect(call).toMatchObject({
        PHONE_NUMBER: '+4930555121212',
        TYPE: 2,
        USER_ID: 2,
        SHOW: false,
        CALL_START_DATE: '2026-11-22T09:00:00Z',
      });
      expect(call.finished).toMatchObject({ DURATION: 121, STATUS_CODE: '200' });
    });

    it('the same journal entry posted again has the same id and is a duplicate: one call on the portal', async () => {
      const body = fixtureJson('3cx/report-call-outbound.json');
      const first = await journal(body);
      expect(first.body).toMatchObject({ accepted: 1, duplicates: 0 });
      // 3CX sends national and international forms alike; the id is derived from the E.164 number.
      const again = await journal({ ...body, Number: '089 555141414' });
      expect(again.body).toEqual({ accepted: 0, duplicates: 1, callId: first.body.callId });
      const call = await finishedOnPortal(h, first.body.callId);
      expect(call).toMatchObject({ TYPE: 1, USER_ID: 4, PHONE_NUMBER: '+4989555141414' });
      expect(call.finished).toMatchObject({ DURATION: 605, STATUS_CODE: '200' });
      expect(call.registerRequests).toBe(1);
    });

    it('another call from the same number a minute later is another call', async () => {
      const body = fixtureJson('3cx/report-call-outbound.json');
      const later = await journal({
        ...body,
        CallStartTimeUTC: '2026-11-22T11:01:00Z',
        CallEndTimeUTC: '2026-11-22T11:02:00Z',
      });
      expect(later.body).toMatchObject({ accepted: 1, duplicates: 0 });
      expect(later.body.callId).not.toBe((await journal(body)).body.callId);
    });

    it('a missed call: inbound, STATUS_CODE 304, no talk time', async () => {
      const response = await journal(fixtureJson('3cx/report-call-missed.json'));
      const call = await finishedOnPortal(h, response.body.callId);
      expect(call).toMatchObject({ TYPE: 2, USER_ID: 3, PHONE_NUMBER: '+49305551313' });
      expect(call.finished).toMatchObject({ DURATION: 0, STATUS_CODE: '304' });
    });

    it('a not answered outbound call, posted as a form', async () => {
      const response = await journal(
        fixtureText('3cx/report-call-notanswered.form.txt'),
        'application/x-www-form-urlencoded',
      );
      expect(response.status).toBe(202);
      const call = await finishedOnPortal(h, response.body.callId);
      expect(call).toMatchObject({ TYPE: 1, USER_ID: 2, PHONE_NUMBER: '+4940555151515' });
      expect(call.finished).toMatchObject({ DURATION: 0, STATUS_CODE: '304' });
    });

    it('without CallStartTimeUTC reads DateTime in the PBX local time', async () => {
      const body: Record<string, unknown> = {
        ...fixtureJson('3cx/report-call-inbound.json'),
        Number: '+4930555171717',
      };
      delete body.CallStartTimeUTC;
      delete body.CallEndTimeUTC;
      const response = await journal(body);
      const call = await finishedOnPortal(h, response.body.callId);
      expect(call.CALL_START_DATE).toBe('2026-11-22T10:00:00+01:00');
    });

    it('400 naming the 3CX variable that is wrong; nothing stored', async () => {
      const body: Record<string, unknown> = {
        ...fixtureJson('3cx/report-call-inbound.json'),
        CallType: 'Sideways',
        Duration: '2 minutes',
      };
      delete body.CallStartTimeUTC;
      delete body.DateTime;
      const response = await journal(body);
      expect(response.status).toBe(400);
      expect(namedFields(response.body).sort()).toEqual(['CallStartTimeUTC', 'CallType', 'Duration']);

      const noNumber = await journal({ ...fixtureJson('3cx/report-call-inbound.json'), Number: 'Reception' });
      expect(noNumber.status).toBe(400);
      expect(noNumber.body.errors).toEqual([
        expect.objectContaining({ field: 'phoneNumber', pbxField: 'Number' }),
      ]);
      const wouldBe = threeCxCallId({
        direction: 'inbound',
        number: 'Reception',
        agent: '101',
        startedAt: '2026-11-22T09:00:00Z',
      });
      expect((await callStatus(h, wouldBe)).status).toBe(404);
      const badDate = await journal({
        ...fixtureJson('3cx/report-call-inbound.json'),
        CallStartTimeUTC: 'yesterday',
      });
      expect(namedFields(badDate.body)).toEqual(['CallStartTimeUTC']);
      expect((await journal('<xml/>', 'text/xml')).status).toBe(415);
    });
  });

  describe('the template in docs/pbx/3cx-crm-template.xml', () => {
    it('calls the two routes, with Basic authentication carrying the token', () => {
      expect(template).toContain('Url="[BridgeUrl]/v1/pbx/3cx/lookup?number=[Number]"');
      expect(template).toContain('Url="[BridgeUrl]/v1/pbx/3cx/calls"');
      expect(template).toMatch(/<Authentication Type="Basic">\s*<Value>3cx:\[Token\]<\/Value>/);
      expect(template).toMatch(
        /<Crm [^>]*Country="[A-Z]{2}" Name="[^"]+" Version="\d+" SupportsEmojis="false">/,
      );
    });

    it('reads lookup fields the bridge answers, and posts the journal fields the bridge reads', async () => {
      const answer = (await lookup('?number=+4915112345678')).body;
      const paths = [...template.matchAll(/<Variable Name="\w+" Path="(\w+)">/g)].map((match) => match[1]);
      expect(paths.length).toBeGreaterThan(0);
      for (const path of paths) expect(answer).toHaveProperty(path);

      const keys = [...template.matchAll(/<Value Key="(\w+)"/g)].map((match) => match[1]);
      for (const needed of [
        'CallType',
        'Number',
        'Agent',
        'Duration',
        'CallStartTimeUTC',
        'CallEndTimeUTC',
      ]) {
        expect(keys).toContain(needed);
      }
      // Every key the template posts is one of the fixture's (a real ReportCall body), which the bridge takes.
      expect(Object.keys(fixtureJson('3cx/report-call-inbound.json')).sort()).toEqual(
        expect.arrayContaining(keys.sort()),
      );
    });
  });
});
