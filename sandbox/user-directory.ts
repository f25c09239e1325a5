import { EmployeeSeed } from './seed';

/** The portal's users (employees) and their internal phone numbers. */
export class SandboxUserDirectory {
  private readonly byId = new Map<number, EmployeeSeed>();

  constructor(employees: EmployeeSeed[]) {
    for (const employee of employees) this.byId.set(employee.ID, { ...employee });
  }

  all(): EmployeeSeed[] {
    return [...this.byId.values()].sort((a, b) => a.ID - b.ID);
  }

  get(id: number): EmployeeSeed | undefined {
    return this.byId.get(id);
  }

  activeById(id: number | undefined): EmployeeSeed | undefined {
    const employee = id === undefined ? undefined : this.byId.get(id);
    return employee?.ACTIVE ? employee : undefined;
  }

  activeByInnerNumber(inner: string | undefined): EmployeeSeed | undefined {
    const wanted = inner?.trim();
    if (!wanted) return undefined;
    return this.all().find((employee) => employee.ACTIVE && employee.UF_PHONE_INNER === wanted);
  }

  /** The user record as user.get / user.current answer it. */
  present(employee: EmployeeSeed): Record<string, unknown> {
    return {
      ID: String(employee.ID),
      XML_ID: null,
      ACTIVE: employee.ACTIVE,
      NAME: employee.NAME,
      LAST_NAME: employee.LAST_NAME,
      SECOND_NAME: '',
      EMAIL: employee.EMAIL,
      LAST_LOGIN: null,
      DATE_REGISTER: '2025-01-01T00:00:00+00:00',
      IS_ONLINE: 'N',
      TIME_ZONE: '',
      TIME_ZONE_OFFSET: '0',
      PERSONAL_GENDER: '',
      WORK_POSITION: employee.WORK_POSITION ?? '',
      UF_DEPARTMENT: [1],
      UF_PHONE_INNER: employee.UF_PHONE_INNER ?? null,
      USER_TYPE: 'employee',
    };
  }
}
