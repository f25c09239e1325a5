/** The call as the bridge knows it: what the PBX said, and how far delivery to the portal has come. */

export type CallEventName = 'call.started' | 'call.answered' | 'call.ended';
export type Direction = 'inbound' | 'outbound';
export type EndStatus = 'answered' | 'missed' | 'busy' | 'declined' | 'cancelled' | 'failed';
export type CallState = 'queued' | 'registered' | 'finished' | 'failed';
/** What delivery must do next; `wait-start` is a call.ended held until its call.started arrives. */
export type DeliveryStep = 'register' | 'finish' | 'attachRecord' | 'wait-start';
export type PortalStep = Exclude<DeliveryStep, 'wait-start'>;

/** One PBX event after validation and normalisation (phone in E.164). */
export interface CallEvent {
  event: CallEventName;
  callId: string;
  at: string;
  direction?: Direction;
  phoneNumber?: string;
  extension?: string;
  userId?: number;
  startedAt?: string;
  durationSec?: number;
  status?: EndStatus;
  failedReason?: string;
  recordingUrl?: string;
}

/** The employee a call is registered to on the portal, exactly as sent (a retried register must match). */
export interface PortalUser {
  USER_ID?: number;
  USER_PHONE_INNER?: string;
}

export interface CrmBinding {
  CRM_ENTITY_TYPE: string;
  CRM_ENTITY_ID: number;
}

export interface CallEnd {
  at: string;
  durationSec: number;
  status: EndStatus;
  failedReason?: string;
  recordingUrl?: string;
}

export interface CallRecord {
  portalId: string;
  callId: string;
  direction?: Direction;
  phoneNumber?: string;
  extension?: string;
  userId?: number;
  /** When the call began, with the UTC offset the PBX gave. */
  startedAt?: string;
  /** Pop the call card: true only for calls the bridge hears about while they ring. */
  show: boolean;
  heardStart: boolean;
  answeredAt?: string;
  answeredBy?: string;
  ended?: CallEnd;
  /** call.ended without start details waits until then for its call.started (ms epoch). */
  holdUntil?: number;

  portalUser?: PortalUser;
  /** With B24_BIND_CRM_ENTITY: the client the register binds the call to (null: none found), fixed once. */
  crmBinding?: CrmBinding | null;
  routedToDefaultUser: boolean;
  portalCallId?: string;
  crmEntityType?: string;
  crmEntityId?: number;
  createdLead?: number;
  finishedOnPortal: boolean;
  recordAttached: boolean;
  recordFailed: boolean;

  state: CallState;
  nextStep?: DeliveryStep;
  /** When delivery may next act on this call (ms epoch); unset when nothing is due. */
  dueAt?: number;
  /** Earliest next attempt after a retryable failure (ms epoch). */
  retryAt?: number;
  /** Portal commands sent for this call, in all. */
  attempts: number;
  /** Commands sent per step, counted before sending: tells a repeat from a first try after a lost answer. */
  stepsSent: Partial<Record<PortalStep, number>>;
  consecutiveFailures: number;
  failed: boolean;
  lastError?: string;
  createdAt: number;
  updatedAt: number;
}

export function hasStartDetails(call: CallRecord): boolean {
  return Boolean(call.direction && call.phoneNumber && call.startedAt);
}
