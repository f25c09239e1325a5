import { PortalRuntime } from '../../src/tenancy/portal-runtime';
import { EmployeeDirectory } from '../../src/crm/employee-directory';
import { EmployeeSeed } from '../../sandbox';
import { eventually, Harness, PBX_TOKEN, startHarness } from '../support/bridge-harness';
import { clearFaults, injectFault } from '../support/sandbox-inspect';
import { seedRecord } from './crm-support';

const ACTIVE = 130;

/** 130 active employees (three pages of user.get) with extensions 1001…, five former ones, two without. */
function employees(): EmployeeSeed[] {
  const employee = (id: number, active: boolean, extension?: string): EmployeeSeed => ({
    ID: id,
    NAME: `Employee`,
    LAST_NAME: `No${id}`,
    EMAIL: `e${id}@sandbox.test`,
    ACTIVE: active,
    UF_PHONE_INNER: extension,
  });
  return [
    ...Array.from({ length: ACTIVE }, (_, i) => employee(i + 1, true, String(1001 + i))),
    ...Array.from({ length: 5 }, (_, i) => employee(ACTIVE + 1 + i, false, String(1001 + ACTIVE + i))),
    employee(ACTIVE + 6, true),
    // Shares an extension with employee 3: the lower user id keeps it.
    employee(ACTIVE + 7, true, '1003'),
  ];
}

/** The employee directory, read from the sandbox portal over HTTP by the running bridge. */
describe('employee directory', () => {
  let h: Harness;
  let directory: EmployeeDirectory;

  beforeAll(async () => {
    h = await startHarness(
      { EMPLOYEE_REFRESH_SEC: '1' },
      {
        seed: {
          employees: employees(),
          contacts: [
            seedRecord(
              1,
              { NAME: 'Paula', LAST_NAME: 'Page' },
              117,
              '2026-01-01T10:00:00+01:00',
              '+49 30 5551170',
            ),
          ],
        },
      },
    );
    directory = h.app.get(PortalRuntime).directory;
    await eventually(async () => (directory.loaded ? true : undefined));
  });
  afterAll(async () => {
    await h.close();
  });
  afterEach(async () => {
    await clearFaults(h.sandbox);
  });

  const userGets = () => h.sandbox.requests().filter((entry) => entry.method === 'user.get');

  it('reads every page of active employees', () => {
    expect(directory.userIdFor('1001')).toBe(1);
    expect(directory.userIdFor('1117')).toBe(117);
    expect(directory.userIdFor(' 1130 ')).toBe(130);
    expect(directory.extensionOf(117)).toBe('1117');
    expect(directory.extensionOf(130)).toBe('1130');
    // Former employees and employees without an internal number are not in it.
    expect(directory.userIdFor(String(1001 + ACTIVE))).toBeUndefined();
    expect(directory.extensionOf(ACTIVE + 1)).toBeUndefined();
    expect(directory.extensionOf(ACTIVE + 6)).toBeUndefined();
    expect(directory.userIdFor('1003')).toBe(3);
    expect(directory.extensionOf(ACTIVE + 7)).toBe('1003');
    expect(userGets().length).toBeGreaterThanOrEqual(3);
  });

  it("gives lookups the responsible employee's internal number from a later page", async () => {
    const response = await h.http
      .get('/v1/lookup')
      .query({ phone: '030 5551170' })
      .set('Authorization', `Bearer ${PBX_TOKEN}`)
      .expect(200);
    expect(response.body.match).toMatchObject({
      name: 'Paula Page',
      responsibleUserId: 117,
      responsibleExtension: '1117',
    });
  });

  it('picks up changes on the portal at the next refresh', async () => {
    h.sandbox.state.employees.get(117)!.UF_PHONE_INNER = '2117';
    await eventually(async () => (directory.userIdFor('2117') === 117 ? true : undefined));
    expect(directory.userIdFor('1117')).toBeUndefined();
    expect(directory.extensionOf(117)).toBe('2117');
  });

  it('keeps the last good copy while refreshes fail, and takes the next good one', async () => {
    await eventually(async () => (directory.userIdFor('2117') === 117 ? true : undefined));
    await injectFault(h.sandbox, {
      kind: 'http',
      status: 500,
      error: 'INTERNAL_SERVER_ERROR',
      method: 'user.get',
    });
    const failedBefore = userGets().filter((entry) => entry.status === 500).length;
    h.sandbox.state.employees.get(117)!.UF_PHONE_INNER = '3117';
    // Two refreshes fail while the change waits on the portal.
    await eventually(async () =>
      userGets().filter((entry) => entry.status === 500).length >= failedBefore + 2 ? true : undefined,
    );
    expect(directory.loaded).toBe(true);
    expect(directory.userIdFor('2117')).toBe(117);
    expect(directory.userIdFor('3117')).toBeUndefined();
    expect(directory.userIdFor('1001')).toBe(1);

    await clearFaults(h.sandbox);
    await eventually(async () => (directory.userIdFor('3117') === 117 ? true : undefined));
  });
});
