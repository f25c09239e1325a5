import {
  applicationTokenOf,
  bodyOf,
  clickOf,
  crmChangeOf,
  dedupeKeyOf,
  HANDLED_EVENTS,
  kindOf,
} from './portal-event';

describe('portal events, pure parts', () => {
  const form = {
    event: 'onexternalcallstart',
    data: {
      USER_ID: '3',
      PHONE_NUMBER: '0151 12345678',
      CALL_ID: 'externalCall.abc',
      CRM_ENTITY_TYPE: 'CONTACT',
      CRM_ENTITY_ID: '7',
      LINE_NUMBER: 'bridge',
      IS_MOBILE: '0',
    },
    ts: '1764000000',
    auth: { application_token: 'secret-app-token', domain: 'portal.example.com' },
  };

  it('reads the event, data and ts, never the auth fields', () => {
    const body = bodyOf(form)!;
    expect(body.event).toBe('ONEXTERNALCALLSTART');
    expect(JSON.stringify(body)).not.toContain('secret-app-token');
    expect(applicationTokenOf(form)).toBe('secret-app-token');
    expect(bodyOf({ data: {} })).toBeUndefined();
    expect(applicationTokenOf({ auth: 'x' })).toBeUndefined();
  });

  it('turns a click into a PortalClick with an E.164 number and the portal time', () => {
    expect(clickOf('sandbox', bodyOf(form)!, 1764000000400, 'DE')).toEqual({
      portalId: 'sandbox',
      kind: 'click',
      portalCallId: 'externalCall.abc',
      userId: 3,
      phoneNumber: '+4915112345678',
      crmEntityType: 'CONTACT',
      crmEntityId: 7,
      lineNumber: 'bridge',
      clickedAt: 1764000000400,
    });
    // Received a minute later (an offline event): the end of the portal's second, not the receipt.
    expect(clickOf('sandbox', bodyOf(form)!, 1764000060000, 'DE')).toMatchObject({
      clickedAt: 1764000000999,
    });
  });

  it("a click's time is its receipt within the portal's whole-second ts", () => {
    const body = bodyOf(form)!;
    const at = (receivedAt: number) =>
      (clickOf('p', body, receivedAt, 'DE') as { clickedAt: number }).clickedAt;
    expect(at(1764000000420)).toBe(1764000000420);
    expect(at(1764000000000)).toBe(1764000000000);
    // Read later (a slow post, an offline event): the end of the portal's second.
    expect(at(1764000060000)).toBe(1764000000999);
    // The portal's clock ahead of the bridge's: its ts.
    expect(at(1763999999000)).toBe(1764000000000);
  });

  it('a callback needs no user; a click without CALL_ID, number or user is an error', () => {
    const callback = {
      event: 'ONEXTERNALCALLBACKSTART',
      data: { PHONE_NUMBER: '+4930123456', CALL_ID: 'c1' },
    };
    expect(clickOf('p', callback, 9)).toMatchObject({
      kind: 'callback',
      clickedAt: 9,
      phoneNumber: '+4930123456',
    });
    expect(
      clickOf('p', { event: 'ONEXTERNALCALLSTART', data: { PHONE_NUMBER: '1', CALL_ID: 'c' } }, 1),
    ).toEqual({
      error: 'data[USER_ID] is missing',
    });
    expect(
      clickOf('p', { event: 'ONEXTERNALCALLSTART', data: { USER_ID: '1', PHONE_NUMBER: '1' } }, 1),
    ).toEqual({
      error: 'data[CALL_ID] is missing',
    });
  });

  it('names the record of a CRM change', () => {
    expect(crmChangeOf({ event: 'ONCRMLEADUPDATE', data: { FIELDS: { ID: '12' } } })).toEqual({
      entityType: 'LEAD',
      entityId: 12,
    });
    expect(crmChangeOf({ event: 'ONCRMDEALADD', data: { FIELDS: { ID: '12' } } })).toBeUndefined();
    expect(crmChangeOf({ event: 'ONCRMCONTACTADD', data: {} })).toBeUndefined();
  });

  it('handles clicks, callbacks and contact/company/lead changes, nothing else', () => {
    expect(HANDLED_EVENTS).toHaveLength(11);
    expect(kindOf('ONCRMCOMPANYDELETE')).toBe('crm');
    expect(kindOf('ONEXTERNALCALLBACKSTART')).toBe('callback');
    expect(kindOf('ONAPPINSTALL')).toBeUndefined();
  });

  it('one post twice has one key, whatever the field order; a click is keyed by its CALL_ID', () => {
    const a = { event: 'ONCRMCONTACTADD', data: { FIELDS: { ID: '1' } }, ts: '1' };
    const b = { ts: '1', data: { FIELDS: { ID: '1' } }, event: 'ONCRMCONTACTADD' };
    expect(dedupeKeyOf(a)).toBe(dedupeKeyOf(b));
    expect(dedupeKeyOf(a)).not.toBe(dedupeKeyOf({ ...a, ts: '2' }));
    const click = bodyOf(form)!;
    expect(dedupeKeyOf(click)).toBe(dedupeKeyOf({ ...click, ts: '1764000001' }));
  });
});
