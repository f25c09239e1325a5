import { CallEvent, Direction, EndStatus } from '../../calls/call';
import { recordingUrlOf } from '../../pbx/adapters/recording-url';
import { AmiMessage } from './ami-message';
import { ChannelKind, Endpoints } from './endpoints';

/** One channel as the tracker last saw it. */
interface Channel {
  uniqueid: string;
  name: string;
  linkedid: string;
  kind: ChannelKind;
  extension?: string;
  bridge?: string;
}

/** One call from or to outside: one Linkedid (the callId), followed until its outside party hangs up. */
interface TrackedCall {
  callId: string;
  direction: Direction;
  phoneNumber: string;
  /** The outside party's channel (the trunk leg): its hang-up ends the call. */
  outside: string;
  startedAt: number;
  /** call.started sent (or queued): inbound calls start when the first phone rings. */
  started: boolean;
  /** Ringing legs (dialled phone or queue member's Local ;1) → the internal number they ring. */
  ringing: Map<string, string>;
  /** Everyone this call rang, in order, for the call.ended of a call nobody answered. */
  rang: string[];
  /** Phones a `call.started` of this call named: a phone ringing later gets a later one (its card). */
  announced: Set<string>;
  /** When the phones of a later `call.started` held for parallel dials began ringing. */
  lateAt?: number;
  /** Outbound: the employee who dialled. */
  caller?: string;
  answeredBy?: string;
  /** When a phone, or a forward to an outside number, first took the call: talk time counts from here. */
  answeredAt?: number;
  /** Dial outcomes (DialEnd DialStatus) of legs that did not answer. */
  outcomes: string[];
  recording: Recording;
}

/** Where a call's recording is: FreePBX's `CDR(recordingfile)` (a bare file name), MIXMONITOR_FILENAME (a path). */
interface Recording {
  recordingFile?: string;
  mixMonitorFile?: string;
}

export interface TrackerOptions {
  /** ASTERISK_RECORDING_URL: turns a recording's file name into a URL. */
  recordingTemplate?: string;
  /** Calls held at once; past it the oldest is forgotten (and counted lost): memory stays bounded. */
  maxCalls?: number;
  /** PBX_TIME_ZONE: the zone of the PBX's date folders (a recording whose path or name has no date). */
  timeZone?: string;
  /**
   * Channels held at once; past it one is forgotten: the oldest belonging to no call, else the oldest that
   * is not a call's outside party (whose hang-up ends the call).
   */
  maxChannels?: number;
}

/** What a resync found: calls seen live before and gone after, and what it delivered. */
export interface ResyncOutcome {
  /** Calls followed before the connection dropped whose outside party is gone: their end is unknown. */
  lost: string[];
  /** Channels created and hung up while nobody listened (gap in Uniqueid counters); -1 when unknown. */
  unseenChannels: number;
  events: CallEvent[];
}

const ANSWER = 'ANSWER';

/**
 * Turns the AMI events of one Asterisk (chan_pjsip, FreePBX 16/17 or plain dialplan) into our call events.
 * Pure: it is fed events (`handle`) and returns call events; `flush` releases starts held so that a ring
 * group's parallel dials land in one `call.started`. One call = one Linkedid = the callId the CDR route uses.
 *
 * - A call exists only when an outside party is in it: a trunk channel that starts its own Linkedid (inbound)
 *   or a trunk dialled by a phone (outbound). Phone-to-phone calls never become calls.
 * - Inbound `call.started` when the first phone rings (`DialBegin` to a phone, `AgentCalled`), with every
 *   phone ringing by the next flush; outbound when the phone dials the trunk. A phone that starts ringing
 *   later while nobody has answered (a queue's next member, a hunt or memory-hunt ring group's next round,
 *   follow-me) gives a later `call.started` naming the phones ringing then: the intake shows them the card.
 * - `call.answered` whenever the phone connected to the outside party changes: found by walking the outside
 *   channel's bridge, through Local `;1`/`;2` pairs (queues), to a phone. Blind and attended transfers, queue
 *   agents and the Linkedid rewrite all come down to "who is in the outside party's bridge now", so none is
 *   keyed on the Linkedid of the transfer target.
 * - `call.ended` when the outside channel hangs up; talk time from the first answer; a call no phone answered
 *   (voicemail answering the trunk does not count) is missed (busy when every leg was busy).
 * - A call's memory is dropped when it ends; channels when they hang up.
 */
