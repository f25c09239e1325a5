/** The data a sandbox portal starts with; tests override any part through `SandboxOptions.seed`. */

export interface EmployeeSeed {
  ID: number;
  NAME: string;
  LAST_NAME: string;
  EMAIL: string;
  ACTIVE: boolean;
  /** The employee's internal phone number (extension), as PBXs know them. */
  UF_PHONE_INNER?: string;
  WORK_POSITION?: string;
  ADMIN?: boolean;
}

export interface PhoneSeed {
  VALUE: string;
  VALUE_TYPE: string;
}

/** A contact, company, lead or deal: its fields as the portal names them. */
export interface CrmSeedRecord {
  ID: number;
  ASSIGNED_BY_ID: number;
  /** ISO 8601 with offset. */
  DATE_MODIFY: string;
  PHONE?: PhoneSeed[];
  [field: string]: unknown;
}

export interface WebhookSeed {
  userId: number;
  code: string;
  /** Permission areas: crm, task, calendar, disk, user, telephony, department, log, entity. */
  scopes: string[];
}

export interface OAuthAppSeed {
  id: number;
  /** The application code (unique on the portal). */
  code: string;
  clientId: string;
  clientSecret: string;
  scopes: string[];
  /** Sent with every event and install post, so the application can tell real posts from forged ones. */
  applicationToken: string;
}

export interface SandboxSeed {
  employees: EmployeeSeed[];
  contacts: CrmSeedRecord[];
  companies: CrmSeedRecord[];
  leads: CrmSeedRecord[];
  deals: CrmSeedRecord[];
  webhooks: WebhookSeed[];
  apps: OAuthAppSeed[];
  memberId: string;
}

export const WEBHOOK_SCOPES = [
  'crm',
  'task',
  'calendar',
  'disk',
  'user',
  'telephony',
  'department',
  'log',
  'entity',
];
export const OAUTH_SCOPES = ['crm', 'calendar', 'task', 'user', 'telephony', 'log', 'entity'];

const work = (VALUE: string): PhoneSeed => ({ VALUE, VALUE_TYPE: 'WORK' });

/** A fresh copy each time, so a test that changes seeded records never leaks into another portal. */
export function defaultSeed(): SandboxSeed {
  return {
    employees: [
      {
        ID: 1,
        NAME: 'Admin',
        LAST_NAME: 'Sandbox',
        EMAIL: 'admin@sandbox.test',
        ACTIVE: true,
        UF_PHONE_INNER: '100',
        WORK_POSITION: 'Administrator',
        ADMIN: true,
      },
      {
        ID: 2,
        NAME: 'Anna',
        LAST_NAME: 'Berger',
        EMAIL: 'anna@sandbox.test',
        ACTIVE: true,
        UF_PHONE_INNER: '101',
        WORK_POSITION: 'Sales',
      },
      {
        ID: 3,
        NAME: 'Boris',
        LAST_NAME: 'Chen',
        EMAIL: 'boris@sandbox.test',
        ACTIVE: true,
        UF_PHONE_INNER: '102',
        WORK_POSITION: 'Sales',
      },
      {
        ID: 4,
        NAME: 'Clara',
        LAST_NAME: 'Diaz',
        EMAIL: 'clara@sandbox.test',
        ACTIVE: true,
        UF_PHONE_INNER: '103',
        WORK_POSITION: 'Support',
      },
      {
        ID: 5,
        NAME: 'Dieter',
        LAST_NAME: 'Engel',
        EMAIL: 'dieter@sandbox.test',
        ACTIVE: false,
        UF_PHONE_INNER: '109',
        WORK_POSITION: 'Former sales',
      },
    ],
    contacts: [
      {
        ID: 1,
        NAME: 'Max',
        LAST_NAME: 'Mustermann',
        ASSIGNED_BY_ID: 2,
        DATE_MODIFY: '2026-01-10T09:00:00+01:00',
        PHONE: [work('+49 151 1234-5678')],
      },
      {
        ID: 2,
        NAME: 'Erika',
        LAST_NAME: 'Musterfrau',
        ASSIGNED_BY_ID: 3,
        DATE_MODIFY: '2026-02-03T14:30:00+01:00',
        PHONE: [work('030 98765432'), { VALUE: '+49 (30) 555-0142', VALUE_TYPE: 'MOBILE' }],
      },
      {
        ID: 3,
        NAME: 'John',
        LAST_NAME: 'Smith',
        ASSIGNED_BY_ID: 2,
        DATE_MODIFY: '2026-03-01T08:15:00+00:00',
        PHONE: [work('+1 (415) 555-0100')],
      },
    ],
    companies: [
      {
        ID: 1,
        TITLE: 'Acme GmbH',
        ASSIGNED_BY_ID: 3,
        DATE_MODIFY: '2026-01-20T11:00:00+01:00',
        PHONE: [work('+49 89 1234 5600')],
      },
      {
        ID: 2,
        TITLE: 'Globex Ltd',
        ASSIGNED_BY_ID: 4,
        DATE_MODIFY: '2026-02-11T16:45:00+00:00',
        PHONE: [work('+44 20 7946 0958')],
      },
    ],
    leads: [
      {
        ID: 1,
        TITLE: 'Website enquiry',
        NAME: 'Tom',
        LAST_NAME: 'Weber',
        STATUS_ID: 'NEW',
        SOURCE_ID: 'WEB',
        ASSIGNED_BY_ID: 2,
        DATE_MODIFY: '2026-03-05T10:00:00+01:00',
        PHONE: [work('+49 170 5550101')],
      },
      {
        ID: 2,
        TITLE: 'Trade fair contact',
        STATUS_ID: 'IN_PROCESS',
        SOURCE_ID: 'OTHER',
        ASSIGNED_BY_ID: 3,
        DATE_MODIFY: '2026-03-07T12:00:00+01:00',
        PHONE: [work('040 5550199')],
      },
      {
        ID: 3,
        TITLE: 'Acme follow-up',
        STATUS_ID: 'NEW',
        SOURCE_ID: 'CALL',
        ASSIGNED_BY_ID: 4,
        DATE_MODIFY: '2026-03-09T09:30:00+01:00',
        PHONE: [work('+4989 12345600')],
      },
    ],
    deals: [
      {
        ID: 1,
        TITLE: 'Acme renewal',
        STAGE_ID: 'NEW',
        OPPORTUNITY: 1200,
        CURRENCY_ID: 'EUR',
        CONTACT_ID: 1,
        COMPANY_ID: 1,
        ASSIGNED_BY_ID: 3,
        DATE_MODIFY: '2026-03-10T10:00:00+01:00',
      },
    ],
    webhooks: [{ userId: 1, code: 'sandbox0webhook0code', scopes: [...WEBHOOK_SCOPES] }],
    apps: [
      {
        id: 1,
        code: 'local.sandbox.bridge',
        clientId: 'local.5f0sandbox0app01.10000001',
        clientSecret: 'sandbox0client0secret0Qm9y7TzW2kLx8vNc4RpJ6hYd3',
        scopes: [...OAUTH_SCOPES],
        applicationToken: 'sandbox0application0token0000001',
      },
    ],
    memberId: 'a2c6e85a4ad3b1f6d58c17a0d3b6e4f1',
  };
}
