import { CallDelivery, CallRecord } from './call';
import { cardKey, cardOpenFor } from './call-card';
import { MissedTaskState, missedTaskState } from './missed-call-task';

/** What `GET /v1/calls/:callId` and the admin list show of a call (docs/API.md). */
export interface CallStatusView {
  callId: string;
  state: CallDelivery['state'];
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
  /** The call's line (docs/API.md "Lines"), once its start details are known. */
  line?: string;
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
  /**
   * The call's transcript (SPEC §12), only for an answered call whose held recording is transcribed: its
   * state and how many messages the service gave.
   */
  transcript?: { state: 'pending' | 'attached' | 'none' | 'failed'; messages: number };
  updatedAt: string;
}

export function toStatusView(call: CallRecord): CallStatusView {
  return {
    callId: call.callId,
    state: call.delivery.state,
    crm: {
      callId: call.portal.callId ?? null,
      entityType: call.portal.entityType ?? null,
      entityId: call.portal.entityId ?? null,
      createdLead: call.portal.createdLead ?? null,
    },
    attempts: call.delivery.attempts,
    lastError: call.delivery.lastError ?? null,
    nextStep: call.delivery.nextStep ?? null,
    waitingForStart: call.delivery.nextStep === 'wait-start',
    routedToDefaultUser: call.portal.routedToDefaultUser,
    directionInferred: call.party.directionInferred,
    line: call.party.line,
    recording:
      !call.party.ended?.recordingUrl && !call.recording.file
        ? 'none'
        : call.recording.attached
          ? 'attached'
          : call.recording.failed
            ? 'failed'
            : 'pending',
    recordingDetail: call.recording.file
      ? {
          via: call.recording.file.source,
          bytes: call.recording.file.bytes ?? null,
          upload: call.recording.file.upload ?? null,
        }
      : call.party.ended?.recordingUrl
        ? { via: 'url', bytes: null, upload: null }
        : undefined,
    card: {
      ringing:
        call.party.ringing ??
        [cardKey(call.party.extension, call.party.userId)].filter((key) => key !== undefined),
      answeredBy: call.party.answeredBy ?? null,
      openFor: cardOpenFor(call),
    },
    missedTask: call.task && {
      id: call.task.id ?? null,
      state: missedTaskState(call.task),
      deadline: call.task.deadline,
      calledBackBy: call.task.calledBackBy ?? null,
    },
    clickToCall: call.portal.clickToCall && { ...call.portal.clickToCall },
    transcript: call.transcript && {
      state: call.transcript.state,
      messages: call.transcript.messages?.length ?? 0,
    },
    updatedAt: new Date(call.updatedAt).toISOString(),
  };
}