export class CallTracker {
  private readonly channels = new Map<string, Channel>();
  private readonly byName = new Map<string, string>();
  private readonly bridges = new Map<string, Set<string>>();
  private readonly calls = new Map<string, TrackedCall>();
  /** Outside party's Uniqueid → its call's callId. */
  private readonly outsides = new Map<string, string>();
  /** Recording names a Linkedid's channels gave before its call opened (FreePBX records outbound pre-dial). */
  private readonly recordedEarly = new Map<string, Recording>();
  private readonly pendingStarts = new Set<string>();
  /** Channels hung up lately: an event about one after its Hangup (NewAccountCode) does not bring it back. */
  private readonly gone = new Set<string>();
  /** SequenceNumbers seen lately (manager debug): several manager sessions repeat events. */
  private readonly sequence = new Set<string>();
  /** The PBX's clock minus the bridge's (ms), from the last clock reading (`noteClock`). */
  private pbxOffset = 0;
  private readonly maxCalls: number;
  private readonly maxChannels: number;
  /** Highest Uniqueid counter seen, per prefix (before the last dot): tells channels never seen. */
  private highestCounter?: { prefix: string; counter: number };
  /** After a resync: channels above this counter not seen yet were created while disconnected. */
  private gapFrom?: { prefix: string; counter: number };
  private unseen = 0;
  private forgotten = 0;

  constructor(
    private readonly endpoints: Endpoints,
    private readonly options: TrackerOptions = {},
  ) {
    this.maxCalls = options.maxCalls ?? 5000;
    this.maxChannels = options.maxChannels ?? 20000;
  }

  /** Calls followed right now. */
  get activeCalls(): number {
    return this.calls.size;
  }

  /** Calls forgotten because the tracker was full (each is a lost call). */
  get forgottenCalls(): number {
    return this.forgotten;
  }

  /**
   * Channels created and hung up while nobody listened, from gaps in Uniqueid counters (counted at a resync
   * and when the first channel after it appears); a lower bound, 0 across an Asterisk restart.
   */
  get unseenChannels(): number {
    return this.unseen;
  }

  /** Whether the call of this callId (Linkedid) is followed now: its outside party is live. */
  follows(callId: string): boolean {
    return this.calls.has(callId);
  }

  /** Channels held right now. */
  get activeChannels(): number {
    return this.channels.size;
  }

  /**
   * The PBX's clock read at `pbxMs` when the bridge's read `now` (a Ping's `Timestamp`, asked at each login):
   * resyncs and events without a `Timestamp` are put on the PBX's clock, so one call never mixes the two.
   */
  noteClock(pbxMs: number, now: number): void {
    if (Number.isFinite(pbxMs)) this.pbxOffset = pbxMs - now;
  }

  /**
   * The call events `event` gives; `now` is when it arrived (ms). Its time is its `Timestamp`
   * (timestampevents=yes), else `now` on the PBX's clock as last read. An event whose SequenceNumber was
   * just seen (several manager sessions, manager debug) is a repeat and gives nothing.
   */
  handle(event: AmiMessage, now: number): CallEvent[] {
    if (this.repeated(event.SequenceNumber)) return [];
    const at = (event.Timestamp && Math.round(Number(event.Timestamp) * 1000)) || now + this.pbxOffset;
    const out: CallEvent[] = [];
    switch (event.Event) {
      case 'Newchannel':
        this.newChannel(event, at);
        break;
      case 'DialBegin':
        this.dialBegin(event, at, out);
        break;
      case 'AgentCalled':
        this.agentCalled(event, at);
        break;
      case 'DialEnd':
        this.flushInto(out);
        this.dialEnd(event);
        break;
      case 'AgentRingNoAnswer':
        this.stopRinging(event.DestUniqueid);
        break;
      case 'BridgeEnter':
        this.flushInto(out);
        this.bridgeEnter(event, at, out);
        break;
      case 'BridgeLeave':
        this.bridgeLeave(event);
        break;
      case 'VarSet':
        this.varSet(event);
        break;
      case 'Newexten':
        this.newExten(event);
        break;
      case 'NewCallerid':
        this.newCallerid(event);
        break;
      case 'Hangup':
        this.flushInto(out);
        this.hangup(event, at, out);
        break;
      default:
        this.see(event, '');
    }
    return out;
  }

