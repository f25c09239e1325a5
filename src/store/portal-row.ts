import { PbxTokenRecord, PortalOwnSettings, PortalRecord, PortalStatus } from './portal-store';

/** A `portals` row as both engines return it. */
export interface PortalRow {
  portal_id: string;
  domain: string;
  client_endpoint: string;
  status: string;
  installed_at: number;
  uninstalled_at: number | null;
  settings: string;
  updated_at: number;
}

export interface PbxTokenRow {
  id: string;
  portal_id: string;
  label: string | null;
  digest: string;
  created_at: number;
}

/** Every table keyed by a portal's id: what deleting a portal's data goes through (docs/API.md). */
export const PORTAL_TABLES = [
  'call_events',
  'calls',
  'recordings',
  'clicks',
  'dial_requests',
  'portal_events',
  'portal_tokens',
  'oauth_states',
  'portal_leases',
  'pbx_tokens',
] as const;

export function portalOf(row: PortalRow): PortalRecord {
  return {
    portalId: row.portal_id,
    domain: row.domain,
    clientEndpoint: row.client_endpoint,
    status: row.status as PortalStatus,
    installedAt: Number(row.installed_at),
    uninstalledAt: row.uninstalled_at === null ? undefined : Number(row.uninstalled_at),
    settings: JSON.parse(row.settings) as PortalOwnSettings,
    updatedAt: Number(row.updated_at),
  };
}

export function versionOf(row: Pick<PortalRow, 'portal_id' | 'status' | 'updated_at'>): {
  portalId: string;
  status: PortalStatus;
  updatedAt: number;
} {
  return { portalId: row.portal_id, status: row.status as PortalStatus, updatedAt: Number(row.updated_at) };
}

/** What may be listed of a PBX token: everything but its digest. */
export function listedTokenOf(row: PbxTokenRow): PbxTokenRecord {
  const { digest: _digest, ...token } = tokenOf(row);
  return token;
}

export function tokenOf(row: PbxTokenRow): PbxTokenRecord & { digest: string } {
  return {
    id: row.id,
    portalId: row.portal_id,
    label: row.label ?? undefined,
    createdAt: Number(row.created_at),
    digest: row.digest,
  };
}

/** `patch` over `settings`: a key set to null goes (back to the deployment's). */
export function mergedSettings(
  settings: PortalOwnSettings,
  patch: { [K in keyof PortalOwnSettings]?: PortalOwnSettings[K] | null },
): PortalOwnSettings {
  const merged: Record<string, unknown> = { ...settings };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged as PortalOwnSettings;
}
