import { CrmLookupService } from './crm-lookup.service';
import { EmployeeDirectory } from './employee-directory';

/**
 * A port: the CRM side of one portal, by its id. In single-portal mode it is the one portal's lookups and
 * directory; with many portals (SPEC.md §8) the portal registry provides each served portal's own, so a
 * PBX's lookup or event reaches its own portal only.
 */
export abstract class PortalCrm {
  /** The portal's lookups, or undefined when this deployment does not serve it (unknown, uninstalled). */
  abstract lookupsOf(portalId: string): CrmLookupService | undefined;
  abstract directoryOf(portalId: string): EmployeeDirectory | undefined;
  /** The portal's own missed-call task setting, where it differs from the deployment's; undefined: the deployment's. */
  abstract missedCallTaskOf(portalId: string): boolean | undefined;
  /** The portal's own country for national numbers (its PBX's events and lookups); undefined: DEFAULT_COUNTRY. */
  abstract defaultCountryOf(portalId: string): string | undefined;
}
