import { CallEvent, Direction, EndStatus } from '../../calls/call';
import { crmCallIdOf } from '../../calls/click-match';
import { callerNumberOf, statusOf } from '../../pbx/adapters/freeswitch-cdr';
import { joinedPath, recordingUrlOf } from '../../pbx/adapters/recording-url';
import { EslEvent, header } from './esl-message';
import { LegClass, Legs } from './legs';

/** One FreeSWITCH leg (channel) as the tracker last saw it. */
interface Leg {
  uuid: string;
  kind: LegClass['kind'];
  extension?: string;
  /** The leg it is bridged with now (CHANNEL_BRIDGE's other Unique-ID). */
  partner?: string;
  /** Click-to-call: the portal's CALL_ID the dialer put on the originate (`crm_call_id`). */
  crmCallId?: string;
}

/** One call from or to outside: one Channel-Call-UUID (the a-leg's uuid, the callId), until its outside leg ends. */
interface TrackedCall {
  callId: string;
  direction: Direction;
  phoneNumber: string;
  /** The outside party's leg: its hang-up ends the call; the phone bridged with it is who talks. */
  outside: string;
  startedAt: number;
  started: boolean;
  /** Ringing phone legs → their internal numbers. */
  ringing: Map<string, string>;
  rang: string[];
  /** Hang-up causes of phone legs that rang and were never bridged with the outside leg. */
  causes: string[];
  caller?: string;
  crmCallId?: string;
  answeredBy?: string;
  answeredAt?: number;
  /** Recording candidates, most telling first when the call ends. */
  recordUrl?: string;
  recordPath?: string;
  recordFile?: string;
}

export interface EslTrackerOptions {
  /** FREESWITCH_RECORDING_URL: turns a recording's path into a URL. */
  recordingTemplate?: string;
  maxCalls?: number;
  maxLegs?: number;
}

/** What a resync found. */
export interface EslResyncOutcome {
  /** Calls followed before the drop whose outside leg is gone: their end is unknown here. */
  lost: string[];
  /** Sessions created and gone while disconnected (the session counter's gap); -1 when unknown. */
  unseenChannels: number;
  events: CallEvent[];
}

/** What resync reads: `show channels as json` rows, `show calls as json` pairs, `status`'s session count. */
export interface EslLiveState {
  channels: Record<string, string>[];
  /** Bridged pairs: [uuid, b_uuid]. */
  bridged: [string, string][];
  /** "N session(s) since startup": the highest session id FreeSWITCH has given. */
  sessionsSinceStartup?: number;
  /**
   * When each bridged leg was bridged, on the PBX's clock (ms): `uuid_dump`'s Caller-Channel-Bridged-Time,
   * else `show calls`' call_created_epoch. Both legs of a pair are listed.
   */
  bridgedAt?: ReadonlyMap<string, number>;
  /** What the store says about when each call (callId) was answered: the replica that followed it before. */
  storedAnswers?: ReadonlyMap<string, number>;
}

/**
 * Turns FreeSWITCH 1.10 events (`event json`, real PBX output) into our call events. Pure: fed events, returns
 * call events; `flush` releases starts held so that simultaneous-ring legs land in one `call.started`.
 *
 * - One call = one a-leg: the outside leg that came in (inbound), or the phone's leg that dialled a gateway
 *   (outbound; the callId is its uuid, the gateway leg's Channel-Call-UUID). That is the record mod_json_cdr
 *   posts (`variables.uuid` of the a-leg), so followed and posted events share their keys.
 * - Inbound `call.started` when the first phone leg is created (the `user/` endpoint dialling, a
 *   mod_callcenter agent leg carrying `cc_member_session_uuid`); legs created meanwhile are in `extensions`.
 * - `call.answered` whenever the phone bridged with the outside leg changes (CHANNEL_BRIDGE): the first
 *   answer, a blind transfer (the outside leg runs the dialplan again and bridges the target), an attended
 *   transfer (the target's leg is bridged with the outside leg), a queue agent (uuid_bridge). Nothing keys on
 *   the target leg's Channel-Call-UUID, which FreeSWITCH resets on unbridge.
 * - `call.ended` at the outside leg's CHANNEL_HANGUP_COMPLETE: talk time from the first answer; a call no
 *   phone was bridged with is missed (voicemail answering the a-leg included), busy when every phone was;
 *   outbound from the gateway leg's Hangup-Cause. The recording: `record_url`, else `record_path` +
 *   `record_name`/`record_file`, else RECORD_START's `Record-File-Path` (record_session), else mod_callcenter's
 *   `cc_record_filename`, made a URL by FREESWITCH_RECORDING_URL as the CDR route does.
 * - Phone-to-phone calls (consultations included) have no outside leg: never calls.
 */
