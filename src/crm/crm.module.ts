import { Module } from '@nestjs/common';
import { PbxThrottlerGuard } from '../pbx/pbx-throttler.guard';
import { PbxTokenGuard } from '../pbx/pbx-token.guard';
import { CrmLookupService } from './crm-lookup.service';
import { CrmSearch } from './crm-search';
import { EmployeeDirectory } from './employee-directory';
import { LookupController } from './lookup.controller';

/**
 * Lookups (`GET /v1/lookup`, and call binding for delivery) and the employee directory. The PBX guards
 * are the PBX endpoints' own; the per-token rate limit comes from the throttler PbxModule registers.
 */
@Module({
  controllers: [LookupController],
  providers: [CrmSearch, CrmLookupService, EmployeeDirectory, PbxTokenGuard, PbxThrottlerGuard],
  exports: [CrmLookupService, EmployeeDirectory],
})
export class CrmModule {}
