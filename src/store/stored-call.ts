import {
  CallCard,
  CallDelivery,
  CallEnd,
  CallParty,
  CallPortal,
  CallRecord,
  CallRecording,
  CallTranscript,
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
  transcript?: CallTranscript;
  consecutiveFailures: number;
  failed: boolean;
  lastError?: string;
  ignored?: boolean;
  createdAt: number;
  updatedAt: number;
}

/**
 * Where each part's field lives in the flat row: one table for both directions, typed so that a part's new
 * field that the row would not carry fails to compile (`Required<…>`: every field of every part is named).
 */
type Columns<Part> = { readonly [K in keyof Required<Part>]: ColumnOf<Part[K]> };

/** The flat row's columns whose values have exactly this type (`undefined` aside). */
type ColumnOf<T> = {
  [C in keyof FlatCallRecord]-?: Same<
    Exclude<FlatCallRecord[C], undefined>,
    Exclude<T, undefined>
  > extends true
    ? C
    : never;
}[keyof FlatCallRecord];
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

const PARTS: {
  readonly party: Columns<CallParty>;
  readonly card: Columns<CallCard>;
  readonly portal: Columns<CallPortal>;
  readonly recording: Columns<CallRecording>;
  readonly delivery: Columns<CallDelivery>;
} = {
  party: {
    direction: 'direction',
    directionInferred: 'directionInferred',
    phoneNumber: 'phoneNumber',
    extension: 'extension',
    userId: 'userId',
    startedAt: 'startedAt',
    line: 'line',
    heardRinging: 'show',
    heardStart: 'heardStart',
    ringing: 'ringing',
    ringingSinceAnswer: 'ringingSinceAnswer',
    answeredAt: 'answeredAt',
    answeredBy: 'answeredBy',
    ended: 'ended',
    holdUntil: 'holdUntil',
    holdExpired: 'holdExpired',
  },
  card: {
    registerKey: 'cardRegisterKey',
    shown: 'cardShown',
    maybe: 'cardMaybe',
    sending: 'cardSending',
    users: 'cardUsers',
    toHide: 'cardToHide',
    userIds: 'cardUserIds',
  },
  portal: {
    user: 'portalUser',
    finishUser: 'finishUser',
    binding: 'crmBinding',
    routedToDefaultUser: 'routedToDefaultUser',
    callId: 'portalCallId',
    clickToCall: 'clickToCall',
    entityType: 'crmEntityType',
    entityId: 'crmEntityId',
    createdLead: 'createdLead',
    finished: 'finishedOnPortal',
    lineTerms: 'lineTerms',
  },
  recording: { attached: 'recordAttached', failed: 'recordFailed', file: 'recording' },
  delivery: {
    state: 'state',
    nextStep: 'nextStep',
    dueAt: 'dueAt',
    retryAt: 'retryAt',
    attempts: 'attempts',
    stepsSent: 'stepsSent',
    refused: 'refused',
    batchLimit: 'batchLimit',
    consecutiveFailures: 'consecutiveFailures',
    failed: 'failed',
    lastError: 'lastError',
    ignored: 'ignored',
  },
};

type PartName = keyof typeof PARTS;
const PART_NAMES = Object.keys(PARTS) as PartName[];
/** Each part's [field, column] pairs, listed once: every read and write of a call walks them. */
const PART_COLUMNS = PART_NAMES.map((name) => [name, Object.entries(PARTS[name])] as const);

/** The call in a row's `data`, as its parts. */
export function callFromStored(data: string): CallRecord {
  return upgradeFlat(JSON.parse(data) as FlatCallRecord);
}

/** The call as a row's `data`: flat, as every release reads it (fields the record lacks left out). */
export function callToStored(call: CallRecord): string {
  const flat: Record<string, unknown> = {
    portalId: call.portalId,
    callId: call.callId,
    missedTask: call.task,
    transcript: call.transcript,
    createdAt: call.createdAt,
    updatedAt: call.updatedAt,
  };
  for (const [name, columns] of PART_COLUMNS) {
    const part = call[name] as unknown as Record<string, unknown>;
    for (const [field, column] of columns) flat[column] = part[field];
  }
  return JSON.stringify(flat);
}

/** The flat record as parts: every field where its part keeps it, fields the row lacked left out. */
export function upgradeFlat(flat: FlatCallRecord): CallRecord {
  const row = flat as unknown as Record<string, unknown>;
  // The keys a stored row did not have are left out (JSON has no undefined), in the parts and around them.
  const call: Record<string, unknown> = {};
  const put = (target: Record<string, unknown>, key: string, value: unknown) => {
    if (value !== undefined) target[key] = value;
  };
  put(call, 'portalId', flat.portalId);
  put(call, 'callId', flat.callId);
  put(call, 'createdAt', flat.createdAt);
  put(call, 'updatedAt', flat.updatedAt);
  for (const [name, columns] of PART_COLUMNS) {
    const part: Record<string, unknown> = {};
    for (const [field, column] of columns) put(part, field, row[column]);
    call[name] = part;
  }
  put(call, 'task', flat.missedTask);
  put(call, 'transcript', flat.transcript);
  return call as unknown as CallRecord;
}
