import {
  applyDecorators,
  BadRequestException,
  Body,
  Controller,
  Get,
  HttpCode,
  Post,
  Query,
  Req,
  UseGuards,
} from '@nestjs/common';
import {
  ApiBasicAuth,
  ApiBearerAuth,
  ApiBody,
  ApiConsumes,
  ApiOperation,
  ApiQuery,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Request } from 'express';
import { AuthSettings, IntakeSettings } from '../../config/settings';
import { PortalCrm } from '../../crm/portal-crm';
import { lookupIn } from '../../crm/portal-lookup';
import { requiredPhone } from '../../common/phone-query';
import { BridgeMetrics } from '../../metrics/bridge-metrics';
import { CallEventSubmission } from '../call-event-submission';
import { PbxThrottlerGuard } from '../pbx-throttler.guard';
import { PbxPortal, PbxTokenGuard } from '../pbx-token.guard';
import { asteriskPostToEvents } from './asterisk-live';
import { freeSwitchCdrToEvents } from './freeswitch-cdr';
import { InternalNumbers } from './internal-numbers';
import { AdapterAnswer, AdapterOutcome, withheldCaller } from './native-record';
import { timeZoneOf } from './pbx-time';
import { portalWebUrl, ThreeCxContact, toThreeCxContact } from './threecx-contact';
import { threeCxJournalToEvents } from './threecx-journal';
import { yeastarWebhookToEvents } from './yeastar-webhook';

const ANSWERED = {
  status: 202,
  description:
    'Every event of the record is stored on disk (`accepted`/`duplicates` as for POST /v1/calls/events, ' +
    'with the `callId`), or the record carries no call event and nothing is stored (`ignored` says why)',
  schema: { example: { accepted: 1, duplicates: 0, callId: '1732269000.1234' } },
};
const REJECTED = {
  status: 400,
  description: 'The record is malformed: each bad field named by its name in the PBX format; nothing stored',
};
const TZ_QUERY = {
  name: 'tz',
  required: false,
  description: 'IANA zone of the local times this PBX posts; default PBX_TIME_ZONE',
  example: 'Europe/Berlin',
};

/** A route that takes one PBX record: the `tz` query, answered 202 (stored) or 400. */
function PostedRecord(): MethodDecorator {
  return applyDecorators(HttpCode(202), ApiQuery(TZ_QUERY), ApiResponse(ANSWERED), ApiResponse(REJECTED));
}

/**
 * PBXs that cannot be taught the JSON API post what they post: each route turns one PBX's own record into
 * call events and hands them to the same intake as POST /v1/calls/events (docs/PBX.md).
 */
@ApiTags('PBX adapters')
@ApiBearerAuth()
@ApiBasicAuth()
@ApiQuery({
  name: 'token',
  required: false,
  description: 'The PBX token, for PBXs that cannot send an Authorization header (Yeastar webhooks)',
})
@ApiResponse({
  status: 401,
  description: 'No valid PBX token (Bearer, Basic with the token as password, ?token=)',
})
@ApiResponse({ status: 413, description: 'Body larger than PBX_BODY_LIMIT' })
@ApiResponse({ status: 415, description: 'A content type this PBX does not post' })
@ApiResponse({ status: 429, description: 'This PBX token sends too many requests' })
@ApiResponse({ status: 503, description: 'The store could not commit: nothing stored, send again' })
@Controller('v1/pbx')
@UseGuards(PbxTokenGuard, PbxThrottlerGuard)
export class PbxAdaptersController {
  constructor(
    private readonly submission: CallEventSubmission,
    private readonly crm: PortalCrm,
    private readonly intake: IntakeSettings,
    private readonly auth: AuthSettings,
    private readonly metrics: BridgeMetrics,
  ) {}

  @Post('freeswitch')
  @ApiOperation({
    summary: 'FreeSWITCH mod_json_cdr: one record per leg; the a-leg is the call, a b-leg is ignored',
  })
  @ApiConsumes(
    'application/json',
    'application/x-www-form-urlencoded',
    'application/x-www-form-base64-encoded',
  )
  @ApiBody({ description: 'The JSON CDR, or `cdr=<JSON>` (encode=true), or `cdr=<base64>` (encode=base64)' })
  @PostedRecord()
  freeSwitch(
    @PbxPortal() portalId: string,
    @Body() body: unknown,
    @Query() query: unknown,
  ): Promise<AdapterAnswer> {
    return this.accept(portalId, () =>
      freeSwitchCdrToEvents(body, this.zone(query), {
        numbers: this.internalNumbers(portalId),
        recordingTemplate: this.intake.recordingUrls.freeswitch,
      }),
    );
  }

