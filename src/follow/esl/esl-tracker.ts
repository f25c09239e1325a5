import { CallEvent } from '../../calls/call';
import {
  answeredEvent,
  CallOpening,
  FollowedCallTracker,
  followedLine,
  noteRinging,
} from '../followed-calls';
import {
  endedEventOf,
  hidden,
  newCall,
  noteRecording,
  outsideNumberOf,
  startedEventOf,
  TrackedCall,
} from './esl-call';
import { EslEvent, header } from './esl-message';
import { Leg, LegMap } from './leg-map';
import { Legs } from './legs';

export interface EslTrackerOptions {
  /** FREESWITCH_RECORDING_URL: turns a recording's path into a URL. */
  recordingTemplate?: string;
  maxCalls?: number;
  maxLegs?: number;
}

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
 *   outbound from the gateway leg's Hangup-Cause; the recording as the CDR route makes it a URL.
 * - Phone-to-phone calls (consultations included) have no outside leg: never calls.
 */
export class EslTracker extends FollowedCallTracker<TrackedCall> {
  private readonly legs: LegMap;
  private highestSession = 0;
  private unseen = 0;

  constructor(
    classes: Legs,
    private readonly options: EslTrackerOptions = {},
  ) {
    super(options.maxCalls ?? 5000, startedEventOf);
    this.legs = new LegMap(classes, options.maxLegs ?? 20000);
  }

  get activeLegs(): number {
    return this.legs.size;
  }

  /** Sessions created and gone while disconnected (from FreeSWITCH's session counter); a lower bound. */
  get unseenChannels(): number {
    return this.unseen;
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
        this.legs.unpair(...bridgeOf(event));
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
        this.legs.see(event);
    }
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
    const keep = (uuid: string) => liveIds.has(uuid) || hangingUp.has(uuid);
    const lost = this.forgetGone(keep);
    const fresh = this.legs.resync(live.channels, live.bridged, keep);
    const events: CallEvent[] = [];
    const createdAt = new Map(live.channels.map((row) => [row.uuid, Number(row.created_epoch) * 1000]));
    // Calls that began while nobody listened and are still up.
    for (const row of live.channels) {
      const leg = this.legs.get(row.uuid);
      if (!leg || leg.kind !== 'trunk' || this.callOfLeg(row.uuid)) continue;
      const startedAt = createdAt.get(row.uuid) || now;
      const root = row.call_uuid && row.call_uuid !== row.uuid ? this.legs.get(row.call_uuid) : undefined;
      if (row.direction === 'inbound') {
        // Its line: `initial_dest`, the number dialled (`dest` is where the dialplan took the leg since).
        const line = followedLine(row.initial_dest);
        this.openInbound(row.uuid, outsideNumberOf(row.cid_num, false), startedAt, line);
      } else if (root?.kind === 'phone') {
        const number = outsideNumberOf(row.dest, false);
        const line = presentedLine(row.cid_num, root);
        const call = this.openOutbound(root, {
          callId: root.uuid,
          outside: row.uuid,
          phoneNumber: number,
          at: startedAt,
          line,
        });
        events.push(startedEventOf(call, startedAt));
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

  private created(event: EslEvent, at: number, out: CallEvent[]): void {
    const leg = this.legs.see(event);
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
        const line = presentedLine(presentedBy(event), undefined);
        const opening = { callId: uuid, outside: uuid, phoneNumber: dialled, at, line };
        const call = this.openOutbound(undefined, opening);
        this.flushInto(out);
        out.push(startedEventOf(call, at));
        return;
      }
      const caller = outsideNumberOf(header(event, 'Caller-Caller-ID-Number'), hidden(event));
      // The line: the number the caller dialled, as the gateway gave it, before the dialplan moved the leg on.
      this.openInbound(uuid, caller, at, followedLine(header(event, 'Caller-Destination-Number')));
      return;
    }
    // A leg dialled to a gateway. Within a call already followed (a forward to a mobile): not a new call.
    const rootId = originator ?? callUuid;
    if (this.callOfLeg(rootId)) return;
    const root = rootId ? this.legs.get(rootId) : undefined;
    if (root?.kind !== 'phone') return;
    const dialled = outsideNumberOf(header(event, 'Caller-Destination-Number'), false);
    const line = presentedLine(presentedBy(event), root);
    const opening = { callId: root.uuid, outside: uuid, phoneNumber: dialled, at, line };
    const call = this.openOutbound(root, opening);
    this.flushInto(out);
    out.push(startedEventOf(call, at));
  }

  private bridged(event: EslEvent, at: number, out: CallEvent[]): void {
    this.legs.see(event);
    const [a, b] = bridgeOf(event);
    if (!a || !b) return;
    this.legs.pair(a, b);
    for (const uuid of [a, b]) {
      const call = this.calls.ofOutside(uuid);
      if (call) this.checkAnswer(call, at, out);
    }
  }

  private renamed(event: EslEvent): void {
    const old = header(event, 'Old-Unique-ID');
    const uuid = header(event, 'Unique-ID');
    if (!old || !uuid || !this.legs.rename(old, uuid)) return;
    this.calls.renameOutside(old, uuid);
    for (const call of this.calls.values()) {
      const ringing = call.ringing.get(old);
      if (ringing === undefined) continue;
      call.ringing.delete(old);
      call.ringing.set(uuid, ringing);
    }
  }

