import { Inject, Injectable } from '@nestjs/common';
import { PORTAL_ID } from '../config/portal-id';
import { CrmLookupService } from './crm-lookup.service';
import { EmployeeDirectory } from './employee-directory';
import { PortalCrm } from './portal-crm';

/** Single-portal mode: PORTAL_ID's lookups and directory; any other id is not served here. */
@Injectable()
export class SinglePortalCrm extends PortalCrm {
  constructor(
    private readonly lookups: CrmLookupService,
    private readonly directory: EmployeeDirectory,
    @Inject(PORTAL_ID) private readonly portalId: string,
  ) {
    super();
  }

  lookupsOf(portalId: string): CrmLookupService | undefined {
    return portalId === this.portalId ? this.lookups : undefined;
  }

  directoryOf(portalId: string): EmployeeDirectory | undefined {
    return portalId === this.portalId ? this.directory : undefined;
  }

  missedCallTaskOf(): boolean | undefined {
    return undefined;
  }

  defaultCountryOf(): string | undefined {
    return undefined;
  }

  intakeOf(): undefined {
    return undefined;
  }
}