  @Post('asterisk')
  @ApiOperation({
    summary:
      'Asterisk: the form a dialplan hang-up handler posts with CURL(); with event=ringing|answered, a live event',
  })
  @ApiConsumes('application/x-www-form-urlencoded')
  @ApiBody({
    schema: {
      example:
        'uniqueid=1732269000.1234&linkedid=1732269000.1234&direction=inbound&src=015112345678' +
        '&dst=4930123456' +
        '&extension=101&disposition=ANSWERED&duration=127&billsec=121&start=2026-11-22%2010%3A00%3A00',
    },
  })
  @PostedRecord()
  asterisk(
    @PbxPortal() portalId: string,
    @Body() body: unknown,
    @Query() query: unknown,
  ): Promise<AdapterAnswer> {
    return this.accept(portalId, () =>
      asteriskPostToEvents(
        body,
        this.zone(query),
        this.internalNumbers(portalId),
        this.intake.recordingUrls.asterisk,
      ),
    );
  }

  @Post('yeastar')
  @ApiOperation({
    summary:
      'Yeastar P-Series webhook: 30011 starts and answers a call (ring groups: every member), 30013/30014 move it to a new answerer, 30012 ends it; other events ignored',
  })
  @ApiConsumes('application/json')
  @ApiBody({
    schema: {
      example: {
        type: 30012,
        sn: '3631A2124XXX',
        msg:
          '{"call_id":"1732269000.88","time_start":"2026-11-22 10:00:00","call_from":"015112345678",' +
          '"call_to":"101","call_duration":127,"talk_duration":121,"status":"ANSWERED","type":"Inbound"}',
      },
    },
  })
  @PostedRecord()
  yeastar(
    @PbxPortal() portalId: string,
    @Body() body: unknown,
    @Query() query: unknown,
  ): Promise<AdapterAnswer> {
    return this.accept(portalId, () =>
      yeastarWebhookToEvents(body, this.zone(query), this.intake.recordingUrls.yeastar),
    );
  }

  @Get('3cx/lookup')
  @ApiOperation({ summary: "3CX CRM template, contact lookup: the CRM's contact for a number, flat" })
  @ApiQuery({ name: 'number', example: '+4915112345678', description: 'any written form (3CX [Number])' })
  @ApiResponse({
    status: 200,
    description:
      'The contact (with `id`), or only `phone` when nobody has the number (and `reason` on failure)',
    schema: {
      example: {
        phone: '+4915112345678',
        id: 1,
        entityType: 'CONTACT',
        firstName: 'Max',
        lastName: 'Mustermann',
        companyName: '',
        name: 'Max Mustermann',
        contactUrl: 'https://portal.example.com/crm/contact/details/1/',
        responsibleUserId: 2,
        responsibleExtension: '101',
      },
    },
  })
  @ApiResponse({ status: 400, description: '`number` is missing or not a phone number' })
  async threeCxLookup(@PbxPortal() portalId: string, @Req() request: Request): Promise<ThreeCxContact> {
    const phone = requiredPhone(request.originalUrl, { defaultCountry: this.countryOf(portalId) }, 'number');
    return toThreeCxContact(await lookupIn(this.crm, portalId, phone), portalWebUrl(this.auth));
  }

  @Post('3cx/calls')
  @ApiOperation({ summary: '3CX CRM template, call journaling (ReportCall); the call id is derived' })
  @ApiConsumes('application/json', 'application/x-www-form-urlencoded')
  @ApiBody({
    schema: {
      example: {
        CallType: 'Inbound',
        Number: '+4915112345678',
        Agent: '101',
        Duration: '00:02:01',
        CallStartTimeUTC: '2026-11-22T09:00:00Z',
        CallEndTimeUTC: '2026-11-22T09:02:07Z',
      },
    },
  })
  @PostedRecord()
  threeCxCall(
    @PbxPortal() portalId: string,
    @Body() body: unknown,
    @Query() query: unknown,
  ): Promise<AdapterAnswer> {
    return this.accept(portalId, () =>
      threeCxJournalToEvents(body, this.zone(query), this.countryOf(portalId)),
    );
  }

  /** Internal numbers: the employee directory's, else short ones (PBX_INTERNAL_MAX_DIGITS). */
  private internalNumbers(portalId: string): InternalNumbers {
    const employees = this.crm.directoryOf(portalId);
    return {
      isEmployee: (number) => employees?.userIdFor(number) !== undefined,
      maxDigits: this.intake.internalMaxDigits,
    };
  }

  /** The portal's own country for national numbers, else DEFAULT_COUNTRY. */
  private countryOf(portalId: string): string | undefined {
    return this.crm.defaultCountryOf(portalId) ?? this.intake.defaultCountry;
  }

  private zone(query: unknown): string {
    return timeZoneOf(query, this.intake.timeZone);
  }

  /** Maps the record, then stores its events exactly as the JSON API does. */
  private async accept(portalId: string, map: () => AdapterOutcome): Promise<AdapterAnswer> {
    let outcome: AdapterOutcome;
    try {
      outcome = withheldCaller(map());
    } catch (error) {
      if (error instanceof BadRequestException) this.metrics.events.inc({ outcome: 'rejected' });
      throw error;
    }
    if (!outcome.events.length) return { accepted: 0, duplicates: 0, ignored: outcome.ignored };
    const [first] = outcome.events;
    const result = await this.submission.submit(
      portalId,
      outcome.events.length === 1 ? first : outcome.events,
      outcome.sources,
      { directionInferred: outcome.directionInferred },
    );
    return { ...result, callId: String(first.callId) };
  }
}