  /** Starts are held (a ring group's parallel dials are still arriving). */
  get holdsStarts(): boolean {
    return this.pendingStarts.size > 0;
  }

  /** call.started held for parallel dials: released shortly after the first dial (the follower's timer). */
  flush(): CallEvent[] {
    const out: CallEvent[] = [];
    this.flushInto(out);
    return out;
  }

  /**
   * After a reconnect: `live` is what `CoreShowChannels` listed (`CoreShowChannel` events). Channels and
   * bridges are rebuilt from it; a call followed before whose outside channel is gone ended unseen (lost
   * without a ledger); calls that began while disconnected and are still up are followed from here.
   * `answeredAt`: when a call this tracker never saw answered was answered, as stored (a takeover after
   * another replica followed it): its talk time counts from then, not from the resync. Taken as given: it
   * is on the clock of the events (their `Timestamp`), as the hang-up it is subtracted from will be. `now` is
   * the bridge's clock; what the resync dates is put on the PBX's (`noteClock`).
   */
  resync(
    live: AmiMessage[],
    now: number,
    answeredAt: ReadonlyMap<string, number> = new Map(),
  ): ResyncOutcome {
    now += this.pbxOffset;
    const before = this.highestCounter;
    const liveIds = new Set(live.map((channel) => channel.Uniqueid).filter(Boolean));
    const lost: string[] = [];
    for (const call of [...this.calls.values()]) {
      if (liveIds.has(call.outside)) continue;
      lost.push(call.callId);
      this.forget(call);
    }
    this.channels.clear();
    this.byName.clear();
    this.bridges.clear();
    this.recordedEarly.clear();
    // A new session: its SequenceNumbers are not repeats of the last one's (they restart with Asterisk).
    this.sequence.clear();
    this.gone.clear();
    for (const entry of live) {
      const channel = this.see(entry, '');
      if (channel && entry.BridgeId) this.join(channel, entry.BridgeId);
    }
    const events: CallEvent[] = [];
    // Calls that began while nobody listened: started from the live channels.
    for (const entry of live) {
      const channel = this.channels.get(entry.Uniqueid);
      if (!channel || channel.kind !== 'trunk' || this.callOf(channel)) continue;
      const startedAt = now - durationMs(entry.Duration);
      if (channel.linkedid === channel.uniqueid) {
        this.openInbound(channel, entry.CallerIDNum, startedAt);
      } else {
        const root = this.channels.get(channel.linkedid);
        if (root?.kind !== 'phone' && root?.kind !== 'local') continue;
        const call = this.openOutbound(channel, root, entry.CallerIDNum, startedAt);
        events.push(this.startedEvent(call, startedAt));
      }
    }
    for (const call of this.calls.values()) {
      if (!call.started && call.direction === 'inbound') {
        for (const channel of this.channels.values()) {
          if (
            channel.kind === 'phone' &&
            channel.linkedid === call.callId &&
            channel.uniqueid !== call.outside
          ) {
            this.ring(call, channel.uniqueid, channel.extension, now);
          }
        }
      }
    }
    this.flushInto(events);
    for (const call of this.calls.values()) {
      this.checkAnswer(call, answeredAt.get(call.callId) ?? now, events);
    }
    const unseenChannels = this.unseenSince(before, liveIds);
    if (unseenChannels > 0) this.unseen += unseenChannels;
    this.gapFrom = unseenChannels >= 0 ? this.highestCounter : undefined;
    return { lost, unseenChannels, events };
  }

