import { CallEvent } from '../../calls/call';
import { answeredEvent, FollowedCallTracker, followedLine, noteRinging } from '../followed-calls';
import { AmiMessage } from './ami-message';
import { EarlyLines, lineNoteOf, LineNotes, lineOf, presentedLine } from './call-lines';
import { ANONYMOUS, isNumber, outsideNumber, withheld } from './caller-id';
import { Channel, ChannelMap, ChannelRole, durationMs, first, remember } from './channel-map';
import { Endpoints } from './endpoints';
import { Recording, recordingUpdate } from './recordings';
import { endedEventOf, newCall, startedEventOf, TrackedCall } from './tracked-call';
import { UniqueidGaps } from './uniqueid-gaps';

export interface TrackerOptions {
  /** ASTERISK_RECORDING_URL: turns a recording's file name into a URL. */
  recordingTemplate?: string;
  /** Calls held at once; past it the oldest is forgotten (and counted lost): memory stays bounded. */
  maxCalls?: number;
  /** PBX_TIME_ZONE: the zone of the PBX's date folders (a recording whose path or name has no date). */
  timeZone?: string;
  /** Channels held at once (channel-map.ts says which one is forgotten past it). */
  maxChannels?: number;
}

export interface ResyncOutcome {
  /** Calls followed before the connection dropped whose outside party is gone: their end is unknown. */
  lost: string[];
  /** Channels created and hung up while nobody listened (gap in Uniqueid counters); -1 when unknown. */
  unseenChannels: number;
  events: CallEvent[];
}

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
 */
export class CallTracker extends FollowedCallTracker<TrackedCall> {
  private readonly gaps = new UniqueidGaps();
  private readonly channels: ChannelMap;
  /** Recording names a Linkedid's channels gave before its call opened (FreePBX records outbound pre-dial). */
  private readonly recordedEarly = new Map<string, Recording>();
  /** Line notes a Linkedid's channels gave before its call opened (CDR(outbound_cnum), set pre-dial). */
  private readonly linesEarly: EarlyLines;
  /** SequenceNumbers seen lately (manager debug): several manager sessions repeat events. */
  private readonly sequence = new Set<string>();
  /** The PBX's clock minus the bridge's (ms), from the last clock reading (`noteClock`). */
  private pbxOffset = 0;
  private readonly maxChannels: number;

  constructor(
    private readonly endpoints: Endpoints,
    private readonly options: TrackerOptions = {},
  ) {
    super(options.maxCalls ?? 5000, startedEventOf);
    this.maxChannels = options.maxChannels ?? 20000;
    this.linesEarly = new EarlyLines(this.maxChannels);
    this.channels = new ChannelMap(this.endpoints, this.maxChannels, this.gaps, (channel) =>
      this.roleOf(channel),
    );
  }

  get unseenChannels(): number {
    return this.gaps.unseen;
  }

  get activeChannels(): number {
    return this.channels.size;
  }

  /** The channel map's indexes, bounded with it (what the memory spec checks). */
  private get byName(): ReadonlyMap<string, string> {
    return this.channels.byName;
  }

  private get bridges(): ReadonlyMap<string, Set<string>> {
    return this.channels.bridges;
  }

  /** Whether the call of this callId (Linkedid) is followed now: its outside party is live. */
  follows(callId: string): boolean {
    return this.calls.get(callId) !== undefined;
  }

  /**
   * The PBX's clock read at `pbxMs` when the bridge's read `now` (a Ping's `Timestamp`, asked at each login):
   * resyncs and events without a `Timestamp` are put on the PBX's clock, so one call never mixes the two.
   */
  noteClock(pbxMs: number, now: number): void {
    if (Number.isFinite(pbxMs)) this.pbxOffset = pbxMs - now;
  }

