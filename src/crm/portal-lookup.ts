import { LookupAnswer } from './crm-match';
import { PortalCrm } from './portal-crm';

/**
 * A lookup in the PBX's own portal. A portal this deployment does not serve right now (uninstalled, so
 * paused) answers like a portal that cannot be asked: no match, with the reason, never an error that would
 * hold up a ringing call.
 */
export async function lookupIn(crm: PortalCrm, portalId: string, phone: string): Promise<LookupAnswer> {
  const lookups = await crm.lookupsFor(portalId);
  if (lookups) return lookups.lookup(phone);
  return {
    phone,
    match: null,
    reason: 'the portal is paused: the application is not installed there',
  };
}
