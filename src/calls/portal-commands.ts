import { CallRecord, Direction, EndStatus, PortalStep, PortalUser } from './call';
import { isWithheld } from '../common/phone-number';
import { popsCard } from './call-card';

/** A command's parameters, as the portal client encodes them (the same shape as its `PortalParams`). */
export type PortalParams = Record<string, unknown>;

/** How a call's steps read as the portal's telephony.externalcall.* parameters (how real portals behave). */

const CALL_TYPE: Record<Direction, number> = { outbound: 1, inbound: 2 };

const STATUS_CODE: Record<EndStatus, string> = {
  answered: '200',
  missed: '304',
  busy: '486',
  declined: '603',
  cancelled: '603-S',
  failed: 'OTHER',
};

export function registerParams(call: CallRecord, user: PortalUser): PortalParams {
  const terms = call.portal.lineTerms;
  return {
    ...user,
    ...(call.portal.binding ?? {}),
    PHONE_NUMBER: call.party.phoneNumber,
    CALL_START_DATE: call.party.startedAt,
    TYPE: CALL_TYPE[call.party.direction ?? 'inbound'],
    // A withheld number is nobody's: no lead or contact is made for it. A line with `crmCreate: false`
    // (LINES) makes none either; the portal still binds a client it knows.
    CRM_CREATE: isWithheld(call.party.phoneNumber) || terms?.crmCreate === false ? 0 : 1,
    ...(terms?.crmSource !== undefined ? { CRM_SOURCE: terms.crmSource } : {}),
    // The portal files the call under its line (docs/API.md "Lines"): reports, analytics, click-to-call.
    ...(call.party.line !== undefined ? { LINE_NUMBER: call.party.line } : {}),
    // A call that ended before its register went out pops no card.
    SHOW: popsCard(call) ? 1 : 0,
    EXTERNAL_CALL_ID: call.callId,
  };
}

export function finishParams(call: CallRecord): PortalParams {
  const ended = call.party.ended!;
  const params: PortalParams = {
    ...(call.portal.finishUser ?? call.portal.user),
    CALL_ID: call.portal.callId,
    DURATION: ended.durationSec,
    STATUS_CODE: STATUS_CODE[ended.status],
  };
  if (ended.status === 'failed') params.FAILED_REASON = ended.failedReason ?? 'The call failed on the PBX';
  return params;
}

export function attachRecordParams(call: CallRecord): PortalParams {
  return { CALL_ID: call.portal.callId, RECORD_URL: call.party.ended?.recordingUrl };
}

/** The stored recording: FILE_CONTENT is added right before sending (or the answer's uploadUrl takes the file). */
export function uploadRecordParams(call: CallRecord): PortalParams {
  return { CALL_ID: call.portal.callId, FILENAME: call.recording.file?.filename };
}

/** Labels of the other commands of the same call in the same request, by step. */
export type StepLabels = Partial<Record<PortalStep, string>>;

/**
 * A show riding with its call's register takes the CALL_ID from the register's answer in the same batch
 * (`$result[label][CALL_ID]`): the ring group sees the card in the request that registers the call.
 */
function callIdFor(call: CallRecord, labels: StepLabels): unknown {
  if (call.portal.callId) return call.portal.callId;
  return labels.register ? `$result[${labels.register}][CALL_ID]` : undefined;
}

export function showParams(call: CallRecord, labels: StepLabels = {}): PortalParams {
  return { CALL_ID: callIdFor(call, labels), USER_ID: call.card.sending?.show?.userIds };
}

export function hideParams(call: CallRecord): PortalParams {
  return { CALL_ID: call.portal.callId, USER_ID: call.card.sending?.hide?.userIds ?? call.card.userIds };
}
