import { CrmSeedRecord, SandboxPortal } from '../../sandbox';
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

/** How many lookups `bridge_lookup_duration_seconds` has observed by source, and their summed seconds. */
export interface RecordedLookups {
  count: Record<'cache' | 'portal' | 'deadline', number>;
  seconds: Record<'cache' | 'portal' | 'deadline', number>;
}

/** Scrapes the bridge's `GET /metrics` (open in the harness: no METRICS_TOKEN) for the lookup histogram. */
export async function recordedLookups(http: { get(path: string): PromiseLike<{ text: string }> }) {
  const { text } = await http.get('/metrics');
  const sample = (series: string, source: string) => {
    const line = text.split('\n').find((row) => row.startsWith(`${series}{source="${source}"}`));
    return line === undefined ? 0 : Number(line.split(' ').pop());
  };
  const bySource = (series: string) => ({
    cache: sample(series, 'cache'),
    portal: sample(series, 'portal'),
    deadline: sample(series, 'deadline'),
  });
  return {
    count: bySource('bridge_lookup_duration_seconds_count'),
    seconds: bySource('bridge_lookup_duration_seconds_sum'),
  } satisfies RecordedLookups;
}
