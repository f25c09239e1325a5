import { CallRecord, Direction, EndStatus, PortalUser } from './call';

/** A command's parameters, as the portal client encodes them (the same shape as its `PortalParams`). */
export type PortalParams = Record<string, unknown>;

/** How a call's steps read as the portal's telephony.externalcall.* parameters (REAL-PORTAL.md). */

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
  return {
    ...user,
    ...(call.crmBinding ?? {}),
    PHONE_NUMBER: call.phoneNumber,
    CALL_START_DATE: call.startedAt,
    TYPE: CALL_TYPE[call.direction ?? 'inbound'],
    CRM_CREATE: 1,
    SHOW: call.show ? 1 : 0,
    EXTERNAL_CALL_ID: call.callId,
  };
}

export function finishParams(call: CallRecord): PortalParams {
  const ended = call.ended!;
  const params: PortalParams = {
    ...call.portalUser,
    CALL_ID: call.portalCallId,
    DURATION: ended.durationSec,
    STATUS_CODE: STATUS_CODE[ended.status],
  };
  if (ended.status === 'failed') params.FAILED_REASON = ended.failedReason ?? 'The call failed on the PBX';
  return params;
}

export function attachRecordParams(call: CallRecord): PortalParams {
  return { CALL_ID: call.portalCallId, RECORD_URL: call.ended?.recordingUrl };
}

export function hideParams(call: CallRecord): PortalParams {
  return { CALL_ID: call.portalCallId, USER_ID: call.cardUserIds };
}
