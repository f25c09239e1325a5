import { CallEvent } from '../../calls/call';
import { BridgeMetrics } from '../../metrics/bridge-metrics';
import {
  ConnectionFollower,
  ConnectionFollowerOptions,
  Resynced,
  SessionCallbacks,
} from '../connection-follower';
import { FollowSink } from '../follow-sink';
import { storedAnswersWithin } from '../pbx-follower';
import { AmiMessage } from './ami-message';
import { AmiError, amiLabel, AmiSession, AmiTarget } from './ami-session';
import { CallTracker } from './call-tracker';

export type AmiFollowerOptions = ConnectionFollowerOptions;

/**
 * One Manager connection (real PBX output): resync from `CoreShowChannels`, `Ping` as the keep-alive. No
 * replay: a call whose outside channel went while disconnected is possibly lost (only a ledger can tell).
 */
export class AmiFollower extends ConnectionFollower<AmiSession, AmiMessage, AmiError> {
  protected readonly wording = {
    down: 'Manager connection',
    lost: 'Manager connection',
    lostEnds: 'without a ledger their end is unknown',
  };

  constructor(
    private readonly target: AmiTarget,
    private readonly calls: CallTracker,
    sink: FollowSink,
    options: AmiFollowerOptions = {},
    metrics?: BridgeMetrics,
  ) {
    super('ami', calls, sink, options, metrics);
  }

  /** Whether the call is live on the PBX, as followed since the last resync; undefined while not connected. */
  liveOnPbx(callId: string): boolean | undefined {
    return this.connected ? this.calls.follows(callId) : undefined;
  }

  protected get label(): string {
    return amiLabel(this.target);
  }

  protected open(callbacks: SessionCallbacks<AmiMessage, AmiError>): Promise<AmiSession> {
    const { timeoutMs, rejectUnauthorized } = this.options;
    return AmiSession.open(this.target, { timeoutMs, rejectUnauthorized, ...callbacks });
  }

  protected async resync(session: AmiSession): Promise<Resynced> {
    await this.readClock(session);
    const live = await session.list('CoreShowChannels');
    const answers = await storedAnswersWithin(
      this.options.answeredAt,
      [...new Set(live.map((entry) => entry.Linkedid).filter(Boolean))],
      this.options.timeoutMs,
      (message) => this.logger.warn(message),
    );
    const { lost, events } = this.calls.resync(live, Date.now(), answers);
    return { lost, events, liveChannels: live.length };
  }

  protected ping(session: AmiSession): Promise<unknown> {
    return session.action('Ping');
  }

  protected leave(session: AmiSession): Promise<void> {
    return session.logoff();
  }

  protected handle(event: AmiMessage, now: number): CallEvent[] {
    return this.calls.handle(event, now);
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
      this.calls.noteClock(stamp * 1000, Math.round((sent + Date.now()) / 2));
    }
  }
}
