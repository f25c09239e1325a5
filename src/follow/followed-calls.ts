import { CallEvent, Direction, EndStatus } from '../calls/call';
import { normaliseLine } from '../common/line-number';

/** One call from or to outside as a tracker (AMI, event socket) follows it, until its outside party hangs up. */
export interface FollowedCall {
  callId: string;
  direction: Direction;
  phoneNumber: string;
  /** The outside party's channel (the trunk leg): its hang-up ends the call. */
  outside: string;
  startedAt: number;
  /** call.started sent (or held): inbound calls start when the first phone rings. */
  started: boolean;
  /** Ringing legs → the internal number they ring. */
  ringing: Map<string, string>;
  /** Everyone this call rang, in order, for the call.ended of a call nobody answered. */
  rang: string[];
  /** Outbound: the employee who dialled. */
  caller?: string;
  /** Click-to-call: the portal's CALL_ID the dialer put on the originate (event socket only). */
  crmCallId?: string;
  /**
   * The company's number the call came in on (the DID) or went out from (the caller ID presented outside):
   * its line (docs/API.md "Lines"), as the PBX gave it; the intake normalises it.
   */
  line?: string;
  answeredBy?: string;
  /** When the call was first taken: talk time counts from here. */
  answeredAt?: number;
}

/** What a tracker knows of a call when it opens it. */
export interface CallOpening {
  callId: string;
  direction: Direction;
  phoneNumber: string;
  outside: string;
  at: number;
  caller?: string;
  crmCallId?: string;
  line?: string;
}

/** A call not started yet (inbound calls start when a phone rings), ringing nobody. */
export function followedCall({ at, ...opening }: CallOpening): FollowedCall {
  return { ...opening, startedAt: at, started: false, ringing: new Map(), rang: [] };
}

/**
 * The calls a tracker follows, by callId and by outside party, bounded: past `maxCalls` the oldest is
 * forgotten (and counted: a lost call). Also the `call.started`s held for parallel dials.
 */
export class CallTable<Call extends FollowedCall> {
  private readonly calls = new Map<string, Call>();
  private readonly byOutside = new Map<string, string>();
  /** Calls whose `call.started` waits for more parallel dials → the time it gives (PBX clock, ms). */
  private readonly pendingStarts = new Map<string, number>();
  private forgottenCalls = 0;
  private openedCalls = 0;

  constructor(private readonly maxCalls: number) {}

  get size(): number {
    return this.calls.size;
  }

  get forgotten(): number {
    return this.forgottenCalls;
  }

  /** Calls opened since start (resyncs' included): every call followed so far. */
  get opened(): number {
    return this.openedCalls;
  }

  get holdsStarts(): boolean {
    return this.pendingStarts.size > 0;
  }

  get(callId: string): Call | undefined {
    return this.calls.get(callId);
  }

  values(): Call[] {
    return [...this.calls.values()];
  }

  /** The call whose outside party is `id`. */
  ofOutside(id: string): Call | undefined {
    const callId = this.byOutside.get(id);
    return callId === undefined ? undefined : this.calls.get(callId);
  }

  isOutside(id: string): boolean {
    return this.byOutside.has(id);
  }

  open(call: Call): Call {
    if (this.calls.size >= this.maxCalls) {
      const oldest = this.calls.values().next().value;
      if (oldest) {
        this.forget(oldest);
        this.forgottenCalls++;
      }
    }
    this.calls.set(call.callId, call);
    this.byOutside.set(call.outside, call.callId);
    this.openedCalls++;
    return call;
  }

  forget(call: Call): void {
    this.calls.delete(call.callId);
    this.pendingStarts.delete(call.callId);
    if (this.byOutside.get(call.outside) === call.callId) this.byOutside.delete(call.outside);
  }

  /** The outside party's channel got a new id (FreeSWITCH's CHANNEL_UUID). */
  renameOutside(old: string, id: string): void {
    const call = this.ofOutside(old);
    if (!call) return;
    this.byOutside.delete(old);
    this.byOutside.set(id, call.callId);
    call.outside = id;
  }

  /** Holds the call's `call.started` (dated `at`) unless one is held already. */
  holdStart(call: Call, at: number): void {
    if (!this.pendingStarts.has(call.callId)) this.pendingStarts.set(call.callId, at);
  }

  /** The held starts, each with its time, now released. */
  takeStarts(): [Call, number][] {
    const taken: [Call, number][] = [];
    for (const [callId, at] of this.pendingStarts) {
      const call = this.calls.get(callId);
      if (call) taken.push([call, at]);
    }
    this.pendingStarts.clear();
    return taken;
  }
}

type StartedEventOf<Call> = (call: Call, at: number, answerer?: string) => CallEvent;

/**
 * What the trackers (AMI's CallTracker, the event socket's EslTracker) share: the calls they follow, the
 * `call.started`s held for parallel dials, and the calls a resync finds gone.
 */
export abstract class FollowedCallTracker<Call extends FollowedCall> {
  protected readonly calls: CallTable<Call>;

  constructor(
    maxCalls: number,
    private readonly startedEventOf: StartedEventOf<Call>,
  ) {
    this.calls = new CallTable(maxCalls);
  }

  get activeCalls(): number {
    return this.calls.size;
  }

