import { PortalRuntime } from '../../src/tenancy/portal-runtime';
import { CrmLookupService } from '../../src/crm/crm-lookup.service';
import { PortalError } from '../../src/portal/portal-error';
import { Harness, PBX_TOKEN, startHarness } from '../support/bridge-harness';
import { clearFaults, injectFault } from '../support/sandbox-inspect';
import { portalRequests } from './crm-support';

/** `bindingFor`, which delivery uses with B24_BIND_CRM_ENTITY to bind a registered call to its client. */
describe('binding calls to the CRM client', () => {
  let h: Harness;
  let lookups: CrmLookupService;

  beforeAll(async () => {
    h = await startHarness({ B24_BIND_CRM_ENTITY: '1' });
    lookups = h.app.get(PortalRuntime).lookups;
  });
  afterAll(async () => {
    await h.close();
  });
  afterEach(async () => {
    await clearFaults(h.sandbox);
  });

  it('names the client the lookup finds, and nothing for an unknown number', async () => {
    await expect(lookups.bindingFor('+4915112345678')).resolves.toEqual({
      CRM_ENTITY_TYPE: 'CONTACT',
      CRM_ENTITY_ID: 1,
    });
    await expect(lookups.bindingFor('+498912345600')).resolves.toEqual({
      CRM_ENTITY_TYPE: 'COMPANY',
      CRM_ENTITY_ID: 1,
    });
    await expect(lookups.bindingFor('+49301234000')).resolves.toBeUndefined();
  });

  it('lets many numbers waiting at once share one portal request', async () => {
    const batchesBefore = h.sandbox.requests().filter((entry) => entry.method === 'batch').length;
    const numbers = Array.from({ length: 10 }, (_, n) => `+4940${String(5550100 + n)}`);
    const bindings = await Promise.all(numbers.map((phone) => lookups.bindingFor(phone)));
    // None of the ten numbers is known; then two bindings of lead 2's number share one request.
    expect(bindings.filter(Boolean)).toEqual([]);
    const [withLead] = await Promise.all([
      lookups.bindingFor('+49405550199'),
      lookups.bindingFor('+49405550199'),
    ]);
    expect(withLead).toEqual({ CRM_ENTITY_TYPE: 'LEAD', CRM_ENTITY_ID: 2 });
    const batches = h.sandbox.requests().filter((entry) => entry.method === 'batch');
    expect(batches.slice(batchesBefore).map((entry) => entry.commands)).toEqual([40, 4]);
  });

  it('uses the answer a lookup cached', async () => {
    await h.http
      .get('/v1/lookup')
      .query({ phone: '+44 20 7946 0958' })
      .set('Authorization', `Bearer ${PBX_TOKEN}`)
      .expect(200);
    const before = await portalRequests(h.sandbox);
    await expect(lookups.bindingFor('+442079460958')).resolves.toEqual({
      CRM_ENTITY_TYPE: 'COMPANY',
      CRM_ENTITY_ID: 2,
    });
    expect(await portalRequests(h.sandbox)).toBe(before);
  });

  it('rejects with a retryable PortalError while the portal is down, so delivery tries again later', async () => {
    await injectFault(h.sandbox, { kind: 'outage' });
    const failure = await lookups.bindingFor('+14155550100').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(PortalError);
    expect((failure as PortalError).retryable).toBe(true);
  });

  it('names nothing when the portal refuses the search for good, so the call is registered unbound', async () => {
    await injectFault(h.sandbox, {
      kind: 'http',
      status: 403,
      error: 'ACCESS_DENIED',
      method: 'crm.duplicate.findbycomm',
      times: 1,
    });
    await expect(lookups.bindingFor('+493098765432')).resolves.toBeUndefined();
  });
});

describe('binding calls with B24_BIND_CRM_ENTITY off (the default)', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  it('names no client and asks the portal nothing', async () => {
    const before = await portalRequests(h.sandbox);
    await expect(h.app.get(PortalRuntime).lookups.bindingFor('+4915112345678')).resolves.toBeUndefined();
    expect(await portalRequests(h.sandbox)).toBe(before);
  });
});