  private recording(event: EslEvent): void {
    const leg = this.legs.see(event);
    const call = leg && this.callOfAnyLeg(leg.uuid, event);
    if (!call) return;
    noteRecording(call, event);
    // RECORD_STOP comes at the hang-up: a follower that started after RECORD_START still learns the file.
    call.recordFile ??= header(event, 'Record-File-Path');
  }

  private hungUp(event: EslEvent, at: number, out: CallEvent[]): void {
    const leg = this.legs.see(event);
    if (!leg) return;
    const call = this.callOfAnyLeg(leg.uuid, event);
    if (call) noteRecording(call, event);
    if (call && call.ringing.has(leg.uuid)) {
      call.ringing.delete(leg.uuid);
      if (call.answeredBy === undefined) call.causes.push(header(event, 'Hangup-Cause') ?? '');
    }
    this.legs.remove(leg);
    if (call && call.outside === leg.uuid) {
      if (call.answeredAt === undefined) this.answerFromHangup(call, event, out);
      const cause = header(event, 'Hangup-Cause') ?? '';
      out.push(endedEventOf(call, at, cause, this.options.recordingTemplate));
      this.calls.forget(call);
    }
  }

  private openInbound(uuid: string, phoneNumber: string, at: number, line: string | undefined) {
    return this.calls.open(
      newCall({ callId: uuid, direction: 'inbound', phoneNumber, outside: uuid, at, line }),
    );
  }

  /** An outbound call: `callId` the phone's a-leg (or the gateway leg's own), `outside` the gateway leg. */
  private openOutbound(
    root: Leg | undefined,
    opening: Pick<CallOpening, 'callId' | 'outside' | 'phoneNumber' | 'at' | 'line'>,
  ): TrackedCall {
    const { extension: caller, crmCallId } = root ?? {};
    const call = newCall({ ...opening, direction: 'outbound', caller, crmCallId });
    call.started = true;
    return this.calls.open(call);
  }

  /**
   * A phone leg of the call rings. A phone that starts ringing later (a leg past the simultaneous-ring hold,
   * a queue's next agent, a blind transfer's target after the answer) gets another call.started naming the
   * phones ringing now, at the ring's time; another device of a phone already ringing adds nothing.
   */
  private ring(call: TrackedCall, leg: Leg, at: number): void {
    if (!leg.extension || noteRinging(call, leg.uuid, leg.extension)) return;
    this.holdRing(call, at, true);
  }

  /** The phone bridged with the outside leg; a new one is a `call.answered` (again on each transfer). */
  private checkAnswer(call: TrackedCall, at: number, out: CallEvent[]): void {
    const partner = this.legs.partnerOf(call.outside);
    const extension = partner?.kind === 'phone' ? partner.extension : undefined;
    if (!extension || extension === call.answeredBy) return;
    this.startAnswered(call, extension, out);
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
    const other =
      this.legs.get(header(event, 'variable_last_bridge_to') ?? '') ??
      this.legs.classifyChannel(header(event, 'variable_bridge_channel'));
    const extension =
      other.kind === 'phone' ? other.extension : call.direction === 'outbound' ? call.caller : undefined;
    if (extension) this.answered(call, extension, Math.round(bridgedUs / 1000), out);
  }

  private answered(call: TrackedCall, extension: string, at: number, out: CallEvent[]): void {
    for (const [uuid, ringing] of call.ringing) if (ringing === extension) call.ringing.delete(uuid);
    out.push(answeredEvent(call, extension, at));
  }

  /** The call `uuid` is the a-leg or the outside leg of. */
  private callOfLeg(uuid: string | undefined): TrackedCall | undefined {
    if (!uuid) return undefined;
    return this.calls.get(uuid) ?? this.calls.ofOutside(uuid);
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
    return partner ? this.calls.ofOutside(partner) : undefined;
  }
}

/**
 * The caller ID a gateway leg presented outside (real PBX output: its caller profile's number on
 * CHANNEL_CREATE, which the a-leg's effective/origination caller ID set), else its variables' own.
 */
function presentedBy(event: EslEvent): string | undefined {
  return (
    header(event, 'Caller-Caller-ID-Number') ??
    header(event, 'variable_origination_caller_id_number') ??
    header(event, 'variable_effective_caller_id_number')
  );
}

/** A presented caller ID as the call's line, unless it is only the dialling phone's own extension. */
function presentedLine(value: string | undefined, root: Leg | undefined): string | undefined {
  const line = followedLine(value);
  return line !== undefined && line !== root?.extension ? line : undefined;
}

/** CHANNEL_BRIDGE's and CHANNEL_UNBRIDGE's two legs. */
function bridgeOf(event: EslEvent): [string | undefined, string | undefined] {
  return [
    header(event, 'Bridge-A-Unique-ID') ?? header(event, 'Unique-ID'),
    header(event, 'Bridge-B-Unique-ID') ?? header(event, 'Other-Leg-Unique-ID'),
  ];
}