  /** Calls followed since start, live or over. */
  get followedCalls(): number {
    return this.calls.opened;
  }

  /** Calls forgotten because the tracker was full (each is a lost call). */
  get forgottenCalls(): number {
    return this.calls.forgotten;
  }

  get holdsStarts(): boolean {
    return this.calls.holdsStarts;
  }

  /** call.started held for parallel dials: released shortly after the first dial (the follower's timer). */
  flush(): CallEvent[] {
    const out: CallEvent[] = [];
    this.flushInto(out);
    return out;
  }

  protected flushInto(out: CallEvent[]): void {
    for (const [call, at] of this.calls.takeStarts()) {
      if (this.releases(call)) out.push(this.startedEventOf(call, at));
    }
  }

  /** Whether a held start still goes out when released. */
  protected releases(_call: Call): boolean {
    return true;
  }

  /** After a reconnect: the calls whose outside party is gone ended unseen (their end is unknown here). */
  protected forgetGone(live: (outside: string) => boolean): string[] {
    const lost: string[] = [];
    for (const call of this.calls.values()) {
      if (live(call.outside)) continue;
      lost.push(call.callId);
      this.calls.forget(call);
    }
    return lost;
  }

  /** A phone rings: the first ring starts the call (held for parallel dials), a later one (`again`) too. */
  protected holdRing(call: Call, at: number, again: boolean): void {
    if (!call.started) {
      call.started = true;
      this.calls.holdStart(call, call.startedAt);
    } else if (again) {
      this.calls.holdStart(call, at);
    }
  }

  /** A phone answers a call not started yet (its ring was never seen): the start comes first, naming it. */
  protected startAnswered(call: Call, extension: string, out: CallEvent[]): void {
    if (call.started) return;
    call.started = true;
    out.push(this.startedEventOf(call, call.startedAt, extension));
  }
}

/** The phones ringing for the call now, or the one that answered a call whose ring was never seen. */
export function ringingNow(call: FollowedCall, answerer?: string): string[] {
  const extensions = [...new Set(call.ringing.values())];
  if (extensions.length === 0 && answerer) extensions.push(answerer);
  return extensions;
}

/** Notes a phone ringing for the call; whether it rang already (another device of it, a repeat). */
export function noteRinging(call: FollowedCall, leg: string, extension: string): boolean {
  const ringingAlready = [...call.ringing.values()].includes(extension);
  call.ringing.set(leg, extension);
  if (!call.rang.includes(extension)) call.rang.push(extension);
  return ringingAlready;
}

export function startedEvent(
  call: FollowedCall,
  at: number,
  extension: string | undefined,
  extensions: string[],
): CallEvent {
  return {
    event: 'call.started',
    callId: call.callId,
    direction: call.direction,
    phoneNumber: call.phoneNumber,
    ...(extension ? { extension } : {}),
    ...(extensions.length > 1 ? { extensions: extensions.slice(0, 50) } : {}),
    ...(call.crmCallId ? { crmCallId: call.crmCallId } : {}),
    ...(call.line ? { line: call.line } : {}),
    at: iso(at),
  };
}

/** Notes who took the call and gives its `call.answered`. */
export function answeredEvent(call: FollowedCall, extension: string, at: number): CallEvent {
  call.answeredBy = extension;
  call.answeredAt ??= at;
  return { event: 'call.answered', callId: call.callId, extension, at: iso(at) };
}

export interface EndOutcome {
  status: EndStatus;
  failedReason?: string;
}

/** The call.ended of a call whose outside party hung up at `at`: talk time from the first answer. */
export function endedEvent(
  call: FollowedCall,
  at: number,
  { status, failedReason }: EndOutcome,
  recordingUrl: string | undefined,
): CallEvent {
  const extension = call.answeredBy ?? (call.direction === 'outbound' ? call.caller : call.rang[0]);
  return {
    event: 'call.ended',
    callId: call.callId,
    direction: call.direction,
    phoneNumber: call.phoneNumber,
    ...(extension ? { extension } : {}),
    startedAt: iso(call.startedAt),
    at: iso(at),
    durationSec: call.answeredAt === undefined ? 0 : Math.max(0, Math.round((at - call.answeredAt) / 1000)),
    status,
    ...(failedReason ? { failedReason } : {}),
    ...(recordingUrl ? { recordingUrl } : {}),
    ...(call.crmCallId ? { crmCallId: call.crmCallId } : {}),
    ...(call.line ? { line: call.line } : {}),
  };
}

/**
 * A PBX's value (a DID, a presented caller ID) as a followed call's line: trimmed, or undefined when it is
 * none (empty, `<unknown>`, the `s` extension: no digit; anything the intake would refuse as a line), so a
 * bad value never costs the event it rides on.
 */
export function followedLine(value: string | undefined): string | undefined {
  const text = value?.trim();
  if (!text || !/\d/.test(text)) return undefined;
  return normaliseLine(text) === undefined ? undefined : text;
}

/** An inbound call no phone took: busy when every leg that rang was busy, else missed. */
export function unansweredInbound(outcomes: string[], busy: string): EndOutcome {
  return { status: outcomes.length > 0 && outcomes.every((o) => o === busy) ? 'busy' : 'missed' };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
