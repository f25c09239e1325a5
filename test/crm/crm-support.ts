import { CrmSeedRecord, SandboxPortal } from '../../src/sandbox';
import { sandboxStats } from '../support/sandbox-inspect';

/** A CRM record for a custom sandbox seed: its fields, responsible, last change and one work number. */
export function seedRecord(
  id: number,
  fields: Record<string, string>,
  assignedById: number,
  modifiedAt: string,
  phone: string,
): CrmSeedRecord {
  return {
    ID: id,
    ...fields,
    ASSIGNED_BY_ID: assignedById,
    DATE_MODIFY: modifiedAt,
    PHONE: [{ VALUE: phone, VALUE_TYPE: 'WORK' }],
  };
}

/** Every /rest request the sandbox portal has seen. */
export async function portalRequests(sandbox: SandboxPortal): Promise<number> {
  return (await sandboxStats(sandbox)).requests;
}
