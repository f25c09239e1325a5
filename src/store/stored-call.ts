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
  MissedTask,
  PortalStep,
  PortalUser,
  RecordingUpload,
} from '../calls/call';

/**
 * A call as rows stored before the record had parts hold it (one flat object; `data` of the `calls` table
 * up to the parts). Read only, to upgrade: every write stores the parts.
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
  createdAt: number;
  updatedAt: number;
}

/** The call in a row's `data`: the parts as stored, or a flat record (stored before them) upgraded. */
export function callFromStored(data: string): CallRecord {
  const stored = JSON.parse(data) as CallRecord | FlatCallRecord;
  return isParts(stored) ? stored : upgradeFlat(stored);
}

/** Every call written since the parts has `delivery`; no flat record ever had it. */
function isParts(stored: CallRecord | FlatCallRecord): stored is CallRecord {
  return typeof (stored as Partial<CallRecord>).delivery === 'object';
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
