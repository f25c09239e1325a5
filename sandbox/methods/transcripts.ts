import { PortalCall } from '../call-registry';
import { applyFilter, applyOrder, pageOf } from '../list-query';
import { MethodContext, MethodDefinition, MethodResult } from '../method-registry';
import { intParam, isPlainObject, objectParam, param, Params, stringParam } from '../params';
import { portalErrors } from '../sandbox-portal-error';
import { TranscriptMessage } from '../transcript-store';

/** Texts of telephony.call.attachTranscription's errors (vendor docs), all `ERROR_CORE`: keep them exact. */
export const TRANSCRIPT_ERRORS = {
  noCallId: 'CALL_ID should be set',
  messagesNotArray: 'MESSAGES should be an array',
  badSide: (n: string) => `MESSAGES[${n}][SIDE] should be either Client or User`,
  badStart: (n: string) => `MESSAGES[${n}][START_TIME] should be greater or equal to zero`,
  badStop: (n: string) => `MESSAGES[${n}][STOP_TIME] should be greater than zero`,
  emptyMessage: (n: string) => `MESSAGES[${n}][MESSAGE] is empty`,
  callNotFinished: (callId: string) => `Call ${callId} is not found. Is it finished?`,
};

/** A whole number of seconds given as a JSON number or a form string; NaN otherwise. */
function wholeSeconds(value: unknown): number {
  if (typeof value === 'number') return Number.isInteger(value) ? value : NaN;
  if (typeof value === 'string' && /^\s*-?\d+\s*$/.test(value)) return Number(value.trim());
  return NaN;
}

/** MESSAGES as a JSON array or, form-encoded, `MESSAGES[0][SIDE]=…` (an object keyed by index). */
function messageEntries(params: Params): [string, unknown][] {
  const messages = param(params, 'MESSAGES');
  if (Array.isArray(messages)) return messages.map((message, index) => [String(index), message]);
  if (isPlainObject(messages) && Object.keys(messages).every((key) => /^\d+$/.test(key))) {
    return Object.entries(messages);
  }
  throw portalErrors.core(TRANSCRIPT_ERRORS.messagesNotArray);
}

function parseMessage(n: string, value: unknown): TranscriptMessage {
  const message = isPlainObject(value) ? value : {};
  const side = stringParam(message, 'SIDE');
  if (side !== 'User' && side !== 'Client') throw portalErrors.core(TRANSCRIPT_ERRORS.badSide(n));
  const start = wholeSeconds(param(message, 'START_TIME'));
  if (!(start >= 0)) throw portalErrors.core(TRANSCRIPT_ERRORS.badStart(n));
  const stop = wholeSeconds(param(message, 'STOP_TIME'));
  if (!(stop > 0)) throw portalErrors.core(TRANSCRIPT_ERRORS.badStop(n));
  const text = stringParam(message, 'MESSAGE') ?? '';
  if (text.trim() === '') throw portalErrors.core(TRANSCRIPT_ERRORS.emptyMessage(n));
  return { SIDE: side, START_TIME: start, STOP_TIME: stop, MESSAGE: text };
}

/**
 * Saves a transcript against the call's statistics row, which exists only once the call is finished. Each
 * call adds one: a repeat is a second transcript, and the row shows the latest.
 */
function attachTranscription(params: Params, context: MethodContext): MethodResult {
  const callId = stringParam(params, 'CALL_ID') ?? '';
  if (callId.trim() === '') throw portalErrors.core(TRANSCRIPT_ERRORS.noCallId);
  const messages = messageEntries(params).map(([n, message]) => parseMessage(n, message));
  const call = context.state.calls.get(callId);
  if (!call || !call.finished) throw portalErrors.core(TRANSCRIPT_ERRORS.callNotFinished(callId));
  const cost = Number(stringParam(params, 'COST'));
  const stored = context.state.transcripts.add({
    CALL_ID: callId,
    MESSAGES: messages,
    COST: stringParam(params, 'COST') === undefined || Number.isNaN(cost) ? null : cost,
    COST_CURRENCY: stringParam(params, 'COST_CURRENCY') ?? '',
    at: context.now,
  });
  return { result: { TRANSCRIPT_ID: stored.TRANSCRIPT_ID } };
}

