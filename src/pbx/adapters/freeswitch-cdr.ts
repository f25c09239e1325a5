import { Direction, EndStatus } from '../../calls/call';
import { crmCallIdOf } from '../../calls/click-match';
import {
  AdapterOutcome,
  badField,
  endedAndAnswered,
  ignoredPost,
  isRecord,
  validateNative,
} from './native-record';
import { internalBecause, InternalNumbers } from './internal-numbers';
import { fromEpochSeconds } from './pbx-time';
import { joinedPath, recordingUrlOf } from './recording-url';
import {
  FreeSwitchAppLogDto,
  FreeSwitchCallerProfileDto,
  FreeSwitchCallflowDto,
  FreeSwitchCdrDto,
  FreeSwitchVariablesDto,
} from './freeswitch-cdr.dto';

const WHAT = 'FreeSWITCH CDR';
const CALLER = 'callflow[].caller_profile.caller_id_number';
const DIALLED = 'callflow[].caller_profile.originatee.originatee_caller_profiles[0].destination_number';

/** What the FreeSWITCH adapter needs beyond the record: internal numbers, FREESWITCH_RECORDING_URL. */
export interface FreeSwitchOptions {
  numbers?: InternalNumbers;
  recordingTemplate?: string;
}

/** Without the employee directory: internal numbers are short ones (PBX_INTERNAL_MAX_DIGITS' default). */
const SHORT_NUMBERS: InternalNumbers = { isEmployee: () => false, maxDigits: 6 };

/**
 * A FreeSWITCH CDR as call events: one `call.ended` with what the bridge needs to register it too; an
 * answered call gets a `call.answered` first, naming whoever picked up (ring group member, transfer target).
 */
export function freeSwitchCdrToEvents(
  body: unknown,
  zone: string,
  options: FreeSwitchOptions = {},
): AdapterOutcome {
  const plain = normalise(cdrOf(body));
  const bLeg = bLegOf(plain);
  if (bLeg) return ignoredPost(bLeg);
  const cdr = validateNative(FreeSwitchCdrDto, plain, WHAT);
  const vars = cdr.variables;
  const flows = oldestFirst(cdr.callflow);
  const first = flows[0].caller_profile;
  const latest = flows[flows.length - 1].caller_profile;
  const dialled = originateeOf(flows);

  const direction = directionOf(vars, first);
  if (direction === 'local') return ignoredPost(`internal call ${vars.uuid}: no outside party for the CRM`);
  const inbound = direction === 'inbound';
  const { status, failedReason } = statusOf(vars.hangup_cause, answeredOnPbx(vars), direction);
  // The a-leg is "answered" as soon as anything picks up, voicemail and IVRs included: an inbound call
  // counts as answered only when it was bridged to someone (docs/API.md: voicemail alone is a missed call).
  const unanswered = inbound && status === 'answered' && !bridged(vars);
  const extension = inbound ? (dialled?.destination_number ?? vars.dialed_user) : first.caller_id_number;
  const endedAt = epoch(vars.end_epoch, zone, 'variables.end_epoch');
  const durationSec = unanswered ? 0 : talkSeconds(vars);
  const recordFile =
    joinedPath(vars.record_path, vars.record_name ?? vars.record_file) ?? recordedFileOf(cdr.app_log);
  const event = {
    event: 'call.ended',
    callId: vars.uuid,
    direction,
    phoneNumber: inbound
      ? callerNumberOf(first.caller_id_number, /\bid\b/i.test(vars.sip_Privacy ?? ''))
      : (dialled?.destination_number ?? latest.destination_number),
    extension,
    startedAt: epoch(vars.start_epoch, zone, 'variables.start_epoch'),
    at: endedAt,
    durationSec,
    status: unanswered ? 'missed' : status,
    failedReason,
    recordingUrl: unanswered
      ? undefined
      : (vars.record_url ?? recordingUrlOf(recordFile, options.recordingTemplate)),
    crmCallId: crmCallIdOf(vars.crm_call_id),
    // The line (docs/API.md "Lines"): the number an inbound call's leg dialled (its DID), the caller ID an outbound one
    // presented.
    line: inbound ? first.destination_number : vars.effective_caller_id_number,
  };
  const numbers = options.numbers ?? SHORT_NUMBERS;
  const answerer =
    status === 'answered' && !unanswered
      ? ((inbound ? answererOf(vars, flows, numbers) : undefined) ??
        (internalBecause(extension, numbers) ? extension : undefined))
      : undefined;
  return {
    events: endedAndAnswered(event, answerer, () => answeredAt(vars, endedAt, durationSec, zone)),
    sources: {
      callId: 'variables.uuid',
      crmCallId: 'variables.crm_call_id',
      phoneNumber: inbound ? CALLER : DIALLED,
      extension: inbound ? DIALLED : CALLER,
      line: inbound ? 'callflow[].caller_profile.destination_number' : 'variables.effective_caller_id_number',
      startedAt: 'variables.start_epoch',
      at: 'variables.end_epoch',
      durationSec: 'variables.billsec',
      status: 'variables.hangup_cause',
      recordingUrl: vars.record_url
        ? 'variables.record_url'
        : vars.record_path
          ? 'variables.record_path'
          : 'app_log.applications[record_session].app_data',
    },
  };
}

