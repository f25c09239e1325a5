import axios from 'axios';
import { defaultSeed } from '../../sandbox';
import { Harness, PBX_TOKEN, startHarness } from '../support/bridge-harness';
import { portalRequests, recordedLookups, seedRecord } from './crm-support';

/** GET /v1/lookup through HTTP, answered by the sandbox portal over real HTTP. */
describe('GET /v1/lookup', () => {
  let h: Harness;

  beforeAll(async () => {
    const seed = defaultSeed();
    h = await startHarness(
      {},
      {
        seed: {
          contacts: [
            ...seed.contacts,
            // Two contacts share a number: the more recently changed one is the answer.
            seedRecord(
              10,
              { NAME: 'Old', LAST_NAME: 'Entry' },
              2,
              '2025-05-01T10:00:00+02:00',
              '+49 221 5550100',
            ),
            seedRecord(
              11,
              { NAME: 'New', LAST_NAME: 'Entry' },
              3,
              '2026-04-01T10:00:00+02:00',
              '0221 5550100',
            ),
            // A contact whose responsible employee (Dieter, 5) is no longer active.
            seedRecord(
              12,
              { NAME: 'Ina', LAST_NAME: 'Aktiv' },
              5,
              '2026-01-01T10:00:00+01:00',
              '+49 211 5550123',
            ),
          ],
          leads: [
            ...seed.leads,
            // Newer than contact 11, but a contact goes first.
            seedRecord(10, { TITLE: 'Newer lead' }, 4, '2026-05-01T10:00:00+02:00', '+49 221 5550100'),
          ],
        },
      },
    );
  });
  afterAll(async () => {
    await h.close();
  });

  const lookup = (phone: string) =>
    h.http.get('/v1/lookup').query({ phone }).set('Authorization', `Bearer ${PBX_TOKEN}`);

  it('finds a contact, its responsible employee and her internal number', async () => {
    const response = await lookup('+49 151 1234-5678').expect(200);
    expect(response.body).toEqual({
      phone: '+4915112345678',
      match: {
        entityType: 'CONTACT',
        entityId: 1,
        name: 'Max Mustermann',
        responsibleUserId: 2,
        responsibleExtension: '101',
      },
    });
  });

  it('finds a company by its title', async () => {
    const response = await lookup('+44 20 7946 0958').expect(200);
    expect(response.body.match).toEqual({
      entityType: 'COMPANY',
      entityId: 2,
      name: 'Globex Ltd',
      responsibleUserId: 4,
      responsibleExtension: '103',
    });
  });

  it("finds a lead by the person's name, else by its title", async () => {
    const person = await lookup('+49 170 5550101').expect(200);
    expect(person.body.match).toMatchObject({ entityType: 'LEAD', entityId: 1, name: 'Tom Weber' });
    const titled = await lookup('040 5550199').expect(200);
    expect(titled.body).toMatchObject({
      phone: '+49405550199',
      match: { entityType: 'LEAD', entityId: 2, name: 'Trade fair contact', responsibleExtension: '102' },
    });
  });

  it.each(['+49 151 1234-5678', '0151 12345678', '0049151 12345678', '+4915112345678', '(0151) 1234 5678'])(
    'finds the same client for the written form %s',
    async (written) => {
      const response = await lookup(written).expect(200);
      expect(response.body.phone).toBe('+4915112345678');
      expect(response.body.match).toMatchObject({ entityType: 'CONTACT', entityId: 1 });
    },
  );

  it('finds a record the CRM stores in national form (030 …) by the international number', async () => {
    const response = await lookup('+49 30 98765432').expect(200);
    expect(response.body.match).toMatchObject({
      entityType: 'CONTACT',
      entityId: 2,
      name: 'Erika Musterfrau',
    });
  });

  it('takes an unencoded + in the query string as the plus sign', async () => {
    const response = await h.http
      .get('/v1/lookup?phone=+1+415+555+0100')
      .set('Authorization', `Bearer ${PBX_TOKEN}`)
      .expect(200);
    expect(response.body).toMatchObject({
      phone: '+14155550100',
      match: { entityType: 'CONTACT', entityId: 3 },
    });
  });

  it('answers match null, without a reason, for a number nobody has', async () => {
    const response = await lookup('+49 30 1111111').expect(200);
    expect(response.body).toEqual({ phone: '+49301111111', match: null });
  });

  it('prefers a company to a lead with the same number', async () => {
    const response = await lookup('+49 89 12345600').expect(200);
    expect(response.body.match).toMatchObject({ entityType: 'COMPANY', entityId: 1, name: 'Acme GmbH' });
  });

  it('prefers a contact to a newer lead, and the most recently changed of two contacts', async () => {
    const response = await lookup('0221 5550100').expect(200);
    expect(response.body.match).toEqual({
      entityType: 'CONTACT',
      entityId: 11,
      name: 'New Entry',
      responsibleUserId: 3,
      responsibleExtension: '102',
    });
  });

  it('names no internal number for a responsible employee who is no longer active', async () => {
    const response = await lookup('+49 211 5550123').expect(200);
    expect(response.body.match).toMatchObject({ responsibleUserId: 5, responsibleExtension: null });
  });

  it('finds a client added on the portal after start-up', async () => {
    const added = await axios.post(`${h.sandbox.webhookUrl}crm.contact.add`, {
      fields: { NAME: 'Fresh', LAST_NAME: 'Client', ASSIGNED_BY_ID: 4, PHONE: [{ VALUE: '+49 69 5550777' }] },
    });
    expect(added.data.result).toBeGreaterThan(0);
    const response = await lookup('069 5550777').expect(200);
    expect(response.body.match).toMatchObject({
      entityType: 'CONTACT',
      name: 'Fresh Client',
      responsibleExtension: '103',
    });
  });

  it('answers a repeated lookup from the cache, without a portal request', async () => {
    await lookup('+49 151 1234-5678').expect(200);
    const before = await portalRequests(h.sandbox);
    const again = await lookup('0151 12345678').expect(200);
    expect(again.body.match).toMatchObject({ entityType: 'CONTACT', entityId: 1 });
    expect(await portalRequests(h.sandbox)).toBe(before);
  });

  it('records each lookup in bridge_lookup_duration_seconds, by where its answer came from', async () => {
    const before = await recordedLookups(h.http);
    await lookup('+49 30 2222222').expect(200);
    const asked = await recordedLookups(h.http);
    expect(asked.count).toEqual({ ...before.count, portal: before.count.portal + 1 });
    expect(asked.seconds.portal).toBeGreaterThan(before.seconds.portal);
    await lookup('030 2222222').expect(200);
    const cached = await recordedLookups(h.http);
    expect(cached.count).toEqual({ ...asked.count, cache: asked.count.cache + 1 });
  });

  it('accepts the PBX token as the HTTP Basic password', async () => {
    const basic = Buffer.from(`pbx:${PBX_TOKEN}`).toString('base64');
    const response = await h.http
      .get('/v1/lookup')
      .query({ phone: '+4915112345678' })
      .set('Authorization', `Basic ${basic}`)
      .expect(200);
    expect(response.body.match).toMatchObject({ entityId: 1 });
  });

  describe('refuses', () => {
    it.each([
      ['no token', undefined],
      ['a wrong token', 'Bearer not-the-token'],
      ['a wrong Basic password', `Basic ${Buffer.from('pbx:wrong').toString('base64')}`],
    ])('%s with 401', async (_case, authorization) => {
      const before = await portalRequests(h.sandbox);
      const request = h.http.get('/v1/lookup').query({ phone: '+4930777777' });
      if (authorization) void request.set('Authorization', authorization);
      const response = await request;
      expect(response.status).toBe(401);
      expect(await portalRequests(h.sandbox)).toBe(before);
    });

    it.each([
      ['a missing phone', '/v1/lookup', 'phone is required'],
      ['an empty phone', '/v1/lookup?phone=', 'phone is required'],
      ['a phone that is no number', '/v1/lookup?phone=call-me', 'phone is not a phone number'],
      ['a phone too short to be one', '/v1/lookup?phone=%2B49%201', 'phone is not a phone number'],
      ['a malformed escape', '/v1/lookup?phone=%E0%A4%A', 'phone is not a phone number'],
    ])('%s with 400 naming phone', async (_case, path, message) => {
      const response = await h.http.get(path).set('Authorization', `Bearer ${PBX_TOKEN}`);
      expect(response.status).toBe(400);
      expect(response.body.message).toBe(message);
      expect(response.body.errors).toEqual([{ field: 'phone', problems: [message] }]);
    });
  });
});
