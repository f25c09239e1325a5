import { CallFinish, PortalCall, RegisterAnswer } from './call-registry';
import { CrmEntityKind } from './crm-store';
import { PortalState } from './portal-state';
import { PortalTranscript } from './transcript-store';

/**
 * A call as tests see it: what register was sent, what it answered (flattened), and what happened since.
 * `registerRequests` counts the register commands that reached it (more than 1 when repeats were deduplicated).
 */
export type CallView = Omit<PortalCall, 'answer' | 'finished'> &
  Pick<RegisterAnswer, 'CRM_ENTITY_TYPE' | 'CRM_ENTITY_ID' | 'CRM_CREATED_LEAD'> & {
    finished: Omit<CallFinish, 'STATISTIC_ID'> | null;
  };

export interface CallQuery {
  CALL_ID?: string;
  EXTERNAL_CALL_ID?: string;
  USER_ID?: number;
}

function callView(call: PortalCall): CallView {
  const { answer, finished, ...sent } = call;
  return {
    ...sent,
    shownTo: [...call.shownTo],
    cardLog: call.cardLog.map((change) => ({ ...change })),
    CRM_ENTITY_TYPE: answer.CRM_ENTITY_TYPE,
    CRM_ENTITY_ID: answer.CRM_ENTITY_ID,
    CRM_CREATED_LEAD: answer.CRM_CREATED_LEAD,
    finished: finished && withoutStatisticId(finished),
    records: call.records.map((record) => ({ ...record })),
  };
}

function withoutStatisticId(finished: CallFinish): Omit<CallFinish, 'STATISTIC_ID'> {
  const { STATISTIC_ID: _statisticId, ...shown } = finished;
  return shown;
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
  crm(entity: CrmEntityKind): Record<string, unknown>[] {
    const { crm } = this.state;
    return crm.query(entity, {}, {}).map((record) => crm.present(entity, record));
  }

  /**
   * Tasks with every field, optionally filtered like tasks.task.list (`{xmlId: …}`: the tasks one call's
   * marker made, so a test sees how many tasks a call got).
   */
  tasks(filter: Record<string, unknown> = {}): Record<string, unknown>[] {
    return this.state.tasks.query(filter, {}).map((task) => this.state.tasks.present(task));
  }

  /** Transcripts attached so far, oldest first (one call's when `callId` is given; a repeat is a second one). */
  transcripts(callId?: string): PortalTranscript[] {
    return this.state.transcripts.list(callId);
  }

  users(): Record<string, unknown>[] {
    return this.state.employees.all().map((employee) => this.state.employees.present(employee));
  }

  budget(): { level: number; ratePerSecond: number; burst: number } {
    const { budget } = this.state;
    return { level: budget.currentLevel(), ratePerSecond: budget.ratePerSecond, burst: budget.burst };
  }
}
