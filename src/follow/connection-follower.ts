import { Logger } from '@nestjs/common';
import { CallEvent } from '../calls/call';
import { BridgeMetrics } from '../metrics/bridge-metrics';
import { FollowSink } from './follow-sink';
import { PbxSessionOptions, pbxLabel, PbxTarget } from './pbx-connection';
import { AnsweredAtLookup, FollowStatusView, PbxFollower, storedAnswersWithin } from './pbx-follower';

export interface ConnectionFollowerOptions {
  /** Each wait on the PBX (connect, login, a command's answer, the keep-alive's answer). */
  timeoutMs?: number;
  /** Between keep-alives: a peer that does not answer one within timeoutMs is dead. */
  pingMs?: number;
  /** Reconnect backoff: first wait and ceiling; each wait is drawn in [half, full] of the doubled step. */
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
  /** Whether this replica follows now (holds the portal's delivery lease); checked every gateMs. */
  followHere?: () => boolean;
  gateMs?: number;
  /** How long a ringing call's `call.started` waits for more parallel dials (they may span several reads). */
  startHoldMs?: number;
  /** Events held while the resync runs; past it the session is dropped and rebuilt. */
  maxHeldEvents?: number;
  /** tls://: checks the certificate (default true; tests against a self-signed one turn it off). */
  rejectUnauthorized?: boolean;
  /** When the store says calls were answered: a follower taking over keeps their talk time (stored-answers.ts). */
  answeredAt?: AnsweredAtLookup;
}

/** What a follower reads of its tracker (AMI's CallTracker, the event socket's EslTracker). */
export interface FollowTracker<Event> {
  /** Calls followed now. */
  readonly activeCalls: number;
  /** Calls followed since start. */
  readonly followedCalls: number;
  readonly forgottenCalls: number;
  readonly unseenChannels: number;
  readonly holdsStarts: boolean;
  handle(event: Event, now: number): CallEvent[];
  flush(): CallEvent[];
}

export interface FollowSession {
  ping(): Promise<unknown>;
  /** Says goodbye and reads on until the PBX acknowledges it. */
  leave(): Promise<void>;
  close(): void;
}

/** What a resync rebuilt: the calls whose end was missed, what it delivers, how many channels are live. */
export interface Resynced {
  lost: string[];
  events: CallEvent[];
  liveChannels: number;
}

/** A reconnect's wait: the step doubles each attempt from minMs up to maxMs, the wait drawn in [half, full]. */
export function backoffMs(attempt: number, minMs: number, maxMs: number): number {
  const step = Math.min(maxMs, minMs * 2 ** attempt);
  return step / 2 + Math.random() * (step / 2);
}

/**
 * One long-lived PBX connection (AMI, the event socket): open a session, resync what is live while its
 * events are held, then feed every event to the tracker and every call event it gives to the sink. A
 * keep-alive every pingMs detects a dead peer; any failure reconnects with exponential backoff and jitter.
 */
export abstract class ConnectionFollower<
  Session extends FollowSession,
  Event,
  Tracker extends FollowTracker<Event>,
