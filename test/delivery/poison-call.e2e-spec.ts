import { clearFaults, injectFault } from '../support/sandbox-inspect';
import { ended, eventually, Harness, started, startHarness } from '../support/bridge-harness';
import { callStatus, postEvents } from './delivery-support';

/**
 * Item 11: a request refused as a whole for one call's text (a firewall's 403 page) is split until that
 * call goes alone; it is parked after DELIVERY_MAX_ATTEMPTS refusals with the words, the rest go on. An
 * outage (5xx for every request) parks nothing.
 */
describe('poison calls', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({ DELIVERY_MAX_ATTEMPTS: '3', DELIVERY_MAX_BACKOFF_SEC: '1' });
  });
  afterAll(async () => {
    await h.close();
  });
  afterEach(async () => {
    await clearFaults(h.sandbox);
  });

  it('finds the call a firewall refuses, parks it after 3 refusals, and delivers the others', async () => {
    const stamp = Date.now();
    const poison = `poison-${stamp}`;
    const others = Array.from({ length: 7 }, (_, i) => `clean-${stamp}-${i}`);
    await injectFault(h.sandbox, { kind: 'refuse', text: poison, status: 403 });
    const ids = [...others.slice(0, 3), poison, ...others.slice(3)];
    await postEvents(
      h,
      ids.flatMap((callId, i) => [started(callId, { phoneNumber: `+4915140000${i}` }), ended(callId)]),
    );

    const parked = await eventually(async () => {
      const status = await callStatus(h, poison);
      return status.state === 'failed' ? status : undefined;
    }, 40000);
    expect(parked.lastError).toContain('register: HTTP 403');
    expect(parked.lastError).toContain('refused 3 times');

    const delivered = await eventually(async () => {
      const calls = h.sandbox.calls().filter((call) => others.includes(call.EXTERNAL_CALL_ID));
      return calls.length === others.length && calls.every((call) => call.finished) ? calls : undefined;
    }, 40000);
    expect(delivered).toHaveLength(others.length);
    expect(h.sandbox.calls().filter((call) => call.EXTERNAL_CALL_ID === poison)).toEqual([]);
    // The firewall's refusal of one call is no reason to stop delivering the portal.
    const ready = await h.http.get('/health/ready');
    expect(ready.body.details.portal.paused).toBe(false);
    // Alone, the poison call was refused exactly DELIVERY_MAX_ATTEMPTS times.
    const refusedAlone = h.sandbox
      .requests()
      .filter((request) => request.status === 403 && request.commands === 1);
    expect(refusedAlone).toHaveLength(3);
  });

  it('an outage longer than DELIVERY_MAX_ATTEMPTS retries parks nothing', async () => {
    const callId = `outage-${Date.now()}`;
    await injectFault(h.sandbox, {
      kind: 'http',
      status: 500,
      error: 'INTERNAL_SERVER_ERROR',
      method: 'batch',
      times: 6,
    });
    await postEvents(h, [started(callId), ended(callId)]);
    await eventually(
      async () => ((await callStatus(h, callId)).state === 'finished' ? true : undefined),
      40000,
    );
    const [call] = h.sandbox.calls().filter((candidate) => candidate.EXTERNAL_CALL_ID === callId);
    expect(call.finished).not.toBeNull();
  });
});
