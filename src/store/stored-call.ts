import {
  CallCard,
  CallDelivery,
  CallEnd,
  CallParty,
  CallPortal,
  CallRecord,
  CardTarget,
  ClickToCall,
  CrmBinding,
  Direction,
  LineTerms,
  MissedTask,
  PortalStep,
  PortalUser,
  RecordingUpload,
} from '../calls/call';

/**
 * A call as the `calls` table's `data` holds it: one flat object, the shape every release so far has read.
 * The record has parts in memory only: during a rolling update the previous release reads and writes the
 * same rows (docs/OPERATIONS.md, "Upgrading"), so the stored shape stays the one it knows.
 */
export interface FlatCallRecord {
  portalId: string;
  callId: string;
  direction?: Direction;
  directionInferred?: string;
  phoneNumber?: string;
  extension?: string;
  userId?: number;
  startedAt?: string;
  line?: string;
  show: boolean;
  heardStart: boolean;
  ringing?: string[];
  ringingSinceAnswer?: string[];
  answeredAt?: string;
  answeredBy?: string;
  cardRegisterKey?: string;
  cardShown?: string[];
  cardMaybe?: string[];
  cardSending?: { show?: CardTarget; hide?: CardTarget };
  cardUsers?: Record<string, number>;
  finishUser?: PortalUser;
  ended?: CallEnd;
  holdUntil?: number;
  holdExpired?: boolean;
  portalUser?: PortalUser;
  crmBinding?: CrmBinding | null;
  routedToDefaultUser: boolean;
  portalCallId?: string;
  clickToCall?: ClickToCall;
  crmEntityType?: string;
  crmEntityId?: number;
  createdLead?: number;
  finishedOnPortal: boolean;
  lineTerms?: LineTerms;
  recordAttached: boolean;
  recordFailed: boolean;
  recording?: RecordingUpload;
  state: CallDelivery['state'];
  nextStep?: CallDelivery['nextStep'];
  dueAt?: number;
  retryAt?: number;
  attempts: number;
  stepsSent: Partial<Record<PortalStep, number>>;
  refused?: Partial<Record<PortalStep, number>>;
  batchLimit?: number;
  cardToHide?: boolean;
  cardUserIds?: number[];
  missedTask?: MissedTask;
  consecutiveFailures: number;
  failed: boolean;
  lastError?: string;
  ignored?: boolean;
  createdAt: number;
  updatedAt: number;
}

/** The call in a row's `data`, as its parts. */
export function callFromStored(data: string): CallRecord {
  return upgradeFlat(JSON.parse(data) as FlatCallRecord);
}

/** The call as a row's `data`: flat, as every release reads it (fields the record lacks left out). */
export function callToStored(call: CallRecord): string {
  const { party, card, portal, recording, delivery } = call;
  const flat: FlatCallRecord = {
    portalId: call.portalId,
    callId: call.callId,
    direction: party.direction,
    directionInferred: party.directionInferred,
    phoneNumber: party.phoneNumber,
    extension: party.extension,
    userId: party.userId,
    startedAt: party.startedAt,
    line: party.line,
    show: party.heardRinging,
    heardStart: party.heardStart,
    ringing: party.ringing,
    ringingSinceAnswer: party.ringingSinceAnswer,
    answeredAt: party.answeredAt,
    answeredBy: party.answeredBy,
    cardRegisterKey: card.registerKey,
    cardShown: card.shown,
    cardMaybe: card.maybe,
    cardSending: card.sending,
    cardUsers: card.users,
    finishUser: portal.finishUser,
    ended: party.ended,
    holdUntil: party.holdUntil,
    holdExpired: party.holdExpired,
    portalUser: portal.user,
    crmBinding: portal.binding,
    routedToDefaultUser: portal.routedToDefaultUser,
    portalCallId: portal.callId,
    clickToCall: portal.clickToCall,
    crmEntityType: portal.entityType,
    crmEntityId: portal.entityId,
    createdLead: portal.createdLead,
    finishedOnPortal: portal.finished,
    lineTerms: portal.lineTerms,
    recordAttached: recording.attached,
    recordFailed: recording.failed,
    recording: recording.file,
    state: delivery.state,
    nextStep: delivery.nextStep,
    dueAt: delivery.dueAt,
    retryAt: delivery.retryAt,
    attempts: delivery.attempts,
    stepsSent: delivery.stepsSent,
    refused: delivery.refused,
    batchLimit: delivery.batchLimit,
    cardToHide: card.toHide,
    cardUserIds: card.userIds,
    missedTask: call.task,
    consecutiveFailures: delivery.consecutiveFailures,
    failed: delivery.failed,
    lastError: delivery.lastError,
    ignored: delivery.ignored,
    createdAt: call.createdAt,
    updatedAt: call.updatedAt,
  };
  return JSON.stringify(flat);
}

/** The flat record as parts: every field where its part keeps it, fields the row lacked left out. */
export function upgradeFlat(flat: FlatCallRecord): CallRecord {
  const party: CallParty = defined({
    direction: flat.direction,
    directionInferred: flat.directionInferred,
    phoneNumber: flat.phoneNumber,
    extension: flat.extension,
    userId: flat.userId,
    startedAt: flat.startedAt,
    line: flat.line,
    heardRinging: flat.show,
    heardStart: flat.heardStart,
    ringing: flat.ringing,
    ringingSinceAnswer: flat.ringingSinceAnswer,
    answeredAt: flat.answeredAt,
    answeredBy: flat.answeredBy,
    ended: flat.ended,
    holdUntil: flat.holdUntil,
    holdExpired: flat.holdExpired,
  });
  const card: CallCard = defined({
    registerKey: flat.cardRegisterKey,
    shown: flat.cardShown,
    maybe: flat.cardMaybe,
    sending: flat.cardSending,
    users: flat.cardUsers,
    toHide: flat.cardToHide,
    userIds: flat.cardUserIds,
  });
  const portal: CallPortal = defined({
    user: flat.portalUser,
    finishUser: flat.finishUser,
    binding: flat.crmBinding,
    routedToDefaultUser: flat.routedToDefaultUser,
    callId: flat.portalCallId,
    clickToCall: flat.clickToCall,
    entityType: flat.crmEntityType,
    entityId: flat.crmEntityId,
    createdLead: flat.createdLead,
    finished: flat.finishedOnPortal,
    lineTerms: flat.lineTerms,
  });
  const delivery: CallDelivery = defined({
    state: flat.state,
    nextStep: flat.nextStep,
    dueAt: flat.dueAt,
    retryAt: flat.retryAt,
    attempts: flat.attempts,
    stepsSent: flat.stepsSent,
    refused: flat.refused,
    batchLimit: flat.batchLimit,
    consecutiveFailures: flat.consecutiveFailures,
    failed: flat.failed,
    lastError: flat.lastError,
    ignored: flat.ignored,
  });
  return defined({
    portalId: flat.portalId,
    callId: flat.callId,
    createdAt: flat.createdAt,
    updatedAt: flat.updatedAt,
    party,
    card,
    portal,
    recording: defined({ attached: flat.recordAttached, failed: flat.recordFailed, file: flat.recording }),
    task: flat.missedTask,
    delivery,
  });
}

/** The object without the keys a stored row did not have (JSON has no undefined). */
function defined<T extends object>(fields: T): T {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as T;
}
