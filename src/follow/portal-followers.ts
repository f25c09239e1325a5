import { EgressPolicy } from '../common/egress';
import { FollowSettings } from '../config/settings';
import { BridgeMetrics } from '../metrics/bridge-metrics';
import { AmiFollower } from './ami/ami-follower';
import { CallTracker } from './ami/call-tracker';
import { Endpoints } from './ami/endpoints';
import { EslFollower } from './esl/esl-follower';
import { EslTracker } from './esl/esl-tracker';
import { Legs } from './esl/legs';
import { FollowSink } from './follow-sink';
import { CdrLedger } from './ledger/cdr-ledger';
import { followTargetsOf } from './follow-targets';
import { CdrSource } from './ledger/cdr-source';
import { FollowHealthView, PbxFollower } from './pbx-follower';
import { CallStore } from '../store/call-store';
import { FollowPositionStore } from '../store/follow-position-store';

/** What a follower of one portal's PBX reads besides its settings: that portal's own, never another's. */
export interface FollowContext {
  /** What the settings may reach (SPEC §8): a portal's in multi mode, the operator's own unrestricted. */
  egress: EgressPolicy;
  /** Where its call events go (the durable intake, under the portal's id and country). */
  sink: FollowSink & { idle(): Promise<void> };
  /** The portal's employee directory: a number of it is a phone (without PBX_TRUNKS). */
  isEmployee: (number: string) => boolean;
  internalMaxDigits: number;
  /** ASTERISK_RECORDING_URL: the deployment's template of recording URLs. */
  recordingTemplate?: string;
  freeswitchRecordingTemplate?: string;
  /** PBX_TIME_ZONE: the PBX's local times (a recording's date folder when its name carries none). */
  timeZone?: string;
  /** ASTERISK_CDR_URL: what the ledger reads and keeps besides its table (its position, the calls already ended). */
  ledger?: { portalId: string; zone: string; positions: FollowPositionStore; calls: CallStore };
  /** Whether this replica follows now (holds the portal's delivery lease). */
  followHere: () => boolean;
  /** How often followHere is asked: a takeover waits at most this long for the follower. */
  gateMs?: number;
  metrics?: BridgeMetrics;
  /** When calls were answered, as the portal's store has them (ms by callId): a takeover keeps talk times. */
  answeredAt?: (callIds: string[]) => Promise<ReadonlyMap<string, number>>;
}

/** A follower as its owner drives it; `stop` resolves once what it read is handed to its sink. */
export interface RunningFollower extends PbxFollower {
  start(): void;
  stop(): Promise<void>;
}

/**
 * Builds the followers a FollowSettings configures (docs/API.md), started by nobody yet; every address is a
 * Destination of `context.egress` (follow-targets.ts). Throws when the settings cannot be built or the
 * policy refuses an address (naming the setting, never its value); building connects to nothing.
 */
export function createFollowers(settings: FollowSettings, context: FollowContext): RunningFollower[] {
  const followers: RunningFollower[] = [];
  const built = followTargetsOf(settings, context.egress);
  if ('problems' in built) throw new Error(built.problems.join('; '));
  const { targets } = built;
  const numbers = { isEmployee: context.isEmployee, maxDigits: context.internalMaxDigits };
  const options = { followHere: context.followHere, gateMs: context.gateMs, answeredAt: context.answeredAt };
  if (targets.ami) {
    const endpoints = new Endpoints(settings.trunks, numbers);
    const { recordingTemplate, timeZone } = context;
    const tracker = new CallTracker(endpoints, { recordingTemplate, timeZone });
    followers.push(new AmiFollower(targets.ami, tracker, context.sink, options, context.metrics));
  }
  if (targets.esl) {
    const legs = new Legs(settings.trunks, numbers);
    const tracker = new EslTracker(legs, { recordingTemplate: context.freeswitchRecordingTemplate });
    followers.push(new EslFollower(targets.esl, tracker, context.sink, options, context.metrics));
  }
  if (targets.cdr) {
    const cdr = targets.cdr;
    // Without the stores (a settings check), the address is all there is to check.
    if (!context.ledger) return followers;
    const endpoints = new Endpoints(settings.trunks, numbers);
    const { portalId, zone, positions, calls } = context.ledger;
    const ami = followers.find((follower): follower is AmiFollower => follower instanceof AmiFollower);
    const ledger = new CdrLedger(
      {
        source: new CdrSource(cdr),
        label: cdr.label,
        mapping: { endpoints, zone, recordingTemplate: context.recordingTemplate },
        sink: context.sink,
        positions,
        calls,
        portalId,
        metrics: context.metrics,
      },
      // Beside AMI: an outbound call transferred on is taken once AMI no longer sees it (cdr-ledger.ts).
      { followHere: context.followHere, liveOnPbx: ami && ((callId) => ami.liveOnPbx(callId)) },
    );
    followers.push({
      start: () => ledger.start(),
      stop: () => ledger.stop(),
      status: () => ({ source: 'ledger', ledger: ledger.status() }),
    });
  }
  return followers;
}

/**
 * A portal's followers as one view: the followed connection with its ledger beside it (the calls the
 * connection counts as possibly lost are then not lost: the ledger delivers their call.ended), or the ledger
 * alone.
 */
export function followViewOf(views: FollowHealthView[]): FollowHealthView {
  const connection = views.find((view) => view.source !== 'ledger');
  const ledger = views.find((view) => view.source === 'ledger')?.ledger;
  if (!connection) return views[0];
  return { ...connection, ...(ledger ? { ledger, possiblyLostResolvedBy: 'ledger' as const } : {}) };
}
