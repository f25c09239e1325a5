import { ConnectionFollower, ConnectionFollowerOptions, Resynced } from '../connection-follower';
import { PbxSessionOptions } from '../pbx-connection';
import { AmiMessage } from './ami-message';
import { AmiSession } from './ami-session';
import { CallTracker } from './call-tracker';

export type AmiFollowerOptions = ConnectionFollowerOptions;

/**
 * One Manager connection (real PBX output): resync from `CoreShowChannels`, `Ping` as the keep-alive. No
 * replay: a call whose outside channel went while disconnected is possibly lost (only a ledger can tell).
 */
export class AmiFollower extends ConnectionFollower<AmiSession, AmiMessage, CallTracker> {
  protected readonly source = 'ami';
  protected readonly wording = {
    down: 'Manager connection',
    lost: 'Manager connection',
    lostEnds: 'without a ledger their end is unknown',
  };

  /** Whether the call is live on the PBX, as followed since the last resync; undefined while not connected. */
  liveOnPbx(callId: string): boolean | undefined {
    return this.connected ? this.tracker.follows(callId) : undefined;
  }

  protected open(options: PbxSessionOptions<AmiMessage>): Promise<AmiSession> {
    return AmiSession.open(this.target, options);
  }

  protected async resync(session: AmiSession): Promise<Resynced> {
    await this.readClock(session);
    const live = await session.list('CoreShowChannels');
    const answers = await this.storedAnswers(live.map((entry) => entry.Linkedid));
    const { lost, events } = this.tracker.resync(live, Date.now(), answers);
    return { lost, events, liveChannels: live.length };
  }

  /**
   * The PBX's clock, from a Ping's `Timestamp` (Asterisk always sends it) halfway through the round trip: the
   * resync dates what it finds on it, as the events' `Timestamp`s and the CDR do, whatever the offset.
   */
  private async readClock(session: AmiSession): Promise<void> {
    const sent = Date.now();
    const pong = await session.ping();
    const stamp = Number(pong.Timestamp);
    if (pong.Timestamp && Number.isFinite(stamp)) {
      this.tracker.noteClock(stamp * 1000, Math.round((sent + Date.now()) / 2));
    }
  }
}