  // ---- events -------------------------------------------------------------------------------------------

  private newChannel(event: AmiMessage, at: number): void {
    const channel = this.see(event, '');
    if (!channel || channel.kind !== 'trunk') return;
    // A trunk channel that starts its own Linkedid was not dialled by anyone here: a call from outside.
    if (channel.linkedid === channel.uniqueid && !this.calls.has(channel.linkedid)) {
      this.openInbound(channel, event.CallerIDNum, at);
    }
  }

  private dialBegin(event: AmiMessage, at: number, out: CallEvent[]): void {
    const caller = this.see(event, '');
    const dest = this.see(event, 'Dest');
    if (!dest) return;
    const call = this.callOf(dest) ?? (caller && this.callOf(caller));
    if (dest.kind === 'phone') {
      if (call) this.ring(call, dest.uniqueid, dest.extension, at);
      return;
    }
    if (dest.kind !== 'trunk' || call) return;
    // A phone (or a click-to-call's Local half, or an Originate with no caller) dialling a trunk: outbound.
    const root = caller ?? this.channels.get(dest.linkedid);
    if (caller && caller.kind !== 'phone' && caller.kind !== 'local') return;
    // The dialled leg's caller id is often `<unknown>` at first (real PBX output): the dial string has it.
    const number = [event.DestCallerIDNum, event.DialString?.split('@')[0]].find(isNumber);
    const outbound = this.openOutbound(dest, root, number, at);
    this.flushInto(out);
    out.push(this.startedEvent(outbound, at));
  }

  private agentCalled(event: AmiMessage, at: number): void {
    const customer = this.see(event, '');
    const member = this.see(event, 'Dest');
    const call = (customer && this.callOf(customer)) ?? (member && this.callOf(member));
    const extension = this.endpoints.memberExtension(event.Interface, event.MemberName);
    if (call && member) this.ring(call, member.uniqueid, extension, at);
  }

  private dialEnd(event: AmiMessage): void {
    const caller = this.see(event, '');
    const dest = this.see(event, 'Dest');
    if (!dest) return;
    const status = event.DialStatus ?? '';
    const call = this.callOf(dest) ?? (caller && this.callOf(caller));
    this.stopRinging(dest.uniqueid);
    if (status === ANSWER) return; // who talks is decided by the bridge the outside party joins
    if (call && (dest.kind === 'phone' || dest.kind === 'trunk' || dest.kind === 'local')) {
      call.outcomes.push(status);
    }
  }

  private bridgeEnter(event: AmiMessage, at: number, out: CallEvent[]): void {
    const channel = this.see(event, '');
    const bridge = event.BridgeUniqueid;
    if (!channel || !bridge) return;
    if (event.SwapUniqueid) this.leave(event.SwapUniqueid);
    this.join(channel, bridge);
    for (const call of this.callsAround(bridge)) this.checkAnswer(call, at, out);
  }

  private bridgeLeave(event: AmiMessage): void {
    const channel = this.see(event, '');
    if (channel) this.leave(channel.uniqueid);
  }

  private varSet(event: AmiMessage): void {
    if (event.Variable !== 'MIXMONITOR_FILENAME' || !event.Value) {
      this.see(event, '');
      return;
    }
    const recording = this.recordingOf(event);
    if (recording) recording.mixMonitorFile = event.Value;
  }