export class EslTracker {
  private readonly legs = new Map<string, Leg>();
  private readonly calls = new Map<string, TrackedCall>();
  /** outside leg uuid → callId (outbound calls: the outside leg is not the a-leg). */
  private readonly byOutside = new Map<string, string>();
  /** Calls whose `call.started` waits for more simultaneous-ring legs → the ring's time (PBX clock, ms). */
  private readonly pendingStarts = new Map<string, number>();
  private readonly maxCalls: number;
  private readonly maxLegs: number;
  private highestSession = 0;
  private unseen = 0;
  private forgotten = 0;

  constructor(
    private readonly classes: Legs,
    private readonly options: EslTrackerOptions = {},
  ) {
    this.maxCalls = options.maxCalls ?? 5000;
    this.maxLegs = options.maxLegs ?? 20000;
  }

  get activeCalls(): number {
    return this.calls.size;
  }

  get activeLegs(): number {
    return this.legs.size;
  }

  get forgottenCalls(): number {
    return this.forgotten;
  }

  /** Sessions created and gone while disconnected (from FreeSWITCH's session counter); a lower bound. */
  get unseenChannels(): number {
    return this.unseen;
  }

  get holdsStarts(): boolean {
    return this.pendingStarts.size > 0;
  }

  /** The call events `event` gives; `now` (ms) stands in when it carries no Event-Date-Timestamp. */
  handle(event: EslEvent, now: number): CallEvent[] {
    const at = Math.round(Number(header(event, 'Event-Date-Timestamp')) / 1000) || now;
    const session = Number(header(event, 'variable_session_id'));
    if (Number.isInteger(session) && session > this.highestSession) this.highestSession = session;
    const out: CallEvent[] = [];
    switch (header(event, 'Event-Name')) {
      case 'CHANNEL_CREATE':
        this.created(event, at, out);
        break;
      case 'CHANNEL_BRIDGE':
        this.flushInto(out);
        this.bridged(event, at, out);
        break;
      case 'CHANNEL_UNBRIDGE':
        this.unbridged(event);
        break;
      case 'CHANNEL_UUID':
        this.renamed(event);
        break;
      case 'RECORD_START':
      case 'RECORD_STOP':
        this.recording(event);
        break;
      case 'CHANNEL_HANGUP_COMPLETE':
        this.flushInto(out);
        this.hungUp(event, at, out);
        break;
      default:
        this.see(event);
    }
    return out;
  }

  flush(): CallEvent[] {
    const out: CallEvent[] = [];
    this.flushInto(out);
    return out;
  }