  /**
   * The call events `event` gives, dated by its `Timestamp` (timestampevents=yes), else by `now` on the PBX's
   * clock. A SequenceNumber just seen (several manager sessions, manager debug) is a repeat: nothing.
   */
  handle(event: AmiMessage, now: number): CallEvent[] {
    if (this.repeated(event.SequenceNumber)) return [];
    const at = (event.Timestamp && Math.round(Number(event.Timestamp) * 1000)) || now + this.pbxOffset;
    const out: CallEvent[] = [];
    const line = lineNoteOf(event);
    if (line) this.noteLine(event, line);
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
      case 'Newexten':
        this.noteRecording(event);
        break;
      case 'NewCallerid':
        this.newCallerid(event);
        break;
      case 'Hangup':
        this.flushInto(out);
        this.hangup(event, at, out);
        break;
      default:
        this.channels.see(event);
    }
    return out;
  }

  /**
   * After a reconnect: `live` is what `CoreShowChannels` listed (`CoreShowChannel` events). Channels and
   * bridges are rebuilt from it; a call followed before whose outside channel is gone ended unseen (lost
   * without a ledger); calls that began while disconnected and are still up are followed from here.
   * `answeredAt`: when a call this tracker never saw answered was answered, as stored (a takeover after
   * another replica followed it), on the clock of the events as the hang-up it is subtracted from will be.
   * `now` is the bridge's clock; what the resync dates is put on the PBX's (`noteClock`).
   */
  resync(
    live: AmiMessage[],
    now: number,
    answeredAt: ReadonlyMap<string, number> = new Map(),
  ): ResyncOutcome {
    now += this.pbxOffset;
    const before = this.gaps.mark;
    const liveIds = new Set(live.map((channel) => channel.Uniqueid).filter(Boolean));
    const lost = this.forgetGone((outside) => liveIds.has(outside));
    this.channels.clear();
    this.recordedEarly.clear();
    this.linesEarly.clear();
    // A new session: its SequenceNumbers are not repeats of the last one's (they restart with Asterisk).
    this.sequence.clear();
    for (const entry of live) {
      const channel = this.channels.see(entry);
      if (channel && entry.BridgeId) this.channels.join(channel, entry.BridgeId);
    }
    const events: CallEvent[] = [];
    for (const entry of live) {
      const channel = this.channels.get(entry.Uniqueid);
      if (!channel || channel.kind !== 'trunk' || this.callOf(channel)) continue;
      const startedAt = now - durationMs(entry.Duration);
      if (channel.linkedid === channel.uniqueid) {
        this.openInbound(channel, entry.CallerIDNum, startedAt);
      } else {
        const root = this.channels.get(channel.linkedid);
        if (root?.kind !== 'phone' && root?.kind !== 'local') continue;
        const presented = presentedLine(entry.ConnectedLineNum, root);
        const call = this.openOutbound(channel, root, entry.CallerIDNum, startedAt, { presented });
        events.push(startedEventOf(call, startedAt));
      }
    }
    for (const call of this.calls.values()) {
      if (call.started || call.direction !== 'inbound') continue;
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
    this.flushInto(events);
    for (const call of this.calls.values()) {
      this.checkAnswer(call, answeredAt.get(call.callId) ?? now, events);
    }
    const unseenChannels = this.gaps.settle(before, liveIds);
    return { lost, unseenChannels, events };
  }

  private newChannel(event: AmiMessage, at: number): void {
    const channel = this.channels.see(event);
    if (!channel || channel.kind !== 'trunk') return;
    // A trunk channel that starts its own Linkedid was not dialled by anyone here: a call from outside.
    if (channel.linkedid === channel.uniqueid && !this.calls.get(channel.linkedid)) {
      this.openInbound(channel, event.CallerIDNum, at, { exten: followedLine(event.Exten) });
    }
  }

  private dialBegin(event: AmiMessage, at: number, out: CallEvent[]): void {
    const caller = this.channels.see(event);
    const dest = this.channels.see(event, 'Dest');
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
    const presented = presentedLine(event.DestConnectedLineNum, root);
    const outbound = this.openOutbound(dest, root, number, at, { presented });
    this.flushInto(out);
    out.push(startedEventOf(outbound, at));
  }

  private agentCalled(event: AmiMessage, at: number): void {
    const customer = this.channels.see(event);
    const member = this.channels.see(event, 'Dest');
    const call = (customer && this.callOf(customer)) ?? (member && this.callOf(member));
    const extension = this.endpoints.memberExtension(event.Interface, event.MemberName);
    if (call && member) this.ring(call, member.uniqueid, extension, at);
  }

  private dialEnd(event: AmiMessage): void {
    const caller = this.channels.see(event);
    const dest = this.channels.see(event, 'Dest');
    if (!dest) return;
    const status = event.DialStatus ?? '';
    const call = this.callOf(dest) ?? (caller && this.callOf(caller));
    this.stopRinging(dest.uniqueid);
    if (status === 'ANSWER') return; // who talks is decided by the bridge the outside party joins
    if (call && (dest.kind === 'phone' || dest.kind === 'trunk' || dest.kind === 'local')) {
      call.outcomes.push(status);
    }
  }

  private bridgeEnter(event: AmiMessage, at: number, out: CallEvent[]): void {
    const channel = this.channels.see(event);
    const bridge = event.BridgeUniqueid;
    if (!channel || !bridge) return;
    if (event.SwapUniqueid) this.channels.leave(event.SwapUniqueid);
    this.channels.join(channel, bridge);
    for (const call of this.callsAround(bridge)) this.checkAnswer(call, at, out);
  }

  private bridgeLeave(event: AmiMessage): void {
    const channel = this.channels.see(event);
    if (channel) this.channels.leave(channel.uniqueid);
  }

  private noteRecording(event: AmiMessage): void {
    const update = recordingUpdate(event);
    if (!update) {
      this.channels.see(event);
      return;
    }
    const recording = this.recordingOf(event);
    if (recording) update(recording);
  }

  /**
   * Where the recording named by `event` is kept: its call's, or, before the call opens (FreePBX records an
   * outbound call at the route's first priority, before the trunk is dialled), its Linkedid's until it does.
   */
  private recordingOf(event: AmiMessage): Recording | undefined {
    const channel = this.channels.see(event);
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

  /** A line note: the call's when it is open (its line chosen again), else kept until it opens. */
  private noteLine(event: AmiMessage, note: LineNotes): void {
    const channel = this.channels.see(event);
    if (!channel) return;
    const call = this.callOf(channel);
    if (!call) return this.linesEarly.note(channel.linkedid, note);
    Object.assign(call.lineNotes, note);
    call.line = lineOf(call.lineNotes, call.direction);
  }

  /** A caller id set later (`<unknown>` first, or masked and presentation prohibited): the outside number. */
  private newCallerid(event: AmiMessage): void {
    const channel = this.channels.see(event);
    const call = channel && this.calls.ofOutside(channel.uniqueid);
    if (!call) return;
    if (withheld(event['CID-CallingPres'])) call.phoneNumber = ANONYMOUS;
    else if (isNumber(event.CallerIDNum)) call.phoneNumber = outsideNumber(event.CallerIDNum);
  }

  private hangup(event: AmiMessage, at: number, out: CallEvent[]): void {
    const channel = this.channels.see(event);
    if (!channel) return;
    const call = this.callOf(channel);
    this.stopRinging(channel.uniqueid);
    this.channels.hungUp(channel);
    if (channel.uniqueid === channel.linkedid) {
      this.recordedEarly.delete(channel.linkedid);
      this.linesEarly.forget(channel.linkedid);
    }
    if (call && call.outside === channel.uniqueid) {
      out.push(endedEventOf(call, at, this.options));
      this.calls.forget(call);
    }
  }

  private openInbound(
    channel: Channel,
    callerNum: string | undefined,
    at: number,
    line: LineNotes = {},
  ): TrackedCall {
    return this.open(channel, 'inbound', outsideNumber(callerNum), at, line);
  }

  private openOutbound(
    trunk: Channel,
    root: Channel | undefined,
    number: string | undefined,
    at: number,
    line: LineNotes = {},
  ): TrackedCall {
    const call = this.open(trunk, 'outbound', outsideNumber(number), at, line);
    call.started = true;
    call.caller = root?.extension;
    return call;
  }

  private open(
    outside: Channel,
    direction: TrackedCall['direction'],
    phoneNumber: string,
    at: number,
    line: LineNotes,
  ) {
    const callId = outside.linkedid;
    const recording = this.recordedEarly.get(callId) ?? {};
    this.recordedEarly.delete(callId);
    const notes = { ...line, ...this.linesEarly.take(callId) };
    const opening = { callId, direction, phoneNumber, outside: outside.uniqueid, at };
    const call = this.calls.open(newCall(opening, recording, notes));
    call.line = lineOf(notes, direction);
    return call;
  }

  private ring(call: TrackedCall, leg: string, extension: string | undefined, at: number): void {
    if (!extension) return;
    noteRinging(call, leg, extension);
    // Started before this phone rang (a queue's next member, a hunt group, a blind transfer's target): a
    // later start names it, held like the first for parallel dials, also after the answer.
    this.holdRing(call, at, call.direction === 'inbound' && !call.announced.has(extension));
  }

  private stopRinging(leg: string | undefined): void {
    if (!leg) return;
    for (const call of this.calls.values()) call.ringing.delete(leg);
  }

  /** Once answered, a start goes only for a phone ringing now (the one it rang may be answered meanwhile). */
  protected override releases(call: TrackedCall): boolean {
    return call.answeredAt === undefined || call.ringing.size > 0;
  }

  /**
   * The phone now connected to the outside party; a new one is a `call.answered` (again on each transfer).
   * Connected to another trunk instead (a follow-me or call-forward to an outside number): the call was
   * taken, by nobody the portal knows: answered from now, with no `call.answered`.
   */
  private checkAnswer(call: TrackedCall, at: number, out: CallEvent[]): void {
    const party = this.channels.connectedParty(call.outside);
    if (party?.kind === 'trunk') {
      call.answeredAt ??= at;
      return;
    }
    const extension = party?.extension;
    if (!extension || extension === call.answeredBy) return;
    this.startAnswered(call, extension, out);
    // The card now is the answerer's alone: any phone ringing for the call from here on is shown it anew.
    call.announced = new Set([extension]);
    out.push(answeredEvent(call, extension, at));
  }

  /** The calls whose channels are in `bridge` (by the members' calls, and through Local pairs). */
  private callsAround(bridge: string): TrackedCall[] {
    const found = new Set<TrackedCall>();
    for (const member of this.channels.members(bridge)) {
      const call = this.callOf(member);
      if (call) found.add(call);
    }
    for (const call of this.calls.values()) {
      if (this.channels.get(call.outside)?.bridge === bridge) found.add(call);
    }
    return [...found];
  }

  private callOf(channel: Channel): TrackedCall | undefined {
    return this.calls.get(channel.linkedid) ?? this.calls.ofOutside(channel.uniqueid);
  }

  private roleOf(channel: Channel): ChannelRole {
    if (this.calls.isOutside(channel.uniqueid)) return 'outside';
    return this.callOf(channel) ? 'in-call' : 'none';
  }

  private repeated(sequence: string | undefined): boolean {
    if (!sequence) return false;
    if (this.sequence.has(sequence)) return true;
    remember(this.sequence, sequence);
    return false;
  }
}