/**
 * Who picked up an inbound call, when it is an internal number: the dialled leg the call was last bridged
 * to (`last_bridge_to`, matched to an originatee profile's uuid: the ring group member who answered), that
 * leg's channel (`bridge_channel`), else the directory user dialled (`dialed_user`).
 */
function answererOf(
  vars: FreeSwitchVariablesDto,
  flows: FreeSwitchCallflowDto[],
  numbers: InternalNumbers,
): string | undefined {
  const candidates = [
    bridgedProfileNumber(vars.last_bridge_to, flows),
    userOfChannel(vars.bridge_channel),
    vars.dialed_user,
  ];
  return candidates.find((number) => number !== undefined && internalBecause(number, numbers) !== undefined);
}

function bridgedProfileNumber(uuid: string | undefined, flows: FreeSwitchCallflowDto[]): string | undefined {
  if (!uuid) return undefined;
  for (const flow of [...flows].reverse()) {
    const profiles = flow.caller_profile.originatee?.originatee_caller_profiles;
    if (!Array.isArray(profiles)) continue;
    const profile: unknown = profiles.find((candidate) => isRecord(candidate) && candidate.uuid === uuid);
    if (!isRecord(profile)) continue;
    const fromChannel = typeof profile.chan_name === 'string' ? userOfChannel(profile.chan_name) : undefined;
    const dialled = typeof profile.destination_number === 'string' ? profile.destination_number.trim() : '';
    return fromChannel ?? (dialled || undefined);
  }
  return undefined;
}

/** The user part of a channel name: `sofia/internal/101@192.0.2.21:5060` → `101` (also `sip:101@…`). */
export function userOfChannel(channel: string | undefined): string | undefined {
  const parts = channel?.split('/') ?? [];
  if (parts.length < 3) return undefined;
  const user = parts
    .slice(2)
    .join('/')
    .replace(/^sips?:/i, '')
    .split('@')[0]
    .trim();
  return user || undefined;
}

/** When the employee picked up: `bridge_epoch`, else `answer_epoch`, else the end minus the talk time. */
function answeredAt(
  vars: FreeSwitchVariablesDto,
  endedAt: string,
  durationSec: number,
  zone: string,
): string {
  const bridged = Number(vars.bridge_epoch ?? 0);
  if (bridged > 0) return epoch(vars.bridge_epoch!, zone, 'variables.bridge_epoch');
  const answered = Number(vars.answer_epoch ?? 0);
  if (answered > 0) return epoch(vars.answer_epoch!, zone, 'variables.answer_epoch');
  return fromEpochSeconds(Date.parse(endedAt) / 1000 - durationSec, zone) ?? endedAt;
}

