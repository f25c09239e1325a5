import { MethodContext } from '../method-registry';
import { PortalState } from '../portal-state';
import { defaultSeed } from '../seed';
import { SandboxPortalError } from '../sandbox-portal-error';
import { eventMethods } from './events';
import { register } from './telephony';

/** The sandbox's rules for lines (as on real portals), method by method, without HTTP. */
function portal(): { state: PortalState; oauth: MethodContext; webhook: MethodContext } {
  const seed = defaultSeed();
  const state = new PortalState({
    seed,
    rateLimitRps: 2,
    rateBurst: 50,
    accessTokenTtlSec: 3600,
    expiredTokenError: 'expired_token',
    requestLogLimit: 100,
    commandMs: 0,
    operatingWindowSec: 600,
    operatingLimitSec: 480,
  });
  const userId = seed.employees[0].ID;
  const now = Date.parse('2026-12-03T10:00:00Z');
  return {
    state,
    oauth: { state, now, caller: { kind: 'oauth', userId, scopes: ['telephony', 'crm'], app: seed.apps[0] } },
    webhook: { state, now, caller: { kind: 'webhook', userId, scopes: ['telephony', 'crm'] } },
  };
}

const method = (name: string) => eventMethods.find((item) => item.name === name)!.handler;
const add = method('telephony.externalLine.add');
const update = method('telephony.externalLine.update');
const get = method('telephony.externalLine.get');
const remove = method('telephony.externalLine.delete');

const refusal = (run: () => unknown): SandboxPortalError => {
  try {
    run();
  } catch (error) {
    return error as SandboxPortalError;
  }
  throw new Error('expected a refusal');
};

describe('sandbox lines (telephony.externalLine.*)', () => {
  it('work with an application (OAuth) only: a webhook is refused, as on the real portal', () => {
    const { webhook } = portal();
    for (const run of [add, update, get, remove]) {
      const error = refusal(() => run({ NUMBER: '+4930123456', NAME: 'Berlin' }, webhook));
      expect(error.code).toBe('INVALID_REQUEST');
      expect(error.description).toMatch(/OAuth/);
    }
  });

  it('add of a number the application has answers its line and makes no second one', () => {
    const { oauth } = portal();
    const first = add({ NUMBER: '+4930123456', NAME: 'Berlin' }, oauth).result;
    const again = add({ NUMBER: '+4930123456', NAME: 'Other name' }, oauth).result;
    expect(again).toEqual(first);
    expect(get({}, oauth).result).toEqual([{ NUMBER: '+4930123456', NAME: 'Berlin', CRM_AUTO_CREATE: 'Y' }]);
  });

  it('update takes NUMBER and NAME or CRM_AUTO_CREATE, else ERROR_CORE', () => {
    const { oauth } = portal();
    add({ NUMBER: 'trunk-2' }, oauth);
    expect(refusal(() => update({ NUMBER: 'trunk-2' }, oauth)).code).toBe('ERROR_CORE');
    expect(refusal(() => update({ NUMBER: 'nope', NAME: 'x' }, oauth)).code).toBe('ERROR_CORE');
    update({ NUMBER: 'trunk-2', NAME: 'Second trunk', CRM_AUTO_CREATE: 'N' }, oauth);
    expect(get({}, oauth).result).toEqual([
      { NUMBER: 'trunk-2', NAME: 'Second trunk', CRM_AUTO_CREATE: 'N' },
    ]);
    expect(remove({ NUMBER: 'trunk-2' }, oauth).result).toBe(true);
    expect(get({}, oauth).result).toEqual([]);
  });
});

describe('sandbox register and lines', () => {
  const params = (extra: Record<string, string>) => ({
    USER_ID: '1',
    PHONE_NUMBER: '+4915112345678',
    TYPE: '2',
    CALL_START_DATE: '2026-12-03T11:00:00+01:00',
    EXTERNAL_CALL_ID: `pbx-${Math.random()}`,
    ...extra,
  });

  it('keeps LINE_NUMBER and CRM_SOURCE; the created lead has that SOURCE_ID', () => {
    const { state, webhook } = portal();
    const answer = register(
      params({
        CRM_CREATE: '1',
        PHONE_NUMBER: '+4915177777777',
        LINE_NUMBER: '+4930123456',
        CRM_SOURCE: 'WEB',
      }),
      webhook,
    ).result as { CALL_ID: string; CRM_CREATED_LEAD: number };
    const call = state.calls.get(answer.CALL_ID)!;
    expect(call.LINE_NUMBER).toBe('+4930123456');
    expect(call.CRM_SOURCE).toBe('WEB');
    const lead = state.crm.all('LEAD').find((record) => record.ID === answer.CRM_CREATED_LEAD)!;
    expect(lead.fields.SOURCE_ID).toBe('WEB');
  });

  it('CRM_CREATE=0 creates no lead, but still binds a client the portal knows', () => {
    const { state, webhook } = portal();
    const leads = state.crm.all('LEAD').length;
    const unknown = register(params({ CRM_CREATE: '0', PHONE_NUMBER: '+4915199999999' }), webhook)
      .result as Record<string, unknown>;
    expect(unknown.CRM_CREATED_LEAD).toBeNull();
    expect(state.crm.all('LEAD')).toHaveLength(leads);
    const contact = state.crm.add(
      'CONTACT',
      { NAME: 'Known', PHONE: [{ VALUE: '+4915188888888', VALUE_TYPE: 'WORK' }] },
      1,
      Date.now(),
    );
    const known = register(params({ CRM_CREATE: '0', PHONE_NUMBER: '+4915188888888' }), webhook)
      .result as Record<string, unknown>;
    expect(known).toMatchObject({
      CRM_ENTITY_TYPE: 'CONTACT',
      CRM_ENTITY_ID: contact.ID,
      CRM_CREATED_LEAD: null,
    });
  });
});
