import {
  BeforeApplicationShutdown,
  Global,
  Module,
  OnApplicationBootstrap,
  OnModuleInit,
} from '@nestjs/common';
import { CrmLookupService } from './crm-lookup.service';
import { CrmSearch } from './crm-search';
import { EmployeeDirectory } from './employee-directory';
import { PortalCrm } from './portal-crm';
import { SinglePortalCrm } from './single-portal-crm';

/**
 * The CRM side of lookups (search, cache, deadline, call binding for delivery) and the employee directory of
 * the one portal of single-portal mode, global; the rest of the application reaches them by portal through
 * `PortalCrm`. With many portals the portal registry (src/tenancy/) builds them per portal instead. The
 * PBX-facing route, `GET /v1/lookup`, is PbxModule's.
 */
@Global()
@Module({
  providers: [
    CrmSearch,
    CrmLookupService,
    EmployeeDirectory,
    { provide: PortalCrm, useClass: SinglePortalCrm },
  ],
  exports: [CrmLookupService, EmployeeDirectory, PortalCrm],
})
export class CrmModule implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(
    private readonly lookups: CrmLookupService,
    private readonly directory: EmployeeDirectory,
  ) {}

  onModuleInit(): void {
    this.lookups.open();
  }

  onApplicationBootstrap(): void {
    this.directory.start();
  }

  beforeApplicationShutdown(): void {
    this.directory.close();
  }
}
