import { SandboxPortal, SandboxTenant } from '../../sandbox';
import { CallStore } from '../../src/store/call-store';
import { ADMIN_TOKEN, callBodies, eventually } from '../support/bridge-harness';
import { install, MultiBridge, pbxTokenFor, startMultiBridge, tempDir } from '../support/multi-harness';

const METRICS_TOKEN = 'metrics-test-token-3e8d61';
const WAITING = 600;

/**
 * Issue 26 finding 15: with many portals, readiness costs the same whatever the queues hold. An anonymous
 * probe never scans the waiting calls and names no portal; a caller with ADMIN_TOKEN or METRICS_TOKEN gets
 * the per-portal details, from queue figures read in the background at most every few seconds, however
 * many probes come. Through HTTP, on the real store; the scans are counted on the store itself.
 */
describe('many-portal readiness: O(1) per probe, details for the operator only', () => {
  let sandbox: SandboxPortal;
  let tenant: SandboxTenant;
  let bridge: MultiBridge;
  let temp: ReturnType<typeof tempDir>;

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    tenant = sandbox.addPortal({ name: 'queued' });
    temp = tempDir();
    bridge = await startMultiBridge(sandbox, temp.dir, { METRICS_TOKEN });
    expect(await install(tenant, bridge.url)).toBe(200);
    const token = await pbxTokenFor(bridge, tenant.memberId);
    // The portal is down: every call posted waits in the queue.
    tenant.injectFault({ kind: 'outage' });
    for (const body of callBodies('waiting', WAITING)) {
      const response = await bridge.http
        .post('/v1/calls/events')
        .set('Authorization', `Bearer ${token}`)
        .send(body);
      expect(response.status).toBe(202);
    }
  });

  afterAll(async () => {
    await bridge?.close();
    await sandbox?.close();
    temp?.remove();
  });

  it('answers anonymous probes without scanning the queues or naming a portal', async () => {
    const store = bridge.app.get(CallStore);
    const scans = jest.spyOn(store, 'deepestQueues');
    const stats = jest.spyOn(store, 'queueStats');
    try {
      for (let round = 0; round < 6; round++) {
        const answers = await Promise.all(Array.from({ length: 10 }, () => bridge.http.get('/health/ready')));
        for (const answer of answers) {
          expect(answer.status).toBe(200);
          expect(answer.body.details.store.status).toBe('up');
          expect(answer.body.details.portals).toEqual({ status: 'up', mode: 'multi', portals: 1 });
          expect(answer.text).not.toContain(tenant.memberId);
        }
      }
      // A token that is neither ADMIN_TOKEN nor METRICS_TOKEN is anonymous.
      const forged = await bridge.http
        .get('/health/ready')
        .set('Authorization', 'Bearer not-the-admin-token');
      expect(forged.body.details.portals).toEqual({ status: 'up', mode: 'multi', portals: 1 });
      expect(scans).not.toHaveBeenCalled();
      expect(stats).not.toHaveBeenCalled();
    } finally {
      scans.mockRestore();
      stats.mockRestore();
    }
  });

  it('gives ADMIN_TOKEN and METRICS_TOKEN the details, scanning at most once per few seconds', async () => {
    const store = bridge.app.get(CallStore);
    const scans = jest.spyOn(store, 'deepestQueues');
    try {
      const startedAt = Date.now();
      for (let round = 0; round < 20; round++) {
        const token = round % 2 ? ADMIN_TOKEN : METRICS_TOKEN;
        const answers = await Promise.all(
          Array.from({ length: 10 }, () =>
            bridge.http.get('/health/ready').set('Authorization', `Bearer ${token}`),
          ),
        );
        for (const answer of answers) {
          expect(answer.status).toBe(200);
          const portals = answer.body.details.portals;
          expect(portals).toMatchObject({ mode: 'multi', portals: 1, queueDepth: WAITING });
          expect(portals.deepestQueues).toEqual([
            expect.objectContaining({ portalId: tenant.memberId, queueDepth: WAITING }),
          ]);
        }
        // Load shaping, not a wait: the probes span a second or more.
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const elapsedSec = (Date.now() - startedAt) / 1000;
      // 200 probes: the first read, then at most one more per 5 s of probing (the allowance grows with the
      // time the probes took, so a loaded machine cannot fail it).
      expect(scans.mock.calls.length).toBeGreaterThanOrEqual(1);
      expect(scans.mock.calls.length).toBeLessThanOrEqual(2 + Math.floor(elapsedSec / 5));
    } finally {
      scans.mockRestore();
    }
  });

  it('refreshes the figures in the background: a change shows on a later probe', async () => {
    tenant.clearFaults();
    const ready = () => bridge.http.get('/health/ready').set('Authorization', `Bearer ${ADMIN_TOKEN}`);
    const drained = await eventually(async () => {
      const answer = await ready();
      return answer.body.details.portals.queueDepth === 0 ? answer.body.details.portals : undefined;
    }, 60_000);
    expect(drained.deepestQueues).toEqual([]);
  });
});
