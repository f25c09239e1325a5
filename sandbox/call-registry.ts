import { randomBytes } from 'node:crypto';
import { phoneDigits } from './phone';

/** A repeated register within this window, for the same call that is not finished, answers the same CALL_ID. */
export const REGISTER_DEDUPE_WINDOW_MS = 30 * 60 * 1000;

export interface CallFinish {
  USER_ID: number;
  DURATION: number;
  STATUS_CODE: string;
  FAILED_REASON: string;
  COST: number | null;
  COST_CURRENCY: string;
  VOTE: number | null;
  ADD_TO_CHAT: boolean;
  STATISTIC_ID: number;
  CRM_ACTIVITY_ID: number | null;
  /** ms since the epoch (sandbox clock). */
  at: number;
}

export interface CallRecording {
  RECORD_URL?: string;
  FILENAME?: string;
  FILE_ID: number;
  /** Decoded size of FILE_CONTENT; the content itself is not kept, to keep memory flat. */
  bytes?: number;
  /** sha256 (hex) of the file's bytes, so tests compare what arrived with what was sent. */
  sha256?: string;
  /** How it came: `url` (RECORD_URL), `content` (FILE_CONTENT) or `upload` (POST to the uploadUrl). */
  via?: 'url' | 'content' | 'upload';
  at: number;
}

/** An attachRecord answered with an uploadUrl, waiting for its file. */
export interface PendingUpload {
  callId: string;
  FILENAME: string;
}

/** One change of a call card: `register` (SHOW=1) and `show` open it, `hide` and `finish` close it. */
export interface CardChange {
  at: number;
  by: 'register' | 'show' | 'hide' | 'finish';
  shown: number[];
  hidden: number[];
}

/** What register answered; a deduplicated register answers it again. */
export interface RegisterAnswer {
  CALL_ID: string;
  CRM_CREATED_LEAD: number | null;
  CRM_CREATED_ENTITIES: { ENTITY_TYPE: string; ENTITY_ID: number }[];
  CRM_ENTITY_TYPE: string;
  CRM_ENTITY_ID: number | null;
}

export interface PortalCall {
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
  /** Users whose call card is currently shown. */
  shownTo: number[];
  /** Every change of the card, oldest first: who saw it appear or disappear, and through which method. */
  cardLog: CardChange[];
  answer: RegisterAnswer;
  registerRequests: number;
  registeredAt: number;
  finished: CallFinish | null;
  /** Every successful attachRecord, oldest first; the last one is the recording in effect. */
  records: CallRecording[];
}

/** Calls registered through telephony.externalcall.*, with the register dedupe index. */
export class CallRegistry {
  private readonly calls = new Map<string, PortalCall>();
  private readonly byDedupeKey = new Map<string, string>();
  private nextStatisticId = 1;
  private nextFileId = 1;
  private nextActivityId = 1;
  private nextUploadId = 1;
  /** uploadUrl token → the attachRecord it answered. */
  private readonly uploads = new Map<string, PendingUpload>();

  /** An uploadUrl token for a file of `call` (attachRecord without content or URL). */
  expectUpload(call: PortalCall, fileName: string): string {
    const token = `${this.nextUploadId++}-${Math.random().toString(36).slice(2, 10)}`;
    this.uploads.set(token, { callId: call.CALL_ID, FILENAME: fileName });
    return token;
  }

  /** The upload a token stands for, used once. */
  takeUpload(token: string): PendingUpload | undefined {
    const upload = this.uploads.get(token);
    this.uploads.delete(token);
    return upload;
  }

  static newCallId(now: number): string {
    return `externalCall.${randomBytes(16).toString('hex')}.${Math.floor(now / 1000)}`;
  }

  get(callId: string): PortalCall | undefined {
    return this.calls.get(callId);
  }

  all(): PortalCall[] {
    return [...this.calls.values()];
  }

  /**
   * The unfinished call a repeated register refers to, if it was registered less than 30 minutes ago with
   * the same user, number, type, line (LINE_NUMBER; another line is another call) and EXTERNAL_CALL_ID.
   */
  findRepeat(key: RegisterKey, now: number): PortalCall | undefined {
    if (key.externalCallId === '') return undefined;
    const callId = this.byDedupeKey.get(dedupeKey(key));
    const call = callId === undefined ? undefined : this.calls.get(callId);
    if (!call || call.finished || now - call.registeredAt >= REGISTER_DEDUPE_WINDOW_MS) return undefined;
    return call;
  }

  add(call: PortalCall): void {
    this.calls.set(call.CALL_ID, call);
    if (call.EXTERNAL_CALL_ID !== '') {
      this.byDedupeKey.set(keyOf(call), call.CALL_ID);
    }
  }

  finish(call: PortalCall, finish: Omit<CallFinish, 'STATISTIC_ID' | 'CRM_ACTIVITY_ID'>): CallFinish {
    const done: CallFinish = {
      ...finish,
      STATISTIC_ID: this.nextStatisticId++,
      CRM_ACTIVITY_ID: call.answer.CRM_ENTITY_ID === null ? null : this.nextActivityId++,
    };
    call.finished = done;
    // finish closes the card of the user it names; anyone else shown it keeps it until a hide.
    if (call.shownTo.includes(done.USER_ID)) {
      call.shownTo = call.shownTo.filter((id) => id !== done.USER_ID);
      call.cardLog.push({ at: done.at, by: 'finish', shown: [], hidden: [done.USER_ID] });
    }
    this.byDedupeKey.delete(keyOf(call));
    return done;
  }

  /**
   * A repeated attachRecord replaces the recording on the portal (the last entry is the one in effect);
   * every attach is kept so tests can count them.
   */
  attach(call: PortalCall, recording: Omit<CallRecording, 'FILE_ID'>): CallRecording {
    const stored: CallRecording = { ...recording, FILE_ID: this.nextFileId++ };
    call.records.push(stored);
    return stored;
  }

  clear(): void {
    this.uploads.clear();
    this.calls.clear();
    this.byDedupeKey.clear();
  }
}

/** What makes a repeated register the same call. */
export interface RegisterKey {
  userId: number;
  phone: string;
  type: number;
  line: string;
  externalCallId: string;
}

function dedupeKey({ userId, phone, type, line, externalCallId }: RegisterKey): string {
  return `${userId}|${phoneDigits(phone)}|${type}|${line}|${externalCallId}`;
}

function keyOf(call: PortalCall): string {
  return dedupeKey({
    userId: call.USER_ID,
    phone: call.PHONE_NUMBER,
    type: call.TYPE,
    line: call.LINE_NUMBER,
    externalCallId: call.EXTERNAL_CALL_ID,
  });
}
