import { PortalStore } from '../store/portal-store';
import { PortalRegistry } from '../tenancy/portal-registry';
import { checkPortalSettings, SettingProblem } from '../tenancy/portal-settings-check';
import { PageToken } from './page-source';

/**
 * A settings patch of the page, in either mode: checked as `PATCH /v1/admin/portals` checks it, merged into
 * the portal's stored record, and every replica's runtime rebuilt from the new record (the registry's sync
 * here; the others' within seconds). Returns the names of what changed, never the values (dial settings
 * hold passwords).
 */
export async function storeSettings(
  portals: PortalStore,
  registry: PortalRegistry,
  portalId: string,
  body: Record<string, unknown>,
): Promise<{ errors: SettingProblem[] } | { changed: string[] }> {
  const checked = await checkPortalSettings(body, { production: registry.production }, registry.egress);
  if ('errors' in checked) return checked;
  const before = (await portals.findPortal(portalId))?.settings ?? {};
  const updated = await portals.updateSettings(portalId, { ...checked.patch }, Date.now());
  if (!updated) return { errors: [{ field: 'body', problems: ['the portal is not installed'] }] };
  await registry.sync();
  const keys = new Set([...Object.keys(before), ...Object.keys(updated.settings)]) as Set<
    keyof typeof before
  >;
  const changed = [...keys].filter(
    (key) => JSON.stringify(before[key]) !== JSON.stringify(updated.settings[key]),
  );
  return { changed };
}

/** The portal's stored PBX tokens as the page lists them. */
export async function storedTokens(portals: PortalStore, portalId: string): Promise<PageToken[]> {
  return (await portals.listPbxTokens(portalId)).map((token) => ({
    id: token.id,
    label: token.label ?? null,
    createdAt: new Date(token.createdAt).toISOString(),
  }));
}
