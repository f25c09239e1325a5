import { EmployeeDirectory } from '../../src/crm/employee-directory';
import { PortalRuntime } from '../../src/tenancy/portal-runtime';
import { ended, eventually, Harness, PBX_TOKEN, startHarness, started } from '../support/bridge-harness';

const CALLS = 100;

/**
 * The bridge's own start-up requests wait for the calls: a backlog posted as the bridge starts goes out
 * first, the employee directory is read once the budget is idle, and a register names its employee by
 * internal number meanwhile (USER_PHONE_INNER: the portal finds the employee).
 */
describe('start-up requests behind the first burst', () => {
  let h: Harness;
  let directory: EmployeeDirectory;

  beforeAll(async () => {
    h = await startHarness({ B24_RATE_BURST: '10' }, { rateBurst: 10 });
    directory = h.app.get(PortalRuntime).directory;
    const events = Array.from({ length: CALLS }, (_, n) => [
      started(`startup-${n}`, { phoneNumber: `+4930${String(4000000 + n)}` }),
      ended(`startup-${n}`),
    ]).flat();
    await h.http
      .post('/v1/calls/events')
      .set('Authorization', `Bearer ${PBX_TOKEN}`)
      .send(events)
      .expect(202);
  });
  afterAll(async () => {
    await h.close();
  });

  const batchCommands = () =>
    h.sandbox
      .requests()
      .filter((entry) => entry.method === 'batch' && entry.status === 200)
      .reduce((sum, entry) => sum + entry.commands, 0);

  it('delivers the backlog before it reads the employee directory, and reads it after', async () => {
    await eventually(async () => (batchCommands() >= CALLS * 2 ? true : undefined));
    await eventually(async () => (directory.loaded ? true : undefined));
    const log = h.sandbox.requests();
    const lastBatch = Math.max(...log.filter((entry) => entry.method === 'batch').map((entry) => entry.at));
    const userGets = log.filter((entry) => entry.method === 'user.get');
    expect(userGets.length).toBeGreaterThan(0);
    expect(userGets.every((entry) => entry.at > lastBatch)).toBe(true);
    expect(log.filter((entry) => entry.status === 503)).toHaveLength(0);
  });

  it("gave every call to the employee of the PBX's internal number, without the directory", () => {
    const calls = h.sandbox.state.calls.all();
    expect(calls).toHaveLength(CALLS);
    const employee101 = h.sandbox.state.employees.activeByInnerNumber('101')!.ID;
    expect(calls.every((call) => call.USER_ID === employee101 && call.finished !== null)).toBe(true);
  });
});
