import { Logger } from '@nestjs/common';
import { BridgeMetrics } from '../../metrics/bridge-metrics';
import { FollowSink } from '../follow-sink';
import { AnsweredAtLookup, FollowStatusView, PbxFollower, storedAnswersWithin } from '../pbx-follower';
import { EslEvent, header, parseJsonEvent } from './esl-message';
import { EslError, eslLabel, EslSession, EslTarget } from './esl-session';
import { EslLiveState, EslTracker } from './esl-tracker';

/**
 * The events the tracker needs (real PBX output): legs created (ringing), answered, bridged and unbridged
 * (who talks with the outside party), renamed, their hang-up with every variable (cause, recording
 * variables), record_session starting and stopping (the file; the stop comes at the hang-up, so a follower
 * that began mid-call learns it too), and mod_callcenter's events.
 */
export const ESL_EVENTS =
  'CHANNEL_CREATE CHANNEL_ANSWER CHANNEL_BRIDGE CHANNEL_UNBRIDGE CHANNEL_HANGUP_COMPLETE CHANNEL_UUID RECORD_START RECORD_STOP CUSTOM callcenter::info';

/** How many bridged calls' bridge times are read one by one (`uuid_dump`) at a resync. */
const MAX_DUMPS = 1000;

export interface EslFollowerOptions {
  /** Each wait on the PBX (connect, auth/request, a command's reply, the keep-alive's answer). */
  timeoutMs?: number;
  /** Between keep-alives (`api status`): a peer that does not answer one within timeoutMs is dead. */
  pingMs?: number;
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
  /** Whether this replica follows now (holds the portal's delivery lease); checked every gateMs. */
  followHere?: () => boolean;
  gateMs?: number;
  /** How long a ringing call's `call.started` waits for more simultaneous-ring legs. */
  startHoldMs?: number;
  /** Events held while the resync runs; past it the session is dropped and rebuilt. */
  maxHeldEvents?: number;
  /**
   * When the store says these calls were answered (ms by callId): a follower taking over from another
   * replica, or restarted, keeps the first answer of a call live across it (stored-answers.ts).
   */
  answeredAt?: AnsweredAtLookup;
  /** tls://: checks the terminator's certificate (default true; tests against a self-signed one turn it off). */
  rejectUnauthorized?: boolean;
}

/**
 * One long-lived event socket connection (real PBX output, §4.8): log in, subscribe (`event json …`), rebuild
 * live calls (`api status`, `api show channels as json`, `api show calls as json`; events arriving meanwhile
 * are held and replayed after), feed every event to the tracker and every call event it gives to the sink.
 * `api status` every pingMs detects a dead peer; any failure reconnects with exponential backoff and jitter.
 * The event socket has no replay: a call followed before a drop whose outside leg is gone after it is
 * counted as possibly lost (mod_json_cdr, the ledger, posts its real end), and sessions created and gone
 * meanwhile are counted from FreeSWITCH's session counter.
 */
export class EslFollower extends PbxFollower {
  private readonly logger = new Logger('PbxFollow');
  private session?: EslSession;
  private connecting = false;
  private stopped = false;
  private attempt = 0;
  private reconnectTimer?: NodeJS.Timeout;
  private pingTimer?: NodeJS.Timeout;
  private gateTimer?: NodeJS.Timeout;
  private startTimer?: NodeJS.Timeout;
  private held?: EslEvent[];
  private connected = false;
  private since?: number;
  private lastError?: string;
  private readonly perSecond = new Array<number>(10).fill(0);
  private currentSecond = Math.floor(Date.now() / 1000);
  private callEvents = 0;
  private possiblyLost = 0;
  private reconnects = 0;
  private readonly options: Required<
    Omit<EslFollowerOptions, 'followHere' | 'answeredAt' | 'rejectUnauthorized'>
  > &
    EslFollowerOptions;

  constructor(
    private readonly target: EslTarget,
    private readonly tracker: EslTracker,
    private readonly sink: FollowSink,
    options: EslFollowerOptions = {},
    private readonly metrics?: BridgeMetrics,
  ) {
    super();
    this.options = {
      timeoutMs: 5000,
      pingMs: 10_000,
      reconnectMinMs: 250,
      reconnectMaxMs: 15_000,
      gateMs: 500,
      startHoldMs: 20,
      maxHeldEvents: 50_000,
      ...options,
    };
  }

