import { PortalClient } from '../portal/portal-client';
import { PageEmployee } from './page-source';

/** Rows per page of `user.get`. */
const PAGE_SIZE = 50;
/** The page lists at most this many employees (a few pages of the portal's budget). */
const MAX_EMPLOYEES = 500;

/**
 * The portal's active employees with their internal numbers (`UF_PHONE_INNER`), including those without one
 * (the directory keeps only those with one). Undefined when the portal cannot be read now.
 */
export async function readEmployees(client: PortalClient): Promise<PageEmployee[] | undefined> {
  const employees: PageEmployee[] = [];
  try {
    for (let start = 0; start < MAX_EMPLOYEES; start += PAGE_SIZE) {
      const rows = await client.call<Record<string, unknown>[]>(
        'user.get',
        { FILTER: { ACTIVE: true }, sort: 'ID', order: 'ASC', start },
        { priority: 'background' },
      );
      const page = Array.isArray(rows) ? rows : [];
      for (const row of page) {
        const id = Number(row.ID);
        if (!Number.isInteger(id)) continue;
        const inner = row.UF_PHONE_INNER;
        const extension = typeof inner === 'string' || typeof inner === 'number' ? String(inner).trim() : '';
        const name = [row.NAME, row.LAST_NAME].filter((part) => typeof part === 'string' && part).join(' ');
        employees.push({ id, name: name || `#${id}`, ...(extension && { extension }) });
      }
      if (page.length < PAGE_SIZE) break;
    }
  } catch {
    return undefined;
  }
  return employees;
}