/** The CDR whichever way mod_json_cdr encoded it: the JSON itself, or `{cdr: "<JSON>"}` from a form. */
function cdrOf(body: unknown): unknown {
  if (!isRecord(body) || 'variables' in body || typeof body.cdr !== 'string') return body;
  try {
    return JSON.parse(body.cdr);
  } catch {
    throw badField(WHAT, 'cdr', 'cdr must be the CDR as JSON (mod_json_cdr encode=true or base64)');
  }
}

/**
 * `callflow` as an array (FreeSWITCH before 1.6 wrote one object), and `variables` decoded when
 * mod_json_cdr's `encode-values` URL-encoded them: `start_stamp` then reads `2026-11-22%2010%3A00%3A00`.
 */
function normalise(cdr: unknown): unknown {
  if (!isRecord(cdr)) return cdr;
  const callflow = isRecord(cdr.callflow) ? [cdr.callflow] : cdr.callflow;
  const vars = cdr.variables;
  if (!isRecord(vars) || !String(vars.start_stamp ?? '').includes('%')) return { ...cdr, callflow };
  const decoded = Object.fromEntries(
    Object.entries(vars).map(([name, value]) => [
      name,
      typeof value === 'string' ? urlDecoded(value) : value,
    ]),
  );
  return { ...cdr, callflow, variables: decoded };
}

/** A URL-encoded value (mod_json_cdr's `encode`, plain events' headers), or as it is when it is not one. */
export function urlDecoded(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/**
 * With `log-b-leg` FreeSWITCH posts the dialled leg too. The a-leg's record already names the extension
 * (its originatee profile) and carries the caller, so the b-leg is acknowledged and nothing is stored:
 * otherwise every bridged call would reach the CRM twice, once under each leg's uuid.
 */
function bLegOf(cdr: unknown): string | undefined {
  if (!isRecord(cdr) || !isRecord(cdr.variables)) return undefined;
  const vars = cdr.variables;
  const originator = Array.isArray(cdr.callflow)
    ? cdr.callflow.some(
        (flow) => isRecord(flow) && isRecord(flow.caller_profile) && flow.caller_profile.originator,
      )
    : false;
  const aLeg = vars.originating_leg_uuid ?? vars.originator;
  if (!originator && !aLeg) return undefined;
  const of = typeof aLeg === 'string' && aLeg ? ` of call ${aLeg}` : '';
  return `b-leg ${String(vars.uuid ?? '')}${of}: the a-leg's record reports the call`;
}

/** FreeSWITCH lists the newest caller profile first; `profile_index` says for sure when present. */
function oldestFirst(flows: FreeSwitchCallflowDto[]): FreeSwitchCallflowDto[] {
  const indexed = flows.map((flow, position) => ({
    flow,
    order: Number(flow.profile_index ?? flow.caller_profile.profile_index ?? flows.length - position),
  }));
  return indexed.sort((a, b) => a.order - b.order).map((entry) => entry.flow);
}

/** The first leg the a-leg dialled (newest profile first): the extension, or the outside number. */
function originateeOf(
  flows: FreeSwitchCallflowDto[],
): { destination_number?: string; caller_id_number?: string } | undefined {
  for (const flow of [...flows].reverse()) {
    const profiles = flow.caller_profile.originatee?.originatee_caller_profiles;
    const profile = Array.isArray(profiles) ? profiles[0] : undefined;
    if (
      isRecord(profile) &&
      typeof profile.destination_number === 'string' &&
      profile.destination_number.trim()
    ) {
      return { destination_number: profile.destination_number.trim() };
    }
  }
  return undefined;
}

/**
 * The direction as the business sees it. `variables.direction` is the leg's direction as FreeSWITCH sees
 * it (every a-leg is "inbound" to the switch), so it cannot tell. In order: `call_direction` (FusionPBX, or
 * the dialplan); the context the call arrived in (`public`, where FreeSWITCH's example configuration
 * puts calls from trunks: inbound); a call bridged to a directory user (`dialed_user`): internal;
 * anything else: outbound.
 */
function directionOf(vars: FreeSwitchVariablesDto, first: FreeSwitchCallerProfileDto): Direction | 'local' {
  if (vars.call_direction) return vars.call_direction as Direction | 'local';
  if (first.context === 'public') return 'inbound';
  return vars.dialed_user ? 'local' : 'outbound';
}

/** Hang-up cause, and whether the leg was answered, as the portal's status (table in docs/PBX.md). */
export function statusOf(
  cause: string,
  answered: boolean,
  direction: Direction,
): { status: EndStatus; failedReason?: string } {
  switch (cause.toUpperCase()) {
    case 'NORMAL_CLEARING':
      return { status: answered ? 'answered' : 'missed' };
    case 'USER_BUSY':
      return { status: 'busy' };
    case 'NO_ANSWER':
    case 'NO_USER_RESPONSE':
      return { status: 'missed' };
    case 'ORIGINATOR_CANCEL':
      // The caller hung up while it rang: a missed call for the employee, a cancelled one by the employee.
      return { status: direction === 'inbound' ? 'missed' : 'cancelled' };
    case 'CALL_REJECTED':
      return { status: 'declined' };
    default:
      // Talked is answered however it ended: a restart's hupall (SYSTEM_SHUTDOWN), uuid_kill
      // (MANAGER_REQUEST), lost media (MEDIA_TIMEOUT) end answered calls, not failed ones.
      return answered ? { status: 'answered' } : { status: 'failed', failedReason: cause };
  }
}

/**
 * Whether FreeSWITCH answered the leg: `billsec` is a difference of whole seconds, 0 for a call answered and
 * hung up within its first second, so answered is what `answer_epoch`, `bridge_epoch` and `billmsec` say.
 */
function answeredOnPbx(vars: FreeSwitchVariablesDto): boolean {
  return [vars.billsec, vars.billmsec, vars.answer_epoch, vars.bridge_epoch].some(
    (value) => Number(value ?? 0) > 0,
  );
}

/** The file of the last `record_session` the leg ran (its data, without a `{var=value}` prefix). */
function recordedFileOf(appLog: FreeSwitchAppLogDto | undefined): string | undefined {
  const runs = (appLog?.applications ?? []).filter(
    (app): app is Record<string, unknown> => isRecord(app) && app.app_name === 'record_session',
  );
  const data = runs.at(-1)?.app_data;
  const file = typeof data === 'string' ? data.replace(/^\{[^}]*\}/, '').trim() : '';
  return file || undefined;
}