  private newExten(event: AmiMessage): void {
    const app = event.Application;
    // FreePBX writes CDR(recordingfile) with Set(): a function write, seen only as the Newexten's AppData.
    const file = /CDR\(recordingfile\)=([^,)\s]+)/.exec(event.AppData ?? '')?.[1];
    const path = (event.AppData ?? '').split(',')[0];
    if (!(app === 'Set' && file) && !(app === 'MixMonitor' && path.startsWith('/'))) {
      this.see(event, '');
      return;
    }
    const recording = this.recordingOf(event);
    if (!recording) return;
    if (file) recording.recordingFile = file;
    else recording.mixMonitorFile ??= path;
  }

  /**
   * Where the recording named by `event` is kept: its call's, or, before the call opens (FreePBX records an
   * outbound call at the route's first priority, before the trunk is dialled), its Linkedid's until it does.
   */
  private recordingOf(event: AmiMessage): Recording | undefined {
    const channel = this.see(event, '');
    if (!channel) return undefined;
    const call = this.callOf(channel);
    if (call) return call.recording;
    let early = this.recordedEarly.get(channel.linkedid);
    if (!early) {
      if (this.recordedEarly.size >= this.maxChannels) this.recordedEarly.delete(first(this.recordedEarly));
      this.recordedEarly.set(channel.linkedid, (early = {}));
    }
    return early;
  }

  /** A caller id set later (`<unknown>` first, or masked and presentation prohibited): the outside number. */
  private newCallerid(event: AmiMessage): void {
    const channel = this.see(event, '');
    const callId = channel && this.outsides.get(channel.uniqueid);
    const call = callId === undefined ? undefined : this.calls.get(callId);
    if (!call) return;
    if (withheld(event['CID-CallingPres'])) call.phoneNumber = ANONYMOUS;
    else if (isNumber(event.CallerIDNum)) call.phoneNumber = outsideNumber(event.CallerIDNum);
  }

  private hangup(event: AmiMessage, at: number, out: CallEvent[]): void {
    const channel = this.see(event, '');
    if (!channel) return;
    const call = this.callOf(channel);
    this.stopRinging(channel.uniqueid);
    this.drop(channel);
    remember(this.gone, channel.uniqueid);
    if (channel.uniqueid === channel.linkedid) this.recordedEarly.delete(channel.linkedid);
    if (call && call.outside === channel.uniqueid) {
      out.push(this.endedEvent(call, at));
      this.forget(call);
    }
  }

  // ---- calls --------------------------------------------------------------------------------------------

  private openInbound(channel: Channel, callerNum: string | undefined, at: number): TrackedCall {
    return this.open({
      callId: channel.linkedid,
      direction: 'inbound',
      phoneNumber: outsideNumber(callerNum),
      outside: channel.uniqueid,
      startedAt: at,
      started: false,
      ringing: new Map(),
      rang: [],
      announced: new Set(),
      outcomes: [],
      recording: {},
    });
  }

  private openOutbound(
    trunk: Channel,
    root: Channel | undefined,
    number: string | undefined,
    at: number,
  ): TrackedCall {
    return this.open({
      callId: trunk.linkedid,
      direction: 'outbound',
      phoneNumber: outsideNumber(number),
      outside: trunk.uniqueid,
      startedAt: at,
      started: true,
      ringing: new Map(),
      rang: [],
      announced: new Set(),
      caller: root?.extension,
      outcomes: [],
      recording: {},
    });
  }

  private open(call: TrackedCall): TrackedCall {
    if (this.calls.size >= this.maxCalls) {
      const oldest = this.calls.values().next().value;
      if (oldest) {
        this.forget(oldest);
        this.forgotten++;
      }
    }
    const early = this.recordedEarly.get(call.callId);
    if (early) call.recording = early;
    this.recordedEarly.delete(call.callId);
    this.calls.set(call.callId, call);
    this.outsides.set(call.outside, call.callId);
    return call;
  }

  private forget(call: TrackedCall): void {
    this.calls.delete(call.callId);
    this.pendingStarts.delete(call.callId);
    if (this.outsides.get(call.outside) === call.callId) this.outsides.delete(call.outside);
  }

  private ring(call: TrackedCall, leg: string, extension: string | undefined, at: number): void {
    if (!extension) return;
    call.ringing.set(leg, extension);
    if (!call.rang.includes(extension)) call.rang.push(extension);
    if (!call.started) {
      call.started = true;
      this.pendingStarts.add(call.callId);
    } else if (call.direction === 'inbound' && !call.announced.has(extension)) {
      // Started before this phone rang (a queue's next member, a hunt group, a blind transfer's target): a
      // later start names it, held like the first for parallel dials, also after the answer.
      if (!this.pendingStarts.has(call.callId)) call.lateAt = at;
      this.pendingStarts.add(call.callId);
    }
  }

  private stopRinging(leg: string | undefined): void {
    if (!leg) return;
    for (const call of this.calls.values()) call.ringing.delete(leg);
  }

  private flushInto(out: CallEvent[]): void {
    for (const callId of this.pendingStarts) {
      const call = this.calls.get(callId);
      if (!call) continue;
      // Once answered, a start goes only for a phone ringing now (the one it rang may be answered meanwhile).
      if (call.answeredAt === undefined || call.ringing.size > 0) {
        out.push(this.startedEvent(call, call.lateAt ?? call.startedAt));
      }
      call.lateAt = undefined;
    }
    this.pendingStarts.clear();
  }

  /**
   * The phone now connected to the outside party; a new one is a `call.answered` (again on each transfer).
   * Connected to another trunk instead (a follow-me or call-forward to an outside number): the call was
   * taken, by nobody the portal knows: answered from now, with no `call.answered`.
   */
  private checkAnswer(call: TrackedCall, at: number, out: CallEvent[]): void {
    const party = this.connectedParty(call.outside);
    if (party?.kind === 'trunk') {
      call.answeredAt ??= at;
      return;
    }
    const extension = party?.extension;
    if (!extension || extension === call.answeredBy) return;
    if (!call.started) {
      call.started = true;
      out.push(this.startedEvent(call, call.startedAt, extension));
    }
    call.answeredBy = extension;
    call.answeredAt ??= at;
    // The card now is the answerer's alone: any phone ringing for the call from here on is shown it anew.
    call.announced = new Set([extension]);
    out.push({ event: 'call.answered', callId: call.callId, extension, at: iso(at) });
  }

  /**
   * Walks bridges and Local pairs from `start` to the first phone (queues: trunk ⇄ ;1 … ;2 ⇄ phone), or to
   * another trunk (forwarded out: trunk ⇄ ;1 … ;2 ⇄ trunk).
   */
  private connectedParty(start: string): Channel | undefined {
    const seen = new Set<string>([start]);
    const queue = [start];
    while (queue.length > 0 && seen.size < 64) {
      const channel = this.channels.get(queue.shift() as string);
      if (!channel) continue;
      const next: string[] = [];
      if (channel.kind === 'local') {
        const partner = this.partnerOf(channel);
        if (partner) next.push(partner);
      }
      for (const member of channel.bridge ? (this.bridges.get(channel.bridge) ?? []) : []) {
        const other = this.channels.get(member);
        if (!other || seen.has(member)) continue;
        if (other.kind === 'phone' && other.extension) return other;
        if (other.kind === 'trunk') return other;
        if (other.kind === 'local') next.push(member);
      }
      for (const id of next) {
        if (seen.has(id)) continue;
        seen.add(id);
        queue.push(id);
      }
    }
    return undefined;
  }

  private partnerOf(local: Channel): string | undefined {
    const half = /;([12])$/.exec(local.name)?.[1];
    if (!half) return undefined;
    return this.byName.get(`${local.name.slice(0, -1)}${half === '1' ? '2' : '1'}`);
  }

  /** The calls whose channels are in `bridge` (by the members' calls, and through Local pairs). */
  private callsAround(bridge: string): TrackedCall[] {
    const found = new Set<TrackedCall>();
    for (const member of this.bridges.get(bridge) ?? []) {
      const channel = this.channels.get(member);
      if (!channel) continue;
      const call = this.callOf(channel);
      if (call) found.add(call);
    }
    for (const call of this.calls.values()) {
      const outside = this.channels.get(call.outside);
      if (outside?.bridge === bridge) found.add(call);
    }
    return [...found];
  }

  private callOf(channel: Channel): TrackedCall | undefined {
    const direct = this.calls.get(channel.linkedid);
    if (direct) return direct;
    const byOutside = this.outsides.get(channel.uniqueid);
    return byOutside === undefined ? undefined : this.calls.get(byOutside);
  }

  private startedEvent(call: TrackedCall, at: number, answerer?: string): CallEvent {
    const extensions = [...new Set(call.ringing.values())];
    if (extensions.length === 0 && answerer) extensions.push(answerer);
    const extension = call.direction === 'outbound' ? call.caller : extensions[0];
    for (const named of extensions) call.announced.add(named);
    return {
      event: 'call.started',
      callId: call.callId,
      direction: call.direction,
      phoneNumber: call.phoneNumber,
      ...(extension ? { extension } : {}),
      ...(call.direction === 'inbound' && extensions.length > 1
        ? { extensions: extensions.slice(0, 50) }
        : {}),
      at: iso(at),
    };
  }

  private endedEvent(call: TrackedCall, at: number): CallEvent {
    const { status, failedReason } = this.statusOf(call);
    // The full path when known (FreePBX's date folders are in it), else FreePBX's bare name.
    const file = call.recording.mixMonitorFile ?? call.recording.recordingFile;
    const recordingUrl =
      status === 'answered'
        ? recordingUrlOf(file, this.options.recordingTemplate, {
            at: call.startedAt,
            timeZone: this.options.timeZone,
          })
        : undefined;
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
    };
  }

  private statusOf(call: TrackedCall): { status: EndStatus; failedReason?: string } {
    if (call.answeredAt !== undefined) return { status: 'answered' };
    const outcomes = call.outcomes;
    if (call.direction === 'inbound') {
      return { status: outcomes.length > 0 && outcomes.every((o) => o === 'BUSY') ? 'busy' : 'missed' };
    }
    const last = outcomes[outcomes.length - 1];
    switch (last) {
      case 'BUSY':
        return { status: 'busy' };
      case 'NOANSWER':
        return { status: 'missed' };
      case undefined:
      case 'CANCEL':
        return { status: 'cancelled' };
      default:
        return { status: 'failed', failedReason: last };
    }
  }

  // ---- channels -----------------------------------------------------------------------------------------

  /** The channel a snapshot block (`prefix` '' or 'Dest') describes: registered when new, Linkedid updated. */
  private see(event: AmiMessage, prefix: string): Channel | undefined {
    const uniqueid = event[`${prefix}Uniqueid`];
    const name = event[`${prefix}Channel`];
    if (!uniqueid || !name || this.gone.has(uniqueid)) return undefined;
    const linkedid = event[`${prefix}Linkedid`] || uniqueid;
    let channel = this.channels.get(uniqueid);
    if (!channel) {
      const kind = this.endpoints.classify(name);
      channel = { uniqueid, name, linkedid, kind: kind.kind, extension: kind.extension };
      if (this.channels.size >= this.maxChannels) this.evictChannel();
      this.channels.set(uniqueid, channel);
      this.byName.set(name, uniqueid);
      this.noteCounter(uniqueid);
    } else if (channel.linkedid !== linkedid) {
      // Pushed into a bridge with an older call: Asterisk rewrote its Linkedid (attended transfer).
      channel.linkedid = linkedid;
    }
    return channel;
  }

  /**
   * Makes room for a channel: forgets the oldest belonging to no call (a phone-to-phone leg whose Hangup was
   * missed), else the oldest that is not a call's outside party, from every map at once.
   */
  private evictChannel(): void {
    let fallback: Channel | undefined;
    for (const channel of this.channels.values()) {
      if (this.outsides.has(channel.uniqueid)) continue;
      if (!this.callOf(channel)) return this.drop(channel);
      fallback ??= channel;
    }
    if (fallback) this.drop(fallback);
  }

  private drop(channel: Channel): void {
    this.leave(channel.uniqueid);
    this.channels.delete(channel.uniqueid);
    if (this.byName.get(channel.name) === channel.uniqueid) this.byName.delete(channel.name);
  }

  private join(channel: Channel, bridge: string): void {
    if (channel.bridge && channel.bridge !== bridge) this.leave(channel.uniqueid);
    channel.bridge = bridge;
    let members = this.bridges.get(bridge);
    if (!members) this.bridges.set(bridge, (members = new Set()));
    members.add(channel.uniqueid);
  }

  private leave(uniqueid: string): void {
    const channel = this.channels.get(uniqueid);
    if (!channel?.bridge) return;
    const members = this.bridges.get(channel.bridge);
    members?.delete(uniqueid);
    if (members?.size === 0) this.bridges.delete(channel.bridge);
    channel.bridge = undefined;
  }

  /** Whether a SequenceNumber was seen lately. */
  private repeated(sequence: string | undefined): boolean {
    if (!sequence) return false;
    if (this.sequence.has(sequence)) return true;
    remember(this.sequence, sequence);
    return false;
  }

  private noteCounter(uniqueid: string): void {
    const parsed = counterOf(uniqueid);
    if (!parsed) return;
    const gap = this.gapFrom;
    if (gap && gap.prefix === parsed.prefix && parsed.counter > gap.counter) {
      this.unseen += parsed.counter - gap.counter - 1;
      this.gapFrom = undefined;
    }
    const highest = this.highestCounter;
    if (!highest || highest.prefix !== parsed.prefix || parsed.counter > highest.counter) {
      this.highestCounter = parsed;
    }
  }

  /**
   * Channels whose Uniqueid counter lies between the highest seen before the drop and the highest live now
   * but that were not listed: created and gone while disconnected. -1 when Asterisk restarted (new prefix).
   */
  private unseenSince(
    before: { prefix: string; counter: number } | undefined,
    live: Set<string | undefined>,
  ): number {
    const now = this.highestCounter;
    if (!before || !now) return 0;
    if (before.prefix !== now.prefix) return -1;
    let listed = 0;
    for (const id of live) {
      const parsed = id ? counterOf(id) : undefined;
      if (parsed && parsed.prefix === before.prefix && parsed.counter > before.counter) listed++;
    }
    return Math.max(0, now.counter - before.counter - listed);
  }
}

