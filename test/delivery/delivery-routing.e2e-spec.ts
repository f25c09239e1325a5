import { defaultSeed } from '../../sandbox';
import { eventually, Harness, PBX_TOKEN, startHarness } from '../support/bridge-harness';
import { callsByExternalId } from '../support/sandbox-inspect';

/**
 * Delivery with the CRM module: B24_BIND_CRM_ENTITY binds a register to the client the bridge's lookup
 * found. To tell the bridge's choice from the portal's own, the lookup is cached first (contact 42, the
 * most recently changed of two sharing the number), then contact 42 is deleted on the portal, which alone
 * would now pick contact 41.
 */
describe('delivery routed by the CRM module', () => {
  const shared = '+49 40 5550 7777';
  const seed = defaultSeed();
  const contacts = [
    ...seed.contacts,
    {
      ID: 41,
      NAME: 'Old',
      LAST_NAME: 'Entry',
      ASSIGNED_BY_ID: 2,
      DATE_MODIFY: '2025-01-01T10:00:00+01:00',
      PHONE: [{ VALUE: shared, VALUE_TYPE: 'WORK' }],
    },
    {
      ID: 42,
      NAME: 'New',
      LAST_NAME: 'Entry',
      ASSIGNED_BY_ID: 3,
      DATE_MODIFY: '2026-11-01T10:00:00+01:00',
      PHONE: [{ VALUE: shared, VALUE_TYPE: 'WORK' }],
    },
  ];

  async function deliverOneCall(h: Harness, callId: string) {
    const lookup = await h.http
      .get('/v1/lookup')
      .query({ phone: shared })
      .set('Authorization', `Bearer ${PBX_TOKEN}`);
    expect(lookup.body.match).toMatchObject({ entityType: 'CONTACT', entityId: 42 });
    const deleted = await fetch(`${h.sandbox.webhookUrl}crm.contact.delete`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ id: 42 }),
    });
    expect(deleted.status).toBe(200);
    await h.http
      .post('/v1/calls/events')
      .set('Authorization', `Bearer ${PBX_TOKEN}`)
      .send([
        {
          event: 'call.started',
          callId,
          direction: 'inbound',
          phoneNumber: shared,
          extension: '102',
          at: '2026-11-22T10:00:00+01:00',
        },
        { event: 'call.ended', callId, at: '2026-11-22T10:01:00+01:00', durationSec: 60, status: 'answered' },
      ])
      .expect(202);
    return eventually(async () => {
      const [call] = await callsByExternalId(h.sandbox, callId);
      return call?.finished ? call : undefined;
    });
  }

  it('binds the call to the client the lookup chose when B24_BIND_CRM_ENTITY=1', async () => {
    const h = await startHarness({ B24_BIND_CRM_ENTITY: '1' }, { seed: { contacts } });
    try {
      const call = await deliverOneCall(h, 'bind-on');
      expect(call).toMatchObject({ CRM_ENTITY_TYPE: 'CONTACT', CRM_ENTITY_ID: 42, USER_ID: 3 });
    } finally {
      await h.close();
    }
  });

  it('leaves the choice to the portal by default', async () => {
    const h = await startHarness({}, { seed: { contacts } });
    try {
      const call = await deliverOneCall(h, 'bind-off');
      expect(call).toMatchObject({ CRM_ENTITY_TYPE: 'CONTACT', CRM_ENTITY_ID: 41 });
    } finally {
      await h.close();
    }
  });
});