> extends PbxFollower {
  protected readonly logger = new Logger('PbxFollow');
  protected readonly options: Required<
    Omit<ConnectionFollowerOptions, 'followHere' | 'rejectUnauthorized' | 'answeredAt'>
  > &
    ConnectionFollowerOptions;
  protected connected = false;
  private session?: Session;
  private connecting = false;
  private stopped = false;
  private attempt = 0;
  private reconnectTimer?: NodeJS.Timeout;
  private pingTimer?: NodeJS.Timeout;
  private gateTimer?: NodeJS.Timeout;
  private startTimer?: NodeJS.Timeout;
  private held?: Event[];
  private since?: number;
  private lastError?: string;
  private readonly perSecond = new Array<number>(10).fill(0);
  private currentSecond = Math.floor(Date.now() / 1000);
  private callEvents = 0;
  private possiblyLost = 0;
  private reconnects = 0;

  constructor(
    protected readonly target: PbxTarget,
    protected readonly tracker: Tracker,
    private readonly sink: FollowSink,
    options: ConnectionFollowerOptions = {},
    protected readonly metrics?: BridgeMetrics,
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

  protected abstract readonly source: FollowStatusView['source'];
  /** For the logs: what is down or lost (`Manager connection`), and who reports a lost call's end. */
  protected abstract readonly wording: { down: string; lost: string; lostEnds: string };
  protected abstract open(options: PbxSessionOptions<Event>): Promise<Session>;
  /** Rebuilds what is live; `held` are the events that arrived meanwhile (replayed after). */
  protected abstract resync(session: Session, held: readonly Event[]): Promise<Resynced>;

  protected get label(): string {
    return pbxLabel(this.target);
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
    if (session) await session.leave();
    clearTimeout(this.startTimer);
    this.startTimer = undefined;
    this.deliver(this.tracker.flush());
  }

  status(): FollowStatusView {
    this.rollSeconds();
    return {
      source: this.source,
      target: this.label,
      followingHere: this.following(),
      connected: this.connected,
      since: this.since ? new Date(this.since).toISOString() : null,
      lastError: this.lastError ?? null,
      eventsPerSec: Math.round((this.perSecond.reduce((a, b) => a + b, 0) / this.perSecond.length) * 10) / 10,
      callsFollowed: this.tracker.followedCalls,
      callsLive: this.tracker.activeCalls,
      callEvents: this.callEvents,
      possiblyLost: this.possiblyLost + this.tracker.forgottenCalls,
      unseenChannels: this.tracker.unseenChannels,
      reconnects: this.reconnects,
    };
  }

  /** What the store says about when these calls were answered; none past timeoutMs (stored-answers.ts). */
  protected storedAnswers(callIds: (string | undefined)[]): Promise<ReadonlyMap<string, number>> {
    return storedAnswersWithin(
      this.options.answeredAt,
      [...new Set(callIds.filter((id): id is string => Boolean(id)))],
      this.options.timeoutMs,
      (message) => this.logger.warn(message),
    );
  }

  protected deliver(events: CallEvent[]): void {
    if (events.length === 0) return;
    this.callEvents += events.length;
    this.sink.submit(events);
    this.metrics?.followCalls.set(this.tracker.activeCalls);
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
      const session: Session = await this.open({
        timeoutMs: this.options.timeoutMs,
        rejectUnauthorized: this.options.rejectUnauthorized,
        onEvent: (event) => this.onEvent(event),
        onRead: () => this.holdStarts(),
        onClose: (error) => this.onClose(session, error),
      });
      this.session = session;
      const held = this.held;
      const outcome = await this.resync(session, held);
      if (outcome.lost.length > 0) {
        this.possiblyLost += outcome.lost.length;
        this.metrics?.followLost.inc(outcome.lost.length);
        this.logger.warn(
          `${outcome.lost.length} calls ended while the ${this.wording.down} was down; ${this.wording.lostEnds}`,
        );
      }
      this.deliver(outcome.events);
      this.held = undefined;
      for (const event of held) this.deliver(this.tracker.handle(event, Date.now()));
      this.deliver(this.tracker.flush());
      this.attempt = 0;
      this.setConnected(true);
      this.logger.log(`following ${this.label}: ${outcome.liveChannels} live channels`);
      // No answer within timeoutMs ends the session, which reconnects.
      this.pingTimer = setInterval(() => session.ping().catch(() => undefined), this.options.pingMs);
    } catch (error) {
      this.held = undefined;
      this.session?.close();
      this.session = undefined;
      this.failed((error as Error).message);
    } finally {
      this.connecting = false;
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

  private onEvent(event: Event): void {
    this.countEvent();
    if (!this.held) {
      this.deliver(this.tracker.handle(event, Date.now()));
    } else if (this.held.length >= this.options.maxHeldEvents) {
      this.session?.close();
    } else {
      this.held.push(event);
    }
  }

  private onClose(session: Session, error: Error): void {
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
    const wait = backoffMs(this.attempt, this.options.reconnectMinMs, this.options.reconnectMaxMs);
    this.attempt = Math.min(this.attempt + 1, 20);
    this.reconnects++;
    this.metrics?.followReconnects.inc();
    this.logger.warn(`${this.wording.lost} lost (${message}); reconnecting in ${Math.round(wait)} ms`);
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
