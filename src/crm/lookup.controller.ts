import { BadRequestException, Controller, Get, Req, UseGuards } from '@nestjs/common';
import { ApiBasicAuth, ApiBearerAuth, ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { toE164 } from '../common/phone-number';
import { AppConfig } from '../config/app-config';
import { PbxThrottlerGuard } from '../pbx/pbx-throttler.guard';
import { PbxTokenGuard } from '../pbx/pbx-token.guard';
import { LookupAnswer } from './crm-match';
import { CrmLookupService } from './crm-lookup.service';

/** `GET /v1/lookup` (SPEC.md §2): who is calling, and whose client is it. */
@ApiTags('PBX')
@ApiBearerAuth()
@ApiBasicAuth()
@ApiResponse({ status: 401, description: 'No valid PBX token (Bearer, or Basic with the token as password)' })
@Controller('v1')
@UseGuards(PbxTokenGuard, PbxThrottlerGuard)
export class LookupController {
  constructor(
    private readonly lookups: CrmLookupService,
    private readonly config: AppConfig,
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
  lookup(@Req() request: Request): Promise<LookupAnswer> {
    return this.lookups.lookup(requiredPhone(request.originalUrl, this.config));
  }
}

/**
 * The phone number a lookup asks for, in E.164, from the query parameter `name` of `url`; a 400 naming
 * the parameter when it is missing or not a phone number. The 3CX adapter asks with `number`.
 */
export function requiredPhone(url: string, config: AppConfig, name = 'phone'): string {
  const raw = phoneParameter(url, name);
  const phone = raw === undefined ? undefined : toE164(raw, config.DEFAULT_COUNTRY);
  if (phone) return phone;
  throw badPhone(
    name,
    raw === undefined || raw.trim() === '' ? `${name} is required` : notANumber(name, config),
  );
}

/**
 * The `phone` (or `name`) query parameter as the PBX wrote it. Query parsers read `+` as a space, but PBXs
 * send `?phone=+4915…` unencoded: a leading `+` is kept as the plus sign, later ones are spaces.
 */
export function phoneParameter(url: string, name = 'phone'): string | undefined {
  const query = url.split('?', 2)[1] ?? '';
  for (const pair of query.split('&')) {
    const separator = pair.indexOf('=');
    const key = separator < 0 ? pair : pair.slice(0, separator);
    if (safeDecode(key) !== name) continue;
    const value = separator < 0 ? '' : pair.slice(separator + 1);
    const spaced = value.startsWith('+')
      ? `%2B${value.slice(1).replace(/\+/g, ' ')}`
      : value.replace(/\+/g, ' ');
    return safeDecode(spaced) ?? value;
  }
  return undefined;
}

function safeDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

function notANumber(name: string, config: AppConfig): string {
  const hint = config.DEFAULT_COUNTRY ? '' : ' (a national number needs DEFAULT_COUNTRY on the bridge)';
  return `${name} is not a phone number${hint}`;
}

function badPhone(name: string, problem: string): BadRequestException {
  return new BadRequestException({
    statusCode: 400,
    error: 'Bad Request',
    message: problem,
    errors: [{ field: name, problems: [problem] }],
  });
}
