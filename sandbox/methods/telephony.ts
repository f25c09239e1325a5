import { createHash } from 'node:crypto';
import { CallRegistry, PortalCall, RegisterAnswer } from '../call-registry';
import { CrmEntityKind, CrmRecord } from '../crm-store';
import { formatPortalDate, parseDateWithOffset } from '../date-format';
import { MethodContext, MethodDefinition, MethodResult } from '../method-registry';
import { intParam, isTruthyFlag, listParam, Params, stringParam } from '../params';
import { phoneDigits } from '../phone';
import { portalErrors } from '../sandbox-portal-error';
import { EmployeeSeed } from '../seed';

/** Texts of the portal's telephony errors, matched by clients: keep them exact. */
export const TELEPHONY_ERRORS = {
  noUser: 'USER_ID or USER_PHONE_INNER should be set',
  unknownType: 'Unknown TYPE',
  badStartDate: 'CALL_START_DATE should be in the ISO-8601 format',
  badPhone: 'Unsupported phone number format',
  finishUnknownCall: 'Call is not found (call should be registered prior to finishing)',
  attachBeforeFinish: 'Call is not found in the statistic table. It looks like it is not finished yet.',
  noRecord: 'RECORD_URL or FILENAME with FILE_CONTENT should be set',
  unknownCall: 'Call is not found',
  badDuration: 'DURATION should be a non-negative integer',
  badFileName: 'FILENAME should end in .mp3 or .wav',
  recordUrlFailed: 'Could not download the file from RECORD_URL',
};

/** Binding order when several CRM records have the number. */
const BINDING_ORDER: CrmEntityKind[] = ['CONTACT', 'COMPANY', 'LEAD'];

function resolveUser(params: Params, context: MethodContext): EmployeeSeed {
  const { employees } = context.state;
  const user =
    employees.activeById(intParam(params, 'USER_ID')) ??
    employees.activeByInnerNumber(stringParam(params, 'USER_PHONE_INNER'));
  if (!user) throw portalErrors.validation(TELEPHONY_ERRORS.noUser);
  return user;
}

function findBinding(
  context: MethodContext,
  phone: string,
): { type: CrmEntityKind; record: CrmRecord } | undefined {
  for (const type of BINDING_ORDER) {
    const [record] = context.state.crm.findByPhone(type, phone);
    if (record) return { type, record };
  }
  return undefined;
}

function leadTitle(type: number, phone: string): string {
  return type === 1 ? `Call to ${phone}` : `Call from ${phone}`;
}

export function register(params: Params, context: MethodContext): MethodResult {
  const user = resolveUser(params, context);
  const type = intParam(params, 'TYPE');
  if (type === undefined || !(type >= 1 && type <= 5)) {
    throw portalErrors.validation(TELEPHONY_ERRORS.unknownType);
  }
  const startParam = stringParam(params, 'CALL_START_DATE');
  const start = startParam === undefined ? context.now : parseDateWithOffset(startParam);
  if (start === null) throw portalErrors.validation(TELEPHONY_ERRORS.badStartDate);
  const phone = stringParam(params, 'PHONE_NUMBER') ?? '';
  // A withheld caller is registered as `anonymous` (the bridge's contract, SPEC §9); other text is refused.
  if (phoneDigits(phone) === '' && phone.toLowerCase() !== 'anonymous') {
    throw portalErrors.validation(TELEPHONY_ERRORS.badPhone);
  }
  const externalCallId = stringParam(params, 'EXTERNAL_CALL_ID') ?? '';

  const line = stringParam(params, 'LINE_NUMBER') ?? '';
  const repeat = context.state.calls.findRepeat(
    { userId: user.ID, phone, type, line, externalCallId },
    context.now,
  );
  if (repeat) {
    repeat.registerRequests += 1;
    return { result: { ...repeat.answer } };
  }

  const callId = CallRegistry.newCallId(context.now);
  const answer = bindCall(params, context, { user, type, phone, callId });
  const call: PortalCall = {
    CALL_ID: callId,
    EXTERNAL_CALL_ID: externalCallId,
    USER_ID: user.ID,
    PHONE_NUMBER: phone,
    TYPE: type,
    CALL_START_DATE: startParam ?? formatPortalDate(start),
    CRM_CREATE: isTruthyFlag(stringParam(params, 'CRM_CREATE')),
    CRM_SOURCE: stringParam(params, 'CRM_SOURCE') ?? '',
    LINE_NUMBER: line,
    SHOW: stringParam(params, 'SHOW') === undefined ? true : isTruthyFlag(stringParam(params, 'SHOW')),
    shownTo: [],
    cardLog: [],
    answer,
    registerRequests: 1,
    registeredAt: context.now,
    finished: null,
    records: [],
  };
  if (call.SHOW) {
    call.shownTo = [user.ID];
    call.cardLog.push({ at: context.now, by: 'register', shown: [user.ID], hidden: [] });
  }
  context.state.calls.add(call);
  return { result: { ...answer } };
}

