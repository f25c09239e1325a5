import {
  IsArray,
  IsBoolean,
  IsInt,
  IsNumber,
  IsObject,
  IsOptional,
  Matches,
  Max,
  Min,
  ValidateIf,
} from 'class-validator';
import { LineRule } from '../common/lines';

/**
 * `PATCH /v1/admin/portals/:portalId`: the portal's own settings; `null` removes one (back to the
 * deployment's). Unknown fields are refused.
 */
export class PortalSettingsPatch {
  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @IsInt()
  @Min(1)
  defaultUserId?: number | null;

  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @Matches(/^[A-Z]{2}$/, { message: 'defaultCountry must be an ISO 3166 alpha-2 code such as DE' })
  defaultCountry?: string | null;

  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @IsBoolean()
  bindCrmEntity?: boolean | null;

  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @IsBoolean()
  missedCallTask?: boolean | null;

  /** The portal's plan: 2 requests/s on most, 5 on large ones. */
  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @IsNumber()
  @Min(0.1)
  @Max(100)
  rateLimitRps?: number | null;

  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @IsInt()
  @Min(1)
  @Max(10_000)
  rateBurst?: number | null;

  /** Click-to-call to this portal's PBX, under the environment's names (checked in `portalDialSettings`). */
  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @IsObject()
  dial?: Record<string, string> | null;

  /**
   * Where this portal's PBX recordings may be downloaded from: `{"hosts": ["pbx.example.com:8443"], "auth":
   * "basic:user:password"}` (auth optional, a secret: never shown back), checked as RECORDING_FETCH_HOSTS and
   * RECORDING_FETCH_AUTH are (checked in `portalRecordingFetch`). Replaced whole; null: nothing downloaded.
   */
  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @IsObject()
  recordingFetch?: { hosts: string[]; auth?: string } | null;

  /** Following this portal's PBX, under the environment's names (checked in `portalFollowSettings`). */
  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @IsObject()
  follow?: Record<string, string> | null;

  /** Transcripts of the portal's recorded calls (SPEC §12), with the deployment's TRANSCRIBE_URL; null: off. */
  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @IsBoolean()
  transcribe?: boolean | null;

  /** The line registered on the portal; null: B24_LINE_NUMBER. */
  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @Matches(/^[\w.+-]{1,50}$/, { message: 'lineNumber must be 1-50 letters, digits, dots, pluses or dashes' })
  lineNumber?: string | null;

  /** The portal's lines and their rules (docs/API.md "Lines", as LINES; each rule checked in `checkLineRules`). */
  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @IsArray({ message: 'lines must be a JSON array of line rules' })
  lines?: LineRule[] | null;
}