  /**
   * After a reconnect. Legs still live keep what was known of them (unknown ones are classified from their
   * row) and bridges are rebuilt from `show calls`; a call followed before whose outside leg is gone ended
   * unseen (unless its hang-up is among `hangingUp`, events held meanwhile that will end it); calls that
   * began while disconnected and are still up are followed from here.
   */
  resync(live: EslLiveState, now: number, hangingUp: ReadonlySet<string> = new Set()): EslResyncOutcome {
    const before = this.highestSession;
    const liveIds = new Set(live.channels.map((row) => row.uuid).filter(Boolean));
    const lost: string[] = [];
    for (const call of [...this.calls.values()]) {
      if (liveIds.has(call.outside) || hangingUp.has(call.outside)) continue;
      lost.push(call.callId);
      this.forget(call);
    }
    for (const uuid of [...this.legs.keys()]) {
      if (!liveIds.has(uuid) && !hangingUp.has(uuid)) this.legs.delete(uuid);
    }
    for (const leg of this.legs.values()) leg.partner = undefined;
    let fresh = 0;
    for (const row of live.channels) {
      if (!row.uuid || this.legs.has(row.uuid)) continue;
      fresh++;
      const kind = this.classes.classifyRow(row);
      this.legs.set(row.uuid, { uuid: row.uuid, kind: kind.kind, extension: kind.extension });
    }
    for (const [a, b] of live.bridged) this.pair(a, b);
    const events: CallEvent[] = [];
    const createdAt = new Map(live.channels.map((row) => [row.uuid, Number(row.created_epoch) * 1000]));
    // Calls that began while nobody listened and are still up.
    for (const row of live.channels) {
      const leg = this.legs.get(row.uuid);
      if (!leg || leg.kind !== 'trunk' || this.callOfLeg(row.uuid)) continue;
      const startedAt = createdAt.get(row.uuid) || now;
      const root = row.call_uuid && row.call_uuid !== row.uuid ? this.legs.get(row.call_uuid) : undefined;
      if (row.direction === 'inbound') {
        this.openInbound(row.uuid, outsideNumberOf(row.cid_num, false), startedAt);
      } else if (root?.kind === 'phone') {
        const call = this.openOutbound(
          root.uuid,
          row.uuid,
          root,
          outsideNumberOf(row.dest, false),
          startedAt,
        );
        events.push(this.startedEvent(call, startedAt));
      }
    }
    // Inbound calls not started yet: phones ringing now (legs whose call_uuid is the call's).
    for (const call of this.calls.values()) {
      if (call.started || call.direction !== 'inbound') continue;
      for (const row of live.channels) {
        const leg = this.legs.get(row.uuid);
        if (leg?.kind === 'phone' && row.call_uuid === call.callId && row.uuid !== call.outside) {
          this.ring(call, leg, createdAt.get(row.uuid) || call.startedAt);
        }
      }
    }
    this.flushInto(events);
    // Answers seen while nobody listened, on the PBX's clock: what the store says (the first answer, from
    // the replica that followed before), else when FreeSWITCH bridged the outside leg.
    for (const call of this.calls.values()) {
      const answeredAt =
        live.storedAnswers?.get(call.callId) ?? live.bridgedAt?.get(call.outside) ?? call.startedAt;
      this.checkAnswer(call, answeredAt, events);
    }
    let unseenChannels = -1;
    const count = live.sessionsSinceStartup;
    if (count !== undefined && count >= before) {
      unseenChannels = before === 0 ? 0 : Math.max(0, count - before - fresh);
      this.unseen += unseenChannels;
      this.highestSession = count;
    } else if (count !== undefined) {
      this.highestSession = count; // FreeSWITCH restarted: its counter began again
    }
    return { lost, unseenChannels, events };
  }

  // ---- events -------------------------------------------------------------------------------------------

  private created(event: EslEvent, at: number, out: CallEvent[]): void {
    const leg = this.see(event);
    if (!leg) return;
    const uuid = leg.uuid;
    const callUuid = header(event, 'Channel-Call-UUID');
    const originator = header(event, 'variable_originator');
    const member = header(event, 'variable_cc_member_session_uuid');
    const aLeg = !originator && (!callUuid || callUuid === uuid);
    if (leg.kind === 'phone') {
      if (aLeg && !member) return; // a phone calling: a call only once it dials a gateway
      const call = this.callOfLeg(member) ?? this.callOfLeg(originator) ?? this.callOfLeg(callUuid);
      if (call) this.ring(call, leg, at);
      return;
    }
    if (leg.kind !== 'trunk' || this.callOfLeg(uuid)) return;
    if (aLeg) {
      if (header(event, 'Call-Direction') === 'outbound') {
        // A caller-less originate straight to a gateway (a callback): the gateway leg is the a-leg.
        const dialled = outsideNumberOf(header(event, 'Caller-Destination-Number'), false);
        const call = this.openOutbound(uuid, uuid, undefined, dialled, at);
        this.flushInto(out);
        out.push(this.startedEvent(call, at));
        return;
      }
      this.openInbound(uuid, outsideNumberOf(header(event, 'Caller-Caller-ID-Number'), hidden(event)), at);
      return;
    }
    // A leg dialled to a gateway. Within a call already followed (a forward to a mobile): not a new call.
    const rootId = originator ?? callUuid;
    if (this.callOfLeg(rootId)) return;
    const root = rootId ? this.legs.get(rootId) : undefined;
    if (root?.kind !== 'phone') return;
    const dialled = outsideNumberOf(header(event, 'Caller-Destination-Number'), false);
    const call = this.openOutbound(root.uuid, uuid, root, dialled, at);
    this.flushInto(out);
    out.push(this.startedEvent(call, at));
  }