/** Explicit CRM_ENTITY_TYPE/ID, else the record with the number, else (CRM_CREATE=1) a new lead. */
function bindCall(
  params: Params,
  context: MethodContext,
  call: { user: EmployeeSeed; type: number; phone: string; callId: string },
): RegisterAnswer {
  const { user, type, phone, callId } = call;
  const explicitType = stringParam(params, 'CRM_ENTITY_TYPE')?.toUpperCase();
  const explicitId = intParam(params, 'CRM_ENTITY_ID');
  if (
    explicitType &&
    ['CONTACT', 'COMPANY', 'LEAD', 'DEAL'].includes(explicitType) &&
    explicitId !== undefined &&
    explicitId > 0
  ) {
    return {
      CALL_ID: callId,
      CRM_CREATED_LEAD: null,
      CRM_CREATED_ENTITIES: [],
      CRM_ENTITY_TYPE: explicitType,
      CRM_ENTITY_ID: explicitId,
    };
  }
  const found = findBinding(context, phone);
  if (found) {
    return {
      CALL_ID: callId,
      CRM_CREATED_LEAD: null,
      CRM_CREATED_ENTITIES: [],
      CRM_ENTITY_TYPE: found.type,
      CRM_ENTITY_ID: found.record.ID,
    };
  }
  if (!isTruthyFlag(stringParam(params, 'CRM_CREATE'))) {
    return {
      CALL_ID: callId,
      CRM_CREATED_LEAD: null,
      CRM_CREATED_ENTITIES: [],
      CRM_ENTITY_TYPE: '',
      CRM_ENTITY_ID: null,
    };
  }
  const lead = context.state.crm.add(
    'LEAD',
    {
      TITLE: leadTitle(type, phone),
      SOURCE_ID: stringParam(params, 'CRM_SOURCE') || 'CALL',
      ASSIGNED_BY_ID: user.ID,
      PHONE: [{ VALUE: phone, VALUE_TYPE: 'WORK' }],
    },
    user.ID,
    context.now,
  );
  return {
    CALL_ID: callId,
    CRM_CREATED_LEAD: lead.ID,
    CRM_CREATED_ENTITIES: [{ ENTITY_TYPE: 'LEAD', ENTITY_ID: lead.ID }],
    CRM_ENTITY_TYPE: 'LEAD',
    CRM_ENTITY_ID: lead.ID,
  };
}

function finish(params: Params, context: MethodContext): MethodResult {
  const call = context.state.calls.get(stringParam(params, 'CALL_ID') ?? '');
  if (!call || call.finished) throw portalErrors.validation(TELEPHONY_ERRORS.finishUnknownCall);
  const user = resolveUser(params, context);
  const duration = intParam(params, 'DURATION') ?? 0;
  if (Number.isNaN(duration) || duration < 0) throw portalErrors.validation(TELEPHONY_ERRORS.badDuration);
  const cost = Number(stringParam(params, 'COST'));
  const vote = intParam(params, 'VOTE');
  const done = context.state.calls.finish(call, {
    USER_ID: user.ID,
    DURATION: duration,
    STATUS_CODE: stringParam(params, 'STATUS_CODE') || (duration > 0 ? '200' : '304'),
    FAILED_REASON: stringParam(params, 'FAILED_REASON') ?? '',
    COST: stringParam(params, 'COST') === undefined || Number.isNaN(cost) ? null : cost,
    COST_CURRENCY: stringParam(params, 'COST_CURRENCY') ?? '',
    VOTE: vote === undefined || Number.isNaN(vote) ? null : vote,
    ADD_TO_CHAT: isTruthyFlag(stringParam(params, 'ADD_TO_CHAT')),
    at: context.now,
  });
  return {
    result: {
      CALL_ID: call.CALL_ID,
      ID: String(done.STATISTIC_ID),
      EXTERNAL_CALL_ID: call.EXTERNAL_CALL_ID || null,
      PORTAL_USER_ID: String(done.USER_ID),
      PHONE_NUMBER: call.PHONE_NUMBER,
      CALL_TYPE: String(call.TYPE),
      CALL_DURATION: String(done.DURATION),
      CALL_START_DATE: call.CALL_START_DATE,
      CALL_FAILED_CODE: done.STATUS_CODE,
      CALL_FAILED_REASON: done.FAILED_REASON,
      COST: done.COST === null ? null : done.COST.toFixed(4),
      COST_CURRENCY: done.COST_CURRENCY,
      CALL_VOTE: done.VOTE === null ? null : String(done.VOTE),
      CRM_ENTITY_TYPE: call.answer.CRM_ENTITY_TYPE || null,
      CRM_ENTITY_ID: call.answer.CRM_ENTITY_ID === null ? null : String(call.answer.CRM_ENTITY_ID),
      CRM_ACTIVITY_ID: done.CRM_ACTIVITY_ID === null ? null : String(done.CRM_ACTIVITY_ID),
    },
  };
}