  start(): void {
    this.stopped = false;
    if (this.options.followHere) {
      this.gateTimer = setInterval(() => this.checkGate(), this.options.gateMs);
      this.checkGate();
    } else {
      void this.connect();
    }
  }

  /**
   * Stops following. The session reads on until the PBX acknowledges the goodbye, so every event it sent
   * before is handled, and the starts still held for parallel dials go to the sink: nothing is dropped.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.gateTimer);
    clearTimeout(this.reconnectTimer);
    clearInterval(this.pingTimer);
    const session = this.session;
    this.session = undefined;
    await session?.exit();
    clearTimeout(this.startTimer);
    this.startTimer = undefined;
    this.deliver(this.tracker.flush());
  }

  status(): FollowStatusView {
    this.rollSeconds();
    return {
      source: 'esl',
      target: eslLabel(this.target),
      followingHere: this.following(),
      connected: this.connected,
      since: this.since ? new Date(this.since).toISOString() : null,
      lastError: this.lastError ?? null,
      eventsPerSec: Math.round((this.perSecond.reduce((a, b) => a + b, 0) / this.perSecond.length) * 10) / 10,
      callsFollowed: this.tracker.activeCalls,
      callEvents: this.callEvents,
      possiblyLost: this.possiblyLost + this.tracker.forgottenCalls,
      unseenChannels: this.tracker.unseenChannels,
      reconnects: this.reconnects,
    };
  }

  private following(): boolean {
    return this.options.followHere ? this.options.followHere() : true;
  }

  private checkGate(): void {
    if (this.stopped) return;
    const here = this.following();
    if (here && !this.session && !this.connecting && !this.reconnectTimer) void this.connect();
    if (!here && (this.session || this.reconnectTimer)) {
      clearTimeout(this.reconnectTimer);
      this.reconnectTimer = undefined;
      this.session?.close();
    }
  }

  private async connect(): Promise<void> {
    this.reconnectTimer = undefined;
    if (this.stopped || this.connecting || !this.following()) return;
    this.connecting = true;
    try {
      this.held = [];
      const session = await EslSession.open(this.target, {
        timeoutMs: this.options.timeoutMs,
        rejectUnauthorized: this.options.rejectUnauthorized,
        onEvent: (event) => this.onEvent(event),
        onRead: () => this.holdStarts(),
        onClose: (error) => this.onClose(session, error),
      });
      this.session = session;
      const subscribed = await session.command(`event json ${ESL_EVENTS}`, 'event json');
      const reply = subscribed.headers['Reply-Text'] ?? '';
      if (!reply.startsWith('+OK')) {
        throw new EslError(`event subscription refused by ${eslLabel(this.target)}: ${reply}`);
      }
      // Rebuild what is live; events arriving meanwhile wait in `held` and are replayed after.
      const live = await this.liveState(session);
      const held = this.held;
      const hangingUp = new Set(
        held
          .filter((event) => header(event, 'Event-Name') === 'CHANNEL_HANGUP_COMPLETE')
          .map((event) => header(event, 'Unique-ID') ?? ''),
      );
      const outcome = this.tracker.resync(live, Date.now(), hangingUp);
      if (outcome.lost.length > 0) {
        this.possiblyLost += outcome.lost.length;
        this.metrics?.followLost.inc(outcome.lost.length);
        this.logger.warn(
          `${outcome.lost.length} calls ended while the event socket was down; mod_json_cdr (the ledger) reports their end`,
        );
      }
      this.deliver(outcome.events);
      this.held = undefined;
      for (const event of held) this.handle(event);
      this.deliver(this.tracker.flush());
      this.attempt = 0;
      this.setConnected(true);
      this.logger.log(`following ${eslLabel(this.target)}: ${live.channels.length} live channels`);
      this.pingTimer = setInterval(() => {
        // No answer within timeoutMs ends the session (EslSession), which reconnects.
        session.api('status').catch(() => undefined);
      }, this.options.pingMs);
    } catch (error) {
      this.held = undefined;
      this.session?.close();
      this.session = undefined;
      this.failed((error as Error).message);
    } finally {
      this.connecting = false;
    }
  }

  /** What is live now: the session counter, every channel, and who is bridged with whom. */
  private async liveState(session: EslSession): Promise<EslLiveState> {
    const status = await session.api('status');
    const channels = rowsOf(await session.api('show channels as json'));
    const calls = rowsOf(await session.api('show calls as json'));
    const count = /(\d+)\s+session\(s\) since startup/.exec(status)?.[1];
    const pairs = calls.filter((row) => row.uuid && row.b_uuid);
    return {
      channels,
      bridged: pairs.map((row) => [row.uuid, row.b_uuid] as [string, string]),
      sessionsSinceStartup: count === undefined ? undefined : Number(count),
      bridgedAt: await this.bridgeTimes(session, pairs),
      storedAnswers: await storedAnswersWithin(
        this.options.answeredAt,
        [...new Set(channels.map((row) => row.call_uuid || row.uuid).filter(Boolean))],
        this.options.timeoutMs,
        (message) => this.logger.warn(message),
      ),
    };
  }

