import { PortalRuntime } from '../../src/tenancy/portal-runtime';
import request from 'supertest';
import { ADMIN_TOKEN, eventually, Harness, PBX_TOKEN, startHarness } from '../support/bridge-harness';

const APP_TOKEN = 'outbound-hook-code-5d1e';

/** A form-encoded portal post, as the portal sends it. */
function post(h: Harness, fields: Record<string, string>) {
  return h.http.post('/v1/portal/events').type('form').send(new URLSearchParams(fields).toString());
}

interface EventView {
  id: number;
  event: string;
  state: string;
  attempts: number;
  lastError: string | null;
  data: Record<string, unknown>;
}

async function listEvents(h: Harness): Promise<EventView[]> {
  const response = await h.http
    .get('/v1/admin/portal-events')
    .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
    .expect(200);
  return (response.body as { events: EventView[] }).events;
}

/** Waits until the bridge has processed the portal's ONCRMCONTACTADD for `contactId` (the cache is told). */
async function contactAddProcessed(h: Harness, contactId: number): Promise<void> {
  await eventually(async () => {
    const events = await listEvents(h);
    const added = events.find(
      (event) =>
        event.event === 'ONCRMCONTACTADD' &&
        String((event.data.FIELDS as { ID?: unknown } | undefined)?.ID) === String(contactId),
    );
    return added && added.state !== 'pending' ? true : undefined;
  });
}