function attachRecord(params: Params, context: MethodContext): MethodResult {
  const call = context.state.calls.get(stringParam(params, 'CALL_ID') ?? '');
  if (!call || !call.finished) throw portalErrors.validation(TELEPHONY_ERRORS.attachBeforeFinish);
  const recordUrl = stringParam(params, 'RECORD_URL');
  const fileName = stringParam(params, 'FILENAME');
  const content = stringParam(params, 'FILE_CONTENT');
  if (recordUrl && context.state.downloadRecordUrls) {
    const got = context.state.recordUrlDownloads.get(recordUrl) ?? { error: 'not tried' };
    if ('error' in got) throw portalErrors.validation(`${TELEPHONY_ERRORS.recordUrlFailed}: ${got.error}`);
    const stored = context.state.calls.attach(call, {
      RECORD_URL: recordUrl,
      ...got,
      via: 'url',
      at: context.now,
    });
    return { result: { FILE_ID: stored.FILE_ID } };
  }
  if (recordUrl) {
    return {
      result: {
        FILE_ID: context.state.calls.attach(call, { RECORD_URL: recordUrl, via: 'url', at: context.now })
          .FILE_ID,
      },
    };
  }
  if (fileName && !/\.(mp3|wav)$/i.test(fileName)) {
    throw portalErrors.validation(TELEPHONY_ERRORS.badFileName);
  }
  if (fileName && content) {
    const bytes = Buffer.from(content, 'base64');
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const stored = context.state.calls.attach(call, {
      FILENAME: fileName,
      bytes: bytes.length,
      sha256,
      via: 'content',
      at: context.now,
    });
    return { result: { FILE_ID: stored.FILE_ID } };
  }
  // Neither content nor URL: the portal answers where to upload the file (how real portals behave "Recordings").
  if (fileName) {
    const token = context.state.calls.expectUpload(call, fileName);
    return { result: { uploadUrl: `${context.state.identity.url}/upload/record/${token}` } };
  }
  throw portalErrors.validation(TELEPHONY_ERRORS.noRecord);
}

function showOrHide(show: boolean) {
  return (params: Params, context: MethodContext): MethodResult => {
    const call = context.state.calls.get(stringParam(params, 'CALL_ID') ?? '');
    if (!call) throw portalErrors.validation(TELEPHONY_ERRORS.unknownCall);
    const users = listParam(params, 'USER_ID').map((id) => Number(id));
    if (users.length === 0 || users.some((id) => !context.state.employees.activeById(id))) {
      throw portalErrors.validation(TELEPHONY_ERRORS.noUser);
    }
    const before = call.shownTo;
    call.shownTo = show ? [...new Set([...before, ...users])] : before.filter((id) => !users.includes(id));
    call.cardLog.push({
      at: context.now,
      by: show ? 'show' : 'hide',
      shown: call.shownTo.filter((id) => !before.includes(id)),
      hidden: before.filter((id) => !call.shownTo.includes(id)),
    });
    return { result: true };
  };
}

function searchCrmEntities(params: Params, context: MethodContext): MethodResult {
  const phone = stringParam(params, 'PHONE_NUMBER') ?? '';
  const { crm, employees } = context.state;
  const found = BINDING_ORDER.flatMap((type) =>
    crm.findByPhone(type, phone).map((record) => ({ type, record })),
  );
  return {
    result: found.map(({ type, record }) => {
      const assignedId = Number(record.fields.ASSIGNED_BY_ID);
      const assigned = employees.get(assignedId);
      const name =
        [record.fields.NAME, record.fields.LAST_NAME].filter(Boolean).join(' ') ||
        String(record.fields.TITLE ?? '');
      return {
        CRM_ENTITY_TYPE: type,
        CRM_ENTITY_ID: record.ID,
        ASSIGNED_BY_ID: assignedId,
        NAME: name,
        ASSIGNED_BY: assigned
          ? {
              ID: String(assigned.ID),
              TIMEMAN_STATUS: 'OPENED',
              USER_DRAFT: '',
              USER_PHONE_INNER: assigned.UF_PHONE_INNER ?? '',
              USE_SIP_PHONE: 'N',
              ACTIVE: assigned.ACTIVE,
            }
          : null,
      };
    }),
  };
}

export const telephonyMethods: MethodDefinition[] = [
  { name: 'telephony.externalcall.register', scope: 'telephony', handler: register },
  { name: 'telephony.externalcall.finish', scope: 'telephony', handler: finish },
  { name: 'telephony.externalcall.attachRecord', scope: 'telephony', handler: attachRecord },
  { name: 'telephony.externalcall.show', scope: 'telephony', handler: showOrHide(true) },
  { name: 'telephony.externalcall.hide', scope: 'telephony', handler: showOrHide(false) },
  { name: 'telephony.externalCall.searchCrmEntities', scope: 'telephony', handler: searchCrmEntities },
];
