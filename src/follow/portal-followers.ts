import { FollowSettings } from '../config/settings';
import { BridgeMetrics } from '../metrics/bridge-metrics';
import { AmiFollower } from './ami/ami-follower';
import { amiTargetOf } from './ami/ami-session';
import { CallTracker } from './ami/call-tracker';
import { Endpoints } from './ami/endpoints';
import { FollowSink } from './follow-sink';
import { PbxFollower } from './pbx-follower';

/** What a follower of one portal's PBX reads besides its settings: that portal's own, never another's. */
export interface FollowContext {
  /** Where its call events go (the durable intake, under the portal's id and country). */
  sink: FollowSink;
  /** The portal's employee directory: a number of it is a phone (without PBX_TRUNKS). */
  isEmployee: (number: string) => boolean;
  /** PBX_INTERNAL_MAX_DIGITS: the deployment's. */
  internalMaxDigits: number;
  /** ASTERISK_RECORDING_URL: the deployment's template of recording URLs. */
  recordingTemplate?: string;
  /** Whether this replica follows now (holds the portal's delivery lease). */
  followHere: () => boolean;
  /** How often followHere is asked: a takeover waits at most this long for the follower. */
  gateMs?: number;
  metrics?: BridgeMetrics;
  /** When calls were answered, as the portal's store has them (ms by callId): a takeover keeps talk times. */
  answeredAt?: (callIds: string[]) => Promise<ReadonlyMap<string, number>>;
}

/** A follower as its owner drives it: started, stopped, and shown (no secret). */
export interface RunningFollower extends PbxFollower {
  start(): void;
  stop(): void;
}

/**
 * Builds the followers a FollowSettings configures (SPEC.md §9), started by nobody yet: the seam through
 * which each source joins the per-portal wiring. `ami` is here; the FreeSWITCH event socket (`esl`) and a
 * ledger (ASTERISK_CDR_URL) add their builder beside it, fed the same context. Throws when the settings
 * cannot be built (the message names the setting, never its value); building connects to nothing.
 */
export function createFollowers(settings: FollowSettings, context: FollowContext): RunningFollower[] {
  const followers: RunningFollower[] = [];
  if (settings.mode === 'ami') {
    if (!settings.amiUrl) throw new Error('AMI_URL: required when PBX_EVENTS=ami');
    let target;
    try {
      target = amiTargetOf(settings.amiUrl);
    } catch {
      throw new Error('AMI_URL: not a usable address');
    }
    const endpoints = new Endpoints(settings.trunks, {
      isEmployee: context.isEmployee,
      maxDigits: context.internalMaxDigits,
    });
    const tracker = new CallTracker(endpoints, { recordingTemplate: context.recordingTemplate });
    followers.push(
      new AmiFollower(
        target,
        tracker,
        context.sink,
        { followHere: context.followHere, gateMs: context.gateMs, answeredAt: context.answeredAt },
        context.metrics,
      ),
    );
  }
  return followers;
}
