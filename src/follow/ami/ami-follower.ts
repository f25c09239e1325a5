import { Logger } from '@nestjs/common';
import { BridgeMetrics } from '../../metrics/bridge-metrics';
import { FollowSink } from '../follow-sink';
import { AnsweredAtLookup, FollowStatusView, PbxFollower, storedAnswersWithin } from '../pbx-follower';
import { AmiMessage } from './ami-message';
import { AmiError, amiLabel, AmiSession, AmiTarget } from './ami-session';
import { CallTracker } from './call-tracker';

export interface AmiFollowerOptions {
  /** Each wait on the PBX (connect, banner, an action's answer, a Ping's Pong). */
  timeoutMs?: number;
  /** Between Pings: a peer that does not answer one within timeoutMs is dead. */
  pingMs?: number;
  /** Reconnect backoff: first wait and ceiling; each wait is drawn in [half, full] of the doubled step. */
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
  /** Whether this replica follows now (holds the portal's delivery lease); checked every gateMs. */
  followHere?: () => boolean;
  gateMs?: number;
  /**
   * How long a ringing call's `call.started` waits for more parallel dials (a ring group's DialBegins come
   * one event each, possibly in several reads); any later event of the call releases it sooner.
   */
  startHoldMs?: number;
  /** Events held while CoreShowChannels resyncs; past it the session is dropped and rebuilt. */
  maxHeldEvents?: number;
  rejectUnauthorized?: boolean;
  /**
   * When the calls of these Linkedids were answered, as stored (ms): asked at each resync, so a call taken
   * over from another replica keeps its talk time from its real answer. A failure or no answer: from now.
   */
  answeredAt?: AnsweredAtLookup;
}

/**
 * One long-lived Manager connection (real PBX output): log in, rebuild live calls with `CoreShowChannels`, feed
 * every event to the tracker and every call event it gives to the sink. `Ping` every pingMs detects a dead
 * peer; any failure reconnects with exponential backoff and jitter. AMI has no replay: a call followed
 * before a drop whose outside channel is gone after it is counted as possibly lost (only a ledger can say
 * how it ended), and channels created and gone meanwhile are counted from the Uniqueid counter.
 */
export class AmiFollower extends PbxFollower {
  private readonly logger = new Logger('PbxFollow');
  private session?: AmiSession;
  private connecting = false;
  private stopped = false;
  private attempt = 0;
  private reconnectTimer?: NodeJS.Timeout;
  private pingTimer?: NodeJS.Timeout;
  private gateTimer?: NodeJS.Timeout;
  private startTimer?: NodeJS.Timeout;
  private held?: AmiMessage[];
  private connected = false;
  private since?: number;
  private lastError?: string;
  private readonly perSecond = new Array<number>(10).fill(0);
  private currentSecond = Math.floor(Date.now() / 1000);
  private callEvents = 0;
  private possiblyLost = 0;
  private reconnects = 0;
  private readonly options: Required<
    Omit<AmiFollowerOptions, 'followHere' | 'rejectUnauthorized' | 'answeredAt'>
  > &
    AmiFollowerOptions;

  constructor(
    private readonly target: AmiTarget,
    private readonly tracker: CallTracker,
    private readonly sink: FollowSink,
    options: AmiFollowerOptions = {},
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
    await session?.logoff();
    clearTimeout(this.startTimer);
    this.startTimer = undefined;
    this.deliver(this.tracker.flush());
  }

  status(): FollowStatusView {
    this.rollSeconds();
    return {
      source: 'ami',
      target: amiLabel(this.target),
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

  /** Whether the call is live on the PBX, as followed since the last resync; undefined while not connected. */
  liveOnPbx(callId: string): boolean | undefined {
    return this.connected ? this.tracker.follows(callId) : undefined;
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
      const session = await AmiSession.open(this.target, {
        timeoutMs: this.options.timeoutMs,
        rejectUnauthorized: this.options.rejectUnauthorized,
        onEvent: (event) => this.onEvent(event),
        onRead: () => this.holdStarts(),
        onClose: (error) => this.onClose(session, error),
      });
      this.session = session;
      await this.readClock(session);
      // Rebuild what is live; events arriving meanwhile wait in `held` and are replayed after.
      const live = await session.list('CoreShowChannels');
      const answers = await storedAnswersWithin(
        this.options.answeredAt,
        [...new Set(live.map((entry) => entry.Linkedid).filter(Boolean))],
        this.options.timeoutMs,
        (message) => this.logger.warn(message),
      );
      const outcome = this.tracker.resync(live, Date.now(), answers);
      if (outcome.lost.length > 0) {
        this.possiblyLost += outcome.lost.length;
        this.metrics?.followLost.inc(outcome.lost.length);
        this.logger.warn(
          `${outcome.lost.length} calls ended while the Manager connection was down; without a ledger their end is unknown`,
        );
      }
      this.deliver(outcome.events);
      const held = this.held;
      this.held = undefined;
      for (const event of held) this.handle(event);
      this.deliver(this.tracker.flush());
      this.attempt = 0;
      this.setConnected(true);
      this.logger.log(`following ${amiLabel(this.target)}: ${live.length} live channels`);
      this.pingTimer = setInterval(() => {
        // No answer within timeoutMs ends the session (AmiSession), which reconnects.
        session.action('Ping').catch(() => undefined);
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

  /**
   * The PBX's clock, from a Ping's `Timestamp` (Asterisk always sends it) halfway through the round trip: the
   * resync dates what it finds on it, as the events' `Timestamp`s and the CDR do, whatever the offset.
   */
  private async readClock(session: AmiSession): Promise<void> {
    const sent = Date.now();
    const pong = await session.action('Ping');
    const stamp = Number(pong.Timestamp);
    if (pong.Timestamp && Number.isFinite(stamp)) {
      this.tracker.noteClock(stamp * 1000, Math.round((sent + Date.now()) / 2));
    }
  }

  /** After each read: held starts go out startHoldMs after the first of them. */
  private holdStarts(): void {
    if (this.startTimer || !this.tracker.holdsStarts) return;
    this.startTimer = setTimeout(() => {
      this.startTimer = undefined;
      this.deliver(this.tracker.flush());
    }, this.options.startHoldMs);
  }

  private onEvent(event: AmiMessage): void {
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

  private handle(event: AmiMessage): void {
    this.deliver(this.tracker.handle(event, Date.now()));
  }

  private deliver(events: ReturnType<CallTracker['flush']>): void {
    if (events.length === 0) return;
    this.callEvents += events.length;
    this.sink.submit(events);
    this.metrics?.followCalls.set(this.tracker.activeCalls);
  }

  private onClose(session: AmiSession, error: AmiError): void {
    if (this.session !== session) return;
    this.session = undefined;
    clearInterval(this.pingTimer);
    this.failed(error.message);
  }

  private failed(message: string): void {
    this.lastError = message;
    if (this.reconnectTimer) return; // the session's close and the failed action report one failure
    this.setConnected(false);
    if (this.stopped || !this.following()) return;
    const step = Math.min(this.options.reconnectMaxMs, this.options.reconnectMinMs * 2 ** this.attempt);
    const wait = step / 2 + Math.random() * (step / 2);
    this.attempt = Math.min(this.attempt + 1, 20);
    this.reconnects++;
    this.metrics?.followReconnects.inc();
    this.logger.warn(`Manager connection lost (${message}); reconnecting in ${Math.round(wait)} ms`);
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