const text = (value: number | null | undefined) =>
  value === null || value === undefined ? null : String(value);

/** A finished call's statistics row, with the fields (all strings, as the portal gives them) of the vendor docs. */
function statisticRow(call: PortalCall, context: MethodContext): Record<string, unknown> {
  const finished = call.finished!;
  const record = call.records.at(-1);
  return {
    ID: String(finished.STATISTIC_ID),
    PORTAL_USER_ID: String(finished.USER_ID),
    PORTAL_NUMBER: call.LINE_NUMBER,
    PHONE_NUMBER: call.PHONE_NUMBER,
    CALL_ID: call.CALL_ID,
    EXTERNAL_CALL_ID: call.EXTERNAL_CALL_ID || null,
    CALL_CATEGORY: 'external',
    CALL_LOG: null,
    CALL_DURATION: String(finished.DURATION),
    CALL_START_DATE: call.CALL_START_DATE,
    CALL_RECORD_URL: record?.RECORD_URL ?? null,
    CALL_VOTE: text(finished.VOTE),
    COST: (finished.COST ?? 0).toFixed(4),
    COST_CURRENCY: finished.COST_CURRENCY,
    CALL_FAILED_CODE: finished.STATUS_CODE,
    CALL_FAILED_REASON: finished.FAILED_REASON,
    CRM_ENTITY_TYPE: call.answer.CRM_ENTITY_TYPE || null,
    CRM_ENTITY_ID: text(call.answer.CRM_ENTITY_ID),
    CRM_ACTIVITY_ID: text(finished.CRM_ACTIVITY_ID),
    REST_APP_ID: null,
    REST_APP_NAME: null,
    TRANSCRIPT_ID: text(context.state.transcripts.latestId(call.CALL_ID)),
    // The portal's own transcription is not offered here: a transcript is either attached or absent.
    TRANSCRIPT_PENDING: 'N',
    SESSION_ID: null,
    REDIAL_ATTEMPT: null,
    COMMENT: null,
    // The sandbox does not decode recordings: a recorded call's recording lasts as long as the call.
    RECORD_DURATION: record ? String(finished.DURATION) : null,
    RECORD_FILE_ID: record?.FILE_ID ?? null,
    CALL_TYPE: String(call.TYPE),
  };
}

/**
 * The call statistics: finished calls only, filtered (`FILTER`, with the list methods' operators), sorted
 * by one field (`SORT`, `ORDER`; by ID otherwise) and paged by 50 (`start`).
 */
function statisticGet(params: Params, context: MethodContext): MethodResult {
  const rows = context.state.calls
    .all()
    .filter((call) => call.finished !== null)
    .sort((a, b) => a.finished!.STATISTIC_ID - b.finished!.STATISTIC_ID)
    .map((call) => statisticRow(call, context));
  const read = (row: Record<string, unknown>, field: string) => row[field];
  const filtered = applyFilter(rows, objectParam(params, 'FILTER'), read);
  const sort = stringParam(params, 'SORT')?.toUpperCase();
  const ordered = sort
    ? applyOrder(filtered, { [sort]: stringParam(params, 'ORDER') ?? 'ASC' }, read)
    : filtered;
  const page = pageOf(ordered, intParam(params, 'start'));
  return { result: page.rows, total: page.total, next: page.next };
}

export const transcriptMethods: MethodDefinition[] = [
  { name: 'telephony.call.attachTranscription', scope: 'telephony', handler: attachTranscription },
  { name: 'voximplant.statistic.get', scope: 'telephony', handler: statisticGet },
];