/** `<systemname->epoch.counter`: the counter restarts with Asterisk, so it only counts within one run. */
function counterOf(uniqueid: string): { prefix: string; counter: number } | undefined {
  const match = /^(.*?)(\d+)\.(\d+)$/.exec(uniqueid);
  if (!match) return undefined;
  return { prefix: match[1], counter: Number(match[3]) };
}

const ANONYMOUS = 'anonymous';

/**
 * An outside party's number as reported: `anonymous` for one withheld or that is not a number (`<unknown>`,
 * `anonymous`, `restricted`, `unavailable`, empty, masked like `+31260xxxxxx`).
 */
function outsideNumber(value: string | undefined): string {
  return isNumber(value) ? (value as string).trim() : ANONYMOUS;
}

function isNumber(value: string | undefined): boolean {
  return /^\+?\d[\d\s().-]*$/.test(value?.trim() ?? '');
}

/**
 * A caller id presentation (`CID-CallingPres: 33 (Presentation Prohibited, Passed Screen)`) that withholds
 * the number: Asterisk's AST_PRES_RESTRICTED (0x20) or AST_PRES_UNAVAILABLE (0x40) bits.
 */
function withheld(presentation: string | undefined): boolean {
  const value = Number.parseInt(presentation ?? '', 10);
  return Number.isFinite(value) && (value & 0x60) !== 0;
}

/** Adds to a set of recent values that keeps the last 4 096. */
function remember(recent: Set<string>, value: string): void {
  if (recent.size >= 4096) recent.delete(first(recent));
  recent.add(value);
}

function first<K>(keyed: { keys(): IterableIterator<K> }): K {
  return keyed.keys().next().value as K;
}

/** `HH:MM:SS` (CoreShowChannel Duration) in ms. */
function durationMs(value: string | undefined): number {
  const parts = (value ?? '').split(':').map(Number);
  if (parts.length !== 3 || parts.some((part) => !Number.isFinite(part))) return 0;
  return ((parts[0] * 60 + parts[1]) * 60 + parts[2]) * 1000;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
