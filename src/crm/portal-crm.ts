import { CrmLookupService } from './crm-lookup.service';
import { EmployeeDirectory } from './employee-directory';
import { LineBook } from '../common/lines';

/** What intake needs of one portal's own settings (multi mode: each portal's, never the deployment's). */
export interface PortalIntake {
  /** The portal's DIAL_MATCH_SEC, in ms: how long after a click the PBX's call is that click's. */
  dialMatchMs: number;
  /** The portal's own recording hosts; undefined: nothing is downloaded for it. */
  recordingFetch?: { fetchable(url: string): boolean; waitMs: number };
  /** The portal's lines (its own LINES, its line number, else the deployment's; docs/API.md "Lines"). */
  lines?: LineBook;
}

/**
 * A port: the CRM side of one portal, by its id. In single-portal mode it is the one portal's lookups and
 * directory; with many portals (docs/API.md) the portal registry provides each served portal's own, so a
 * PBX's lookup or event reaches its own portal only.
 */
export abstract class PortalCrm {
  /** The portal's lookups, or undefined when this deployment does not serve it (unknown, uninstalled). */
  abstract lookupsOf(portalId: string): CrmLookupService | undefined;
  /** The portal's lookups, its services built first where they are idle (many portals). */
  lookupsFor(portalId: string): Promise<CrmLookupService | undefined> {
    return Promise.resolve(this.lookupsOf(portalId));
  }
  abstract directoryOf(portalId: string): EmployeeDirectory | undefined;
  /** The portal's own missed-call task setting, where it differs from the deployment's; undefined: the deployment's. */
  abstract missedCallTaskOf(portalId: string): boolean | undefined;
  /** The portal's own country for national numbers (its PBX's events and lookups); undefined: DEFAULT_COUNTRY. */
  abstract defaultCountryOf(portalId: string): string | undefined;
  /** The portal's own intake settings (the seeded portal's are the environment's); undefined: a portal not served. */
  abstract intakeOf(portalId: string): PortalIntake | undefined;
}
