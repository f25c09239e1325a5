import { CallRecord } from './call';
import { cardKey, cardOpenFor } from './call-card';
import { MissedTaskState, missedTaskState } from './missed-call-task';

/** What `GET /v1/calls/:callId` and the admin list show of a call (docs/API.md). */
export interface CallStatusView {
  callId: string;
  state: CallRecord['state'];
  crm: {
    callId: string | null;
    entityType: string | null;
    entityId: number | null;
    createdLead: number | null;
  };
  attempts: number;
  lastError: string | null;
  nextStep: string | null;
  waitingForStart: boolean;
  routedToDefaultUser: boolean;
  /** Only when the PBX named no direction: the rule that inferred it. */
  directionInferred?: string;
  recording: 'none' | 'pending' | 'attached' | 'failed';
  /**
   * How the recording reaches the portal (docs/API.md): `url` (RECORD_URL), `fetch` (downloaded by the
   * bridge), `push` (PUT by the PBX); with its size once the bridge holds it.
   */
  recordingDetail?: { via: 'url' | 'fetch' | 'push'; bytes: number | null; upload: 'content' | 'url' | null };
  /**
   * The call card (docs/API.md): who the call rang, who answered last, and who may still have the card open
   * (internal numbers, or `user:<id>`).
   */
  card: { ringing: string[]; answeredBy: string | null; openFor: string[] };
  /** MISSED_CALL_TASK, only for a missed inbound call given a task (docs/API.md): its portal id and state. */
  missedTask?: { id: number | null; state: MissedTaskState; deadline: string; calledBackBy: string | null };
  /** Click-to-call: the portal's own CALL_ID, and how the PBX's report was tied to it (docs/API.md). */
  clickToCall?: { portalCallId: string; matchedBy: 'crmCallId' | 'click'; finishedBy?: string };
  updatedAt: string;
}

export function toStatusView(call: CallRecord): CallStatusView {
  return {
    callId: call.callId,
    state: call.state,
    crm: {
      callId: call.portalCallId ?? null,
      entityType: call.crmEntityType ?? null,
      entityId: call.crmEntityId ?? null,
      createdLead: call.createdLead ?? null,
    },
    attempts: call.attempts,
    lastError: call.lastError ?? null,
    nextStep: call.nextStep ?? null,
    waitingForStart: call.nextStep === 'wait-start',
    routedToDefaultUser: call.routedToDefaultUser,
    directionInferred: call.directionInferred,
    recording:
      !call.ended?.recordingUrl && !call.recording
        ? 'none'
        : call.recordAttached
          ? 'attached'
          : call.recordFailed
            ? 'failed'
            : 'pending',
    recordingDetail: call.recording
      ? {
          via: call.recording.source,
          bytes: call.recording.bytes ?? null,
          upload: call.recording.upload ?? null,
        }
      : call.ended?.recordingUrl
        ? { via: 'url', bytes: null, upload: null }
        : undefined,
    card: {
      ringing: call.ringing ?? [cardKey(call.extension, call.userId)].filter((key) => key !== undefined),
      answeredBy: call.answeredBy ?? null,
      openFor: cardOpenFor(call),
    },
    missedTask: call.missedTask && {
      id: call.missedTask.id ?? null,
      state: missedTaskState(call.missedTask),
      deadline: call.missedTask.deadline,
      calledBackBy: call.missedTask.calledBackBy ?? null,
    },
    clickToCall: call.clickToCall && { ...call.clickToCall },
    updatedAt: new Date(call.updatedAt).toISOString(),
  };
}