function metric(text: string, event: string, outcome: string): number {
  const line = text
    .split('\n')
    .find((row) => row.startsWith(`bridge_portal_events_total{event="${event}",outcome="${outcome}"}`));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

/** POST /v1/portal/events in webhook mode (B24_APPLICATION_TOKEN), over real HTTP on a real store. */
describe('portal events (webhook mode)', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({ B24_APPLICATION_TOKEN: APP_TOKEN });
  });
  afterAll(async () => {
    await h.close();
  });

  const click = (callId: string, token = APP_TOKEN) => ({
    event: 'ONEXTERNALCALLSTART',
    'data[USER_ID]': '1',
    'data[PHONE_NUMBER]': '+49 151 1234-5678',
    'data[CALL_ID]': callId,
    'data[CRM_ENTITY_TYPE]': 'CONTACT',
    'data[CRM_ENTITY_ID]': '1',
    'data[LINE_NUMBER]': 'bridge',
    ts: String(Math.floor(Date.now() / 1000)),
    'auth[domain]': 'portal.example.com',
    'auth[member_id]': 'member',
    'auth[application_token]': token,
  });

  it('refuses a forged or missing application token with 401, naming nothing secret, and stores nothing', async () => {
    const forged = await post(h, click('externalCall.forged', 'forged-token')).expect(401);
    expect(JSON.stringify(forged.body)).not.toContain('forged-token');
    expect(JSON.stringify(forged.body)).not.toContain(APP_TOKEN);
    const { 'auth[application_token]': _omitted, ...withoutToken } = click('externalCall.none');
    void _omitted;
    await post(h, withoutToken).expect(401);
    expect((await listEvents(h)).filter((event) => /forged|none/.test(String(event.data.CALL_ID)))).toEqual(
      [],
    );
  });

  it('refuses bodies that are not forms or too large', async () => {
    await h.http.post('/v1/portal/events').send({ event: 'ONEXTERNALCALLSTART' }).expect(415);
    await post(h, { ...click('externalCall.big'), 'data[TEXT]': 'x'.repeat(70 * 1024) }).expect(413);
  });

  it('stores a click, answers 200, stores a repeated post once, and settles it once (no subscriber: counted)', async () => {
    const fields = click('externalCall.one');
    expect((await post(h, fields).expect(200)).body).toEqual({ event: 'ONEXTERNALCALLSTART', stored: true });
    expect((await post(h, fields).expect(200)).body).toMatchObject({ stored: true, duplicate: true });
    const settled = await eventually(async () => {
      const events = (await listEvents(h)).filter((event) => event.data.CALL_ID === 'externalCall.one');
      return events.length === 1 && events[0].state !== 'pending' ? events : undefined;
    });
    expect(settled[0]).toMatchObject({
      event: 'ONEXTERNALCALLSTART',
      state: 'ignored',
      attempts: 1,
      lastError: 'click-to-call is off (no DIAL_MODE)',
    });
    expect(JSON.stringify(settled)).not.toContain(APP_TOKEN);
    const { text } = await h.http.get('/metrics');
    expect(metric(text, 'ONEXTERNALCALLSTART', 'no_subscriber')).toBe(1);
    expect(metric(text, 'ONEXTERNALCALLSTART', 'duplicate')).toBe(1);
  });

  it('answers an unknown event 200 without storing it, and counts it', async () => {
    const before = (await listEvents(h)).length;
    await post(h, { event: 'ONTASKADD', 'data[FIELDS][ID]': '5', 'auth[application_token]': APP_TOKEN })
      .expect(200)
      .expect({ event: 'ONTASKADD', stored: false });
    expect((await listEvents(h)).length).toBe(before);
    expect(metric((await h.http.get('/metrics')).text, 'other', 'unknown')).toBe(1);
  });

  it('a new contact is found by the next lookup of its number once ONCRMCONTACTADD is processed, though "no match" was cached', async () => {
    const phone = '+49 30 5550777';
    const lookup = () =>
      request(h.url).get('/v1/lookup').query({ phone }).set('Authorization', `Bearer ${PBX_TOKEN}`);
    expect((await lookup().expect(200)).body.match).toBeNull();
    // Cached now: the record appears on the portal, and the cache would still answer "no match".
    const contact = h.sandbox.state.crm.add(
      'CONTACT',
      { NAME: 'Neu', LAST_NAME: 'Kunde', PHONE: [{ VALUE: phone, VALUE_TYPE: 'WORK' }] },
      1,
      h.sandbox.state.now(),
    );
    expect((await lookup().expect(200)).body.match).toBeNull();
    await post(h, {
      event: 'ONCRMCONTACTADD',
      'data[FIELDS][ID]': String(contact.ID),
      ts: String(Math.floor(Date.now() / 1000)),
      'auth[application_token]': APP_TOKEN,
    }).expect(200);
    // The next lookup once the event is processed: long before the "no match" could have expired.
    await contactAddProcessed(h, contact.ID);
    const found = (await lookup().expect(200)).body;
    expect(found.match).toMatchObject({ entityType: 'CONTACT', entityId: contact.ID });
  });

  it('the sandbox portal: a click registers the call there and posts ONEXTERNALCALLSTART to the outbound webhook', async () => {
    const control = request(h.sandbox.url);
    await control
      .post('/_sandbox/events/outbound')
      .send({ url: `${h.url}/v1/portal/events`, applicationToken: APP_TOKEN })
      .expect(200);
    const { body: click } = await control
      .post('/_sandbox/click')
      .send({ phone: '+49 151 1234-5678', userId: 1, lineNumber: 'bridge' })
      .expect(200);
    expect(click.CALL_ID).toEqual(expect.any(String));
    const { body: calls } = await control
      .get('/_sandbox/calls')
      .query({ CALL_ID: click.CALL_ID })
      .expect(200);
    expect(calls).toHaveLength(1);
    const stored = await eventually(async () => {
      const events = (await listEvents(h)).filter((event) => event.data.CALL_ID === click.CALL_ID);
      return events[0]?.state === 'ignored' ? events : undefined;
    });
    expect(stored).toHaveLength(1);
    expect(stored[0].data).toMatchObject({ USER_ID: '1', LINE_NUMBER: 'bridge', IS_MOBILE: '0' });
    const { body: events } = await control.get('/_sandbox/events').expect(200);
    expect(events.posts.at(-1)).toMatchObject({ event: 'ONEXTERNALCALLSTART', status: 200 });
    expect(JSON.stringify(events)).not.toContain(APP_TOKEN);
  });

  it('the sandbox portal: a contact added there (ONCRMCONTACTADD) is found by the next lookup once the event is processed', async () => {
    const control = request(h.sandbox.url);
    await control
      .post('/_sandbox/events/outbound')
      .send({ url: `${h.url}/v1/portal/events`, applicationToken: APP_TOKEN, events: ['ONCRMCONTACTADD'] })
      .expect(200);
    const phone = '+49 30 5550888';
    const lookup = () =>
      request(h.url).get('/v1/lookup').query({ phone }).set('Authorization', `Bearer ${PBX_TOKEN}`);
    expect((await lookup().expect(200)).body.match).toBeNull();
    const { body: added } = await control
      .post('/_sandbox/crm/contact')
      .send({ fields: { NAME: 'Lena', PHONE: [{ VALUE: phone, VALUE_TYPE: 'WORK' }] } })
      .expect(200);
    expect(added.event).toBe('ONCRMCONTACTADD');
    await contactAddProcessed(h, added.ID);
    const found = (await lookup().expect(200)).body;
    expect(found.match).toMatchObject({ entityType: 'CONTACT', entityId: added.ID });
  });

  // Last: the subscriber stays on the bus. It stands for the dialer (DIAL_MODE) that is not on this branch;
  // what is asserted is the store's state and the metric, not what the subscriber saw.
  it('with a subscriber: a click is published, retried after a rejection (lastError kept) and settled once', async () => {
    let failNext = true;
    h.app.get(PortalRuntime).bus.subscribe('test-dialer', async (click) => {
      if (click.portalCallId === 'externalCall.retry' && failNext) {
        failNext = false;
        throw new Error('PBX unreachable');
      }
    });
    await post(h, click('externalCall.retry')).expect(200);
    const settled = await eventually(async () => {
      const [event] = (await listEvents(h)).filter((item) => item.data.CALL_ID === 'externalCall.retry');
      return event?.state === 'processed' ? event : undefined;
    });
    expect(settled).toMatchObject({ attempts: 2, lastError: 'test-dialer: PBX unreachable' });
    const { text } = await h.http.get('/metrics');
    expect(metric(text, 'ONEXTERNALCALLSTART', 'retried')).toBe(1);
    expect(metric(text, 'ONEXTERNALCALLSTART', 'published')).toBe(1);
  });
});