  /**
   * When each bridged pair was bridged, on the PBX's clock: `uuid_dump`'s Caller-Channel-Bridged-Time (µs),
   * else the `show calls` row's call_created_epoch (the bridge, whole seconds).
   */
  private async bridgeTimes(
    session: EslSession,
    pairs: Record<string, string>[],
  ): Promise<ReadonlyMap<string, number>> {
    const times = new Map<string, number>();
    for (const [i, row] of pairs.entries()) {
      let at = Number(row.call_created_epoch) * 1000;
      if (i < MAX_DUMPS) {
        const dump = parseJsonEvent(await session.api(`uuid_dump ${row.uuid} json`));
        const bridgedUs = Number(dump && header(dump, 'Caller-Channel-Bridged-Time'));
        if (bridgedUs > 0) at = Math.round(bridgedUs / 1000);
      }
      if (!(at > 0)) continue;
      times.set(row.uuid, at);
      times.set(row.b_uuid, at);
    }
    return times;
  }

  private holdStarts(): void {
    if (this.startTimer || !this.tracker.holdsStarts) return;
    this.startTimer = setTimeout(() => {
      this.startTimer = undefined;
      this.deliver(this.tracker.flush());
    }, this.options.startHoldMs);
  }

  private onEvent(event: EslEvent): void {
    this.countEvent();
    if (this.held) {
      if (this.held.length >= this.options.maxHeldEvents) {
        this.session?.close();
        return;
      }
      this.held.push(event);
      return;
    }
    this.handle(event);
  }

  private handle(event: EslEvent): void {
    this.deliver(this.tracker.handle(event, Date.now()));
  }

  private deliver(events: ReturnType<EslTracker['flush']>): void {
    if (events.length === 0) return;
    this.callEvents += events.length;
    this.sink.submit(events);
    this.metrics?.followCalls.set(this.tracker.activeCalls);
  }

  private onClose(session: EslSession, error: EslError): void {
    if (this.session !== session) return;
    this.session = undefined;
    clearInterval(this.pingTimer);
    this.failed(error.message);
  }

  private failed(message: string): void {
    this.lastError = message;
    if (this.reconnectTimer) return;
    this.setConnected(false);
    if (this.stopped || !this.following()) return;
    const step = Math.min(this.options.reconnectMaxMs, this.options.reconnectMinMs * 2 ** this.attempt);
    const wait = step / 2 + Math.random() * (step / 2);
    this.attempt = Math.min(this.attempt + 1, 20);
    this.reconnects++;
    this.metrics?.followReconnects.inc();
    this.logger.warn(`event socket connection lost (${message}); reconnecting in ${Math.round(wait)} ms`);
    this.reconnectTimer = setTimeout(() => void this.connect(), wait);
  }

  private setConnected(connected: boolean): void {
    if (this.connected !== connected || this.since === undefined) this.since = Date.now();
    this.connected = connected;
    this.metrics?.followConnected.set(connected ? 1 : 0);
  }

  private countEvent(): void {
    this.rollSeconds();
    this.perSecond[this.currentSecond % this.perSecond.length]++;
    this.metrics?.followAmiEvents.inc();
  }

  private rollSeconds(): void {
    const now = Math.floor(Date.now() / 1000);
    for (let s = this.currentSecond + 1; s <= now && s <= this.currentSecond + 10; s++) {
      this.perSecond[s % this.perSecond.length] = 0;
    }
    this.currentSecond = now;
  }
}

/** `show … as json`: `{"row_count":N,"rows":[…]}` (no `rows` when there are none). */
function rowsOf(body: string): Record<string, string>[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new EslError(`show … as json did not answer JSON: ${body.slice(0, 80).replace(/\s+/g, ' ')}`);
  }
  const rows = (parsed as { rows?: unknown }).rows;
  if (!Array.isArray(rows)) return [];
  return rows.filter((row): row is Record<string, string> => Boolean(row) && typeof row === 'object');
}
