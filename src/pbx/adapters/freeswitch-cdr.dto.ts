import { Transform, Type } from 'class-transformer';
import {
  ArrayMinSize,
  IsArray,
  IsIn,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Matches,
  ValidateNested,
} from 'class-validator';
import { lowerText, OptionalText, optionalText, RequiredText, text } from './native-record';

/**
 * FreeSWITCH mod_json_cdr: one JSON record per channel (leg) at hang-up, as JSON, as the form field
 * `cdr=` (`encode=true`) or base64 (`encode=base64`); with `encode-values` the values inside `variables`
 * are URL-encoded. Only what the adapter reads is declared; FreeSWITCH sends hundreds of variables more.
 */

const DIGITS = /^\d+$/;
const EPOCH = { message: '$property must be whole seconds since 1970' };

export class FreeSwitchCallerProfileDto {
  @OptionalText()
  caller_id_number?: string;

  @OptionalText()
  destination_number?: string;

  @IsOptional()
  @IsString()
  context?: string;

  @IsOptional()
  @IsString()
  profile_index?: string;

  /** On the a-leg: the legs it dialled (`bridge`), the first of which names the extension or number. */
  @IsOptional()
  @IsObject()
  originatee?: { originatee_caller_profiles?: unknown };

  /** Only on a b-leg: the a-leg that dialled it. */
  @IsOptional()
  @IsObject()
  originator?: unknown;
}

export class FreeSwitchCallflowDto {
  @Transform(text)
  @IsOptional()
  @IsString()
  profile_index?: string;

  @IsObject({ message: 'caller_profile must be an object' })
  @ValidateNested()
  @Type(() => FreeSwitchCallerProfileDto)
  caller_profile: FreeSwitchCallerProfileDto;
}

export class FreeSwitchVariablesDto {
  @Transform(text)
  @IsString()
  @Length(1, 128)
  uuid: string;

  @Transform(text)
  @Matches(DIGITS, EPOCH)
  start_epoch: string;

  @Transform(optionalText)
  @IsOptional()
  @Matches(DIGITS, EPOCH)
  answer_epoch?: string;

  @Transform(text)
  @Matches(DIGITS, EPOCH)
  end_epoch: string;

  /** Talk time: seconds from answer to hang-up, a difference of whole seconds (0 within the first one). */
  @Transform(optionalText)
  @IsOptional()
  @Matches(DIGITS, { message: 'billsec must be whole seconds' })
  billsec?: string;

  /** Talk time in milliseconds: set (above 0) for a call answered and hung up within its first second. */
  @Transform(optionalText)
  @IsOptional()
  @Matches(DIGITS, { message: 'billmsec must be whole milliseconds' })
  billmsec?: string;

  @RequiredText()
  hangup_cause: string;

  /** The call's direction as the business sees it: set by FusionPBX, or by the dialplan (docs/PBX.md). */
  @Transform(lowerText)
  @IsOptional()
  @IsIn(['inbound', 'outbound', 'local'], { message: 'call_direction must be inbound, outbound or local' })
  call_direction?: string;

  /** Set when the call was bridged to a directory user (`user/1002@…`). */
  @OptionalText()
  dialed_user?: string;

  /** The caller ID an outbound call presented outside: its line (docs/API.md "Lines"). */
  @OptionalText()
  effective_caller_id_number?: string;

  /** The recording as a full URL the PBX serves, set by the dialplan (docs/PBX.md). */
  @OptionalText()
  record_url?: string;

  /**
   * Click-to-call: the portal's CALL_ID the dialer set on the originate (`{crm_call_id=…}`); empty or
   * malformed: none. The call is then finished, never registered.
   */
  @OptionalText()
  crm_call_id?: string;

  /**
   * The recording's folder (FusionPBX: `record_path` + `record_name`) or the file itself; made a URL by
   * FREESWITCH_RECORDING_URL.
   */
  @OptionalText()
  record_path?: string;

  @OptionalText()
  record_name?: string;

  @OptionalText()
  record_file?: string;

  /** The uuid of the leg this one was last bridged to: in a ring group, the member who answered. */
  @OptionalText()
  last_bridge_to?: string;

  /** The channel name of that leg: `sofia/internal/101@192.0.2.21:5060`. */
  @OptionalText()
  bridge_channel?: string;

  /** When the bridge to the answering leg began (the employee picked up; `answer_epoch` may be an IVR's). */
  @Transform(optionalText)
  @IsOptional()
  @Matches(DIGITS, EPOCH)
  bridge_epoch?: string;

  /** The SIP Privacy header of the caller (`id`: presentation prohibited), as sofia keeps it. */
  @OptionalText()
  sip_Privacy?: string;
}

/** The applications the a-leg ran, in order (`app_log.applications[]`): record_session names its file. */
export class FreeSwitchAppLogDto {
  @IsOptional()
  @IsArray({ message: 'app_log.applications must be an array' })
  applications?: unknown[];
}

export class FreeSwitchCdrDto {
  @IsObject({ message: 'variables must be an object' })
  @ValidateNested()
  @Type(() => FreeSwitchVariablesDto)
  variables: FreeSwitchVariablesDto;

  @IsArray({ message: 'callflow must be an object or an array of them' })
  @IsObject({ each: true, message: 'callflow must be an object or an array of them' })
  @ArrayMinSize(1, { message: 'callflow must name at least one caller profile' })
  @ValidateNested({ each: true })
  @Type(() => FreeSwitchCallflowDto)
  callflow: FreeSwitchCallflowDto[];

  @IsOptional()
  @IsObject({ message: 'app_log must be an object' })
  @ValidateNested()
  @Type(() => FreeSwitchAppLogDto)
  app_log?: FreeSwitchAppLogDto;
}