/** FreeSWITCH's stand-ins for a caller number it does not have or may not show. */
const WITHHELD = /^(anonymous|<?unknown>?|restricted|unavailable|private|withheld|0000000000)$/i;

/**
 * The caller's number, or `anonymous` when it is withheld: empty, one of FreeSWITCH's stand-ins, masked
 * (`+31260xxxxxx`), or presentation prohibited (`hidden`). Any other text is left for the intake to judge.
 */
export function callerNumberOf(value: string | undefined, hidden: boolean): string {
  const number = value?.trim() ?? '';
  if (hidden || !number || WITHHELD.test(number) || /^\+?\d*[x*]+\d*$/i.test(number)) return 'anonymous';
  return number;
}

/** Whether the leg was ever bridged to another (an employee, a transfer target): not only an application. */
function bridged(vars: FreeSwitchVariablesDto): boolean {
  return Number(vars.bridge_epoch ?? 0) > 0 || Boolean(vars.last_bridge_to) || Boolean(vars.bridge_channel);
}

function talkSeconds(vars: FreeSwitchVariablesDto): number {
  if (vars.billsec !== undefined) return Number(vars.billsec);
  const answered = Number(vars.answer_epoch ?? 0);
  return answered > 0 ? Math.max(0, Number(vars.end_epoch) - answered) : 0;
}

function epoch(seconds: string, zone: string, field: string): string {
  const moment = fromEpochSeconds(Number(seconds), zone);
  if (!moment) throw badField(WHAT, field, `${field} is not a real moment`);
  return moment;
}
