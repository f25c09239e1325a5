import { Controller, Get, Req, UseGuards } from '@nestjs/common';
import { ApiBasicAuth, ApiBearerAuth, ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { requiredPhone } from '../common/phone-query';
import { LookupSettings } from '../config/settings';
import { LookupAnswer } from '../crm/crm-match';
import { PortalCrm } from '../crm/portal-crm';
import { lookupIn } from '../crm/portal-lookup';
import { PbxThrottlerGuard } from './pbx-throttler.guard';
import { PbxPortal, PbxTokenGuard } from './pbx-token.guard';

/**
 * `GET /v1/lookup` (docs/API.md): who is calling, and whose client is it. A PBX-facing route, guarded like
 * the other PBX routes; the answer itself is the CRM's (`CrmLookupService`).
 */
@ApiTags('PBX')
@ApiBearerAuth()
@ApiBasicAuth()
@ApiResponse({ status: 401, description: 'No valid PBX token (Bearer, or Basic with the token as password)' })
@Controller('v1')
@UseGuards(PbxTokenGuard, PbxThrottlerGuard)
export class LookupController {
  constructor(
    private readonly crm: PortalCrm,
    private readonly settings: LookupSettings,
  ) {}

  @Get('lookup')
  @ApiOperation({
    summary: 'The contact, company or lead with this number, its responsible employee and internal number',
  })
  @ApiQuery({
    name: 'phone',
    example: '+4915112345678',
    description: 'any written form; national numbers use DEFAULT_COUNTRY',
  })
  @ApiResponse({
    status: 200,
    description:
      '`match` is null when nobody has the number, or with `reason` when the portal could not say in time',
  })
  @ApiResponse({ status: 400, description: '`phone` is missing or not a phone number' })
  lookup(@PbxPortal() portalId: string, @Req() request: Request): Promise<LookupAnswer> {
    const defaultCountry = this.crm.defaultCountryOf(portalId) ?? this.settings.defaultCountry;
    return lookupIn(this.crm, portalId, requiredPhone(request.originalUrl, { defaultCountry }));
  }
}