  private bridged(event: EslEvent, at: number, out: CallEvent[]): void {
    this.see(event);
    const a = header(event, 'Bridge-A-Unique-ID') ?? header(event, 'Unique-ID');
    const b = header(event, 'Bridge-B-Unique-ID') ?? header(event, 'Other-Leg-Unique-ID');
    if (!a || !b) return;
    this.pair(a, b);
    for (const uuid of [a, b]) {
      const call = this.callOfOutside(uuid);
      if (call) this.checkAnswer(call, at, out);
    }
  }

  private unbridged(event: EslEvent): void {
    const a = header(event, 'Bridge-A-Unique-ID') ?? header(event, 'Unique-ID');
    const b = header(event, 'Bridge-B-Unique-ID') ?? header(event, 'Other-Leg-Unique-ID');
    for (const [one, other] of [
      [a, b],
      [b, a],
    ]) {
      const leg = one ? this.legs.get(one) : undefined;
      if (leg && leg.partner === other) leg.partner = undefined;
    }
  }

  private renamed(event: EslEvent): void {
    const old = header(event, 'Old-Unique-ID');
    const uuid = header(event, 'Unique-ID');
    const leg = old ? this.legs.get(old) : undefined;
    if (!old || !uuid || !leg) return;
    this.legs.delete(old);
    leg.uuid = uuid;
    this.legs.set(uuid, leg);
    for (const other of this.legs.values()) if (other.partner === old) other.partner = uuid;
    const callId = this.byOutside.get(old);
    if (callId) {
      this.byOutside.delete(old);
      this.byOutside.set(uuid, callId);
      const call = this.calls.get(callId);
      if (call) call.outside = uuid;
    }
    for (const call of this.calls.values()) {
      const ringing = call.ringing.get(old);
      if (ringing === undefined) continue;
      call.ringing.delete(old);
      call.ringing.set(uuid, ringing);
    }
  }

  private recording(event: EslEvent): void {
    const leg = this.see(event);
    const call = leg && this.callOfAnyLeg(leg.uuid, event);
    if (!call) return;
    this.noteRecording(call, event);
    // RECORD_STOP comes at the hang-up: a follower that started after RECORD_START still learns the file.
    call.recordFile ??= header(event, 'Record-File-Path');
  }

  private hungUp(event: EslEvent, at: number, out: CallEvent[]): void {
    const leg = this.see(event);
    if (!leg) return;
    const call = this.callOfAnyLeg(leg.uuid, event);
    if (call) this.noteRecording(call, event);
    if (call && call.ringing.has(leg.uuid)) {
      call.ringing.delete(leg.uuid);
      if (call.answeredBy === undefined) call.causes.push(header(event, 'Hangup-Cause') ?? '');
    }
    const partner = leg.partner ? this.legs.get(leg.partner) : undefined;
    if (partner?.partner === leg.uuid) partner.partner = undefined;
    this.legs.delete(leg.uuid);
    if (call && call.outside === leg.uuid) {
      if (call.answeredAt === undefined) this.answerFromHangup(call, event, out);
      out.push(this.endedEvent(call, at, header(event, 'Hangup-Cause') ?? ''));
      this.forget(call);
    }
  }

  // ---- calls --------------------------------------------------------------------------------------------

  private openInbound(uuid: string, phoneNumber: string, at: number): TrackedCall {
    return this.open({
      callId: uuid,
      direction: 'inbound',
      phoneNumber,
      outside: uuid,
      startedAt: at,
      started: false,
      ringing: new Map(),
      rang: [],
      causes: [],
    });
  }

