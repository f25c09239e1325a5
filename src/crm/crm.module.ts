import { Module } from '@nestjs/common';
import { CrmLookupService } from './crm-lookup.service';
import { CrmSearch } from './crm-search';
import { EmployeeDirectory } from './employee-directory';

/**
 * The CRM side of lookups (search, cache, deadline, call binding for delivery) and the employee directory.
 * The PBX-facing route, `GET /v1/lookup`, is PbxModule's.
 */
@Module({
  providers: [CrmSearch, CrmLookupService, EmployeeDirectory],
  exports: [CrmLookupService, EmployeeDirectory],
})
export class CrmModule {}
