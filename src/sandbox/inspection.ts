import { CallRecord } from './call-registry';
import { CrmEntityType } from './crm-store';
import { PortalState } from './portal-state';

/** A call as tests see it: what register was sent, what it answered, and what happened since. */
export interface CallView {
  CALL_ID: string;
  EXTERNAL_CALL_ID: string;
  USER_ID: number;
  PHONE_NUMBER: string;
  TYPE: number;
  CALL_START_DATE: string;
  CRM_CREATE: boolean;
  CRM_SOURCE: string;
  LINE_NUMBER: string;
  SHOW: boolean;
  shownTo: number[];
  CRM_ENTITY_TYPE: string;
  CRM_ENTITY_ID: number | null;
  CRM_CREATED_LEAD: number | null;
  /** How many register commands reached this call (1, or more when repeats were deduplicated). */
  registerRequests: number;
  /** ms since the epoch (sandbox clock). */
  registeredAt: number;
  finished: null | {
    USER_ID: number;
    DURATION: number;
    STATUS_CODE: string;
    FAILED_REASON: string;
    COST: number | null;
    COST_CURRENCY: string;
    VOTE: number | null;
    ADD_TO_CHAT: boolean;
    CRM_ACTIVITY_ID: number | null;
    at: number;
  };
  records: { RECORD_URL?: string; FILENAME?: string; FILE_ID: number; bytes?: number; at: number }[];
}

export interface CallQuery {
  CALL_ID?: string;
  EXTERNAL_CALL_ID?: string;
  USER_ID?: number;
}

function callView(call: CallRecord): CallView {
  const { finished } = call;
  return {
    CALL_ID: call.CALL_ID,
    EXTERNAL_CALL_ID: call.EXTERNAL_CALL_ID,
    USER_ID: call.USER_ID,
    PHONE_NUMBER: call.PHONE_NUMBER,
    TYPE: call.TYPE,
    CALL_START_DATE: call.CALL_START_DATE,
    CRM_CREATE: call.CRM_CREATE,
    CRM_SOURCE: call.CRM_SOURCE,
    LINE_NUMBER: call.LINE_NUMBER,
    SHOW: call.SHOW,
    shownTo: [...call.shownTo],
    CRM_ENTITY_TYPE: call.answer.CRM_ENTITY_TYPE,
    CRM_ENTITY_ID: call.answer.CRM_ENTITY_ID,
    CRM_CREATED_LEAD: call.answer.CRM_CREATED_LEAD,
    registerRequests: call.registerRequests,
    registeredAt: call.registeredAt,
    finished: finished && {
      USER_ID: finished.USER_ID,
      DURATION: finished.DURATION,
      STATUS_CODE: finished.STATUS_CODE,
      FAILED_REASON: finished.FAILED_REASON,
      COST: finished.COST,
      COST_CURRENCY: finished.COST_CURRENCY,
      VOTE: finished.VOTE,
      ADD_TO_CHAT: finished.ADD_TO_CHAT,
      CRM_ACTIVITY_ID: finished.CRM_ACTIVITY_ID,
      at: finished.at,
    },
    records: call.records.map((record) => ({ ...record })),
  };
}

/** Read-only views of the portal's state for tests, shared by the control API and in-process callers. */
export class Inspection {
  constructor(private readonly state: PortalState) {}

  calls(query: CallQuery = {}): CallView[] {
    return this.state.calls
      .all()
      .filter(
        (call) =>
          (query.CALL_ID === undefined || call.CALL_ID === query.CALL_ID) &&
          (query.EXTERNAL_CALL_ID === undefined || call.EXTERNAL_CALL_ID === query.EXTERNAL_CALL_ID) &&
          (query.USER_ID === undefined || call.USER_ID === query.USER_ID),
      )
      .map(callView);
  }

  /** Records with every field, as crm.<entity>.get answers them. */
  crm(entity: CrmEntityType): Record<string, unknown>[] {
    const { crm } = this.state;
    return crm.query(entity, {}, {}).map((record) => crm.present(entity, record));
  }

  tasks(): Record<string, unknown>[] {
    return this.state.tasks.query({}, {}).map((task) => this.state.tasks.present(task));
  }

  users(): Record<string, unknown>[] {
    return this.state.employees.all().map((employee) => this.state.employees.present(employee));
  }

  budget(): { level: number; ratePerSecond: number; burst: number } {
    const { budget } = this.state;
    return { level: budget.currentLevel(), ratePerSecond: budget.ratePerSecond, burst: budget.burst };
  }
}