  private openOutbound(
    callId: string,
    outside: string,
    root: Leg | undefined,
    phoneNumber: string,
    at: number,
  ): TrackedCall {
    return this.open({
      callId,
      direction: 'outbound',
      phoneNumber,
      outside,
      startedAt: at,
      started: true,
      ringing: new Map(),
      rang: [],
      causes: [],
      caller: root?.extension,
      crmCallId: root?.crmCallId,
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
    this.calls.set(call.callId, call);
    this.byOutside.set(call.outside, call.callId);
    return call;
  }

  private forget(call: TrackedCall): void {
    this.calls.delete(call.callId);
    this.byOutside.delete(call.outside);
    this.pendingStarts.delete(call.callId);
  }

  /**
   * A phone leg of the call rings. A phone that starts ringing later (a leg past the simultaneous-ring hold,
   * a queue's next agent, a blind transfer's target after the answer) gets another call.started naming the
   * phones ringing now, at the ring's time; another device of a phone already ringing adds nothing.
   */
  private ring(call: TrackedCall, leg: Leg, at: number): void {
    if (!leg.extension) return;
    const ringingAlready = [...call.ringing.values()].includes(leg.extension);
    call.ringing.set(leg.uuid, leg.extension);
    if (ringingAlready) return;
    if (!call.rang.includes(leg.extension)) call.rang.push(leg.extension);
    if (!call.started) {
      call.started = true;
      this.pendingStarts.set(call.callId, call.startedAt);
    } else if (!this.pendingStarts.has(call.callId)) {
      this.pendingStarts.set(call.callId, at);
    }
  }

  private flushInto(out: CallEvent[]): void {
    for (const [callId, at] of this.pendingStarts) {
      const call = this.calls.get(callId);
      if (call) out.push(this.startedEvent(call, at));
    }
    this.pendingStarts.clear();
  }

  /** The phone bridged with the outside leg; a new one is a `call.answered` (again on each transfer). */
  private checkAnswer(call: TrackedCall, at: number, out: CallEvent[]): void {
    const outside = this.legs.get(call.outside);
    const partner = outside?.partner ? this.legs.get(outside.partner) : undefined;
    const extension = partner?.kind === 'phone' ? partner.extension : undefined;
    if (!extension || extension === call.answeredBy) return;
    if (!call.started) {
      call.started = true;
      out.push(this.startedEvent(call, call.startedAt, extension));
    }
    this.answered(call, extension, at, out);
  }

  /**
   * The outside leg hangs up and no answer was seen (it came while nobody listened): FreeSWITCH's own record
   * of its last bridge says whether a phone picked up, and when (Caller-Channel-Bridged-Time, µs).
   */
  private answerFromHangup(call: TrackedCall, event: EslEvent, out: CallEvent[]): void {
    const bridgedUs =
      Number(header(event, 'Caller-Channel-Bridged-Time')) ||
      Number(header(event, 'variable_bridge_epoch')) * 1e6;
    if (!(bridgedUs > 0)) return;
    const known = this.legs.get(header(event, 'variable_last_bridge_to') ?? '');
    const other =
      known ??
      this.classes.classify({
        'Channel-Name': header(event, 'variable_bridge_channel'),
        'Call-Direction': 'outbound',
      });
    const extension =
      other.kind === 'phone' ? other.extension : call.direction === 'outbound' ? call.caller : undefined;
    if (extension) this.answered(call, extension, Math.round(bridgedUs / 1000), out);
  }

  private answered(call: TrackedCall, extension: string, at: number, out: CallEvent[]): void {
    for (const [uuid, ringing] of call.ringing) if (ringing === extension) call.ringing.delete(uuid);
    call.answeredBy = extension;
    call.answeredAt ??= at;
    out.push({ event: 'call.answered', callId: call.callId, extension, at: iso(at) });
  }

  private pair(a: string, b: string): void {
    const one = this.legs.get(a);
    const other = this.legs.get(b);
    if (one) one.partner = b;
    if (other) other.partner = a;
  }

  /** The call `uuid` is the a-leg or the outside leg of. */
  private callOfLeg(uuid: string | undefined): TrackedCall | undefined {
    if (!uuid) return undefined;
    return this.calls.get(uuid) ?? this.callOfOutside(uuid);
  }

  private callOfOutside(uuid: string): TrackedCall | undefined {
    const callId = this.byOutside.get(uuid);
    return callId ? this.calls.get(callId) : undefined;
  }

  /** The call a leg belongs to: its own, its originator's, its call uuid's, a queue member's, or a ringing leg's. */
  private callOfAnyLeg(uuid: string, event: EslEvent): TrackedCall | undefined {
    const direct =
      this.callOfLeg(uuid) ??
      this.callOfLeg(header(event, 'variable_cc_member_session_uuid')) ??
      this.callOfLeg(header(event, 'variable_originator')) ??
      this.callOfLeg(header(event, 'Channel-Call-UUID'));
    if (direct) return direct;
    for (const call of this.calls.values()) if (call.ringing.has(uuid)) return call;
    const partner = this.legs.get(uuid)?.partner;
    return partner ? this.callOfOutside(partner) : undefined;
  }

  private noteRecording(call: TrackedCall, event: EslEvent): void {
    call.recordUrl ??= header(event, 'variable_record_url');
    const path = joinedPath(
      header(event, 'variable_record_path'),
      header(event, 'variable_record_name') ?? header(event, 'variable_record_file'),
    );
    call.recordPath ??= path ?? header(event, 'variable_cc_record_filename');
  }

  private startedEvent(call: TrackedCall, at: number, answerer?: string): CallEvent {
    const extensions = [...new Set(call.ringing.values())];
    if (extensions.length === 0 && answerer) extensions.push(answerer);
    // An outbound call's card is the dialling phone's, until a transfer makes another phone ring.
    const extension = extensions[0] ?? (call.direction === 'outbound' ? call.caller : undefined);
    return {
      event: 'call.started',
      callId: call.callId,
      direction: call.direction,
      phoneNumber: call.phoneNumber,
      ...(extension ? { extension } : {}),
      ...(extensions.length > 1 ? { extensions: extensions.slice(0, 50) } : {}),
      ...(call.crmCallId ? { crmCallId: call.crmCallId } : {}),
      at: iso(at),
    };
  }

  private endedEvent(call: TrackedCall, at: number, outsideCause: string): CallEvent {
    const { status, failedReason } = this.statusOf(call, outsideCause);
    const file = call.recordUrl ?? call.recordPath ?? call.recordFile;
    const recordingUrl =
      status === 'answered' ? recordingUrlOf(file, this.options.recordingTemplate) : undefined;
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
    };
  }

  private statusOf(call: TrackedCall, outsideCause: string): { status: EndStatus; failedReason?: string } {
    if (call.answeredAt !== undefined) return { status: 'answered' };
    if (call.direction === 'inbound') {
      const causes = call.causes;
      return { status: causes.length > 0 && causes.every((c) => c === 'USER_BUSY') ? 'busy' : 'missed' };
    }
    // Never bridged with the phone: NORMAL_CLEARING here is no answer (statusOf with no talk time).
    return statusOf(outsideCause || 'NORMAL_CLEARING', false, 'outbound');
  }

  // ---- legs ---------------------------------------------------------------------------------------------

  /** The leg an event is about: registered when new (classified from the event's headers). */
  private see(event: EslEvent): Leg | undefined {
    const uuid = header(event, 'Unique-ID');
    if (!uuid) return undefined;
    let leg = this.legs.get(uuid);
    if (!leg) {
      if (!header(event, 'Channel-Name')) return undefined;
      const kind = this.classes.classify(event);
      leg = { uuid, kind: kind.kind, extension: kind.extension };
      if (this.legs.size >= this.maxLegs) {
        const oldest = this.legs.keys().next().value;
        if (oldest !== undefined) this.legs.delete(oldest);
      }
      this.legs.set(uuid, leg);
    }
    leg.crmCallId ??= crmCallIdOf(header(event, 'variable_crm_call_id'));
    return leg;
  }
}

/**
 * The outside party's number, or `anonymous` when it is withheld (FreeSWITCH's placeholders, a masked number,
 * presentation prohibited) or is no number at all (SPEC §9: a followed call is still reported).
 */
function outsideNumberOf(value: string | undefined, hidden: boolean): string {
  const number = callerNumberOf(value, hidden);
  return /^\+?\d+$/.test(number.replace(/[\s().-]/g, '')) ? number : 'anonymous';
}

/** Caller ID presentation prohibited: the caller profile's privacy flag, or a SIP Privacy header of `id`. */
function hidden(event: EslEvent): boolean {
  const privacy = header(event, 'variable_sip_Privacy') ?? header(event, 'variable_sip_h_Privacy') ?? '';
  return header(event, 'Caller-Privacy-Hide-Number') === 'true' || /\bid\b/i.test(privacy);
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
