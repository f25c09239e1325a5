import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Module,
  OnApplicationBootstrap,
  Optional,
} from '@nestjs/common';
import { EgressPolicy } from '../common/egress';
import { FollowSettings, IntakeSettings } from '../config/settings';
import { PORTAL_ID } from '../config/portal-id';
import { EmployeeDirectory } from '../crm/employee-directory';
import { PortalCrm } from '../crm/portal-crm';
import { DeliveryService } from '../delivery/delivery.service';
import { CallIntake } from '../intake/call-intake.service';
import { IntakeModule } from '../intake/intake.module';
import { BridgeMetrics } from '../metrics/bridge-metrics';
import { CallStore } from '../store/call-store';
import { FollowPositionStore } from '../store/follow-position-store';
import { AmiFollower } from './ami/ami-follower';
import { amiTargetOf } from './ami/ami-session';
import { CallTracker } from './ami/call-tracker';
import { Endpoints } from './ami/endpoints';
import { EslFollower } from './esl/esl-follower';
import { eslTargetOf } from './esl/esl-session';
import { EslTracker } from './esl/esl-tracker';
import { Legs } from './esl/legs';
import { IntakeSink } from './intake-sink';
import { CdrLedger } from './ledger/cdr-ledger';
import { CdrSource, cdrTargetOf } from './ledger/cdr-source';
import { FollowHealthView, PbxFollower } from './pbx-follower';
import { storedAnswers } from './stored-answers';

/** At most this long a stopping bridge keeps storing what its follower handed over (the store may be down). */
const SINK_DRAIN_MS = 5000;

/** What the one portal's follower is built from (Nest fills the properties). */
@Injectable()
class SinglePortalFollow {
  @Inject(FollowSettings) readonly settings!: FollowSettings;
  @Inject(IntakeSettings) readonly intakeSettings!: IntakeSettings;
  @Inject(CallIntake) readonly intake!: CallIntake;
  @Inject(BridgeMetrics) readonly metrics!: BridgeMetrics;
  @Inject(PORTAL_ID) readonly portalId!: string;
  @Inject(CallStore) readonly calls!: CallStore;
  @Inject(FollowPositionStore) readonly positions!: FollowPositionStore;
  /** Where delivery runs, the follower runs: the holder of the portal's delivery lease. */
  @Optional() @Inject(DeliveryService) readonly delivery?: DeliveryService;
  @Optional() @Inject(PortalCrm) readonly crm?: PortalCrm;
  @Optional() @Inject(EmployeeDirectory) readonly directory?: EmployeeDirectory;
}

/**
 * PBX_EVENTS=ami with one portal: follows AMI_URL (esl: ESL_URL) on the replica that holds the portal's delivery lease
 * (`deliveringHere`), so with several replicas one follows at a time and a survivor takes over with the
 * lease; the intake's idempotency keys make an overlap during a takeover harmless. ASTERISK_CDR_URL (with
 * PBX_EVENTS=ami or alone) reads the CDR ledger on the same replica and feeds the same sink.
 */
@Injectable()
export class FollowService extends PbxFollower implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly follower?: AmiFollower | EslFollower;
  private readonly ledger?: CdrLedger;
  private readonly sink: IntakeSink;
  private closing = false;
  private followedHere = false;

  constructor(deps: SinglePortalFollow) {
    super();
    const { settings, intakeSettings, intake, metrics, portalId, calls, positions } = deps;
    const { delivery, crm, directory } = deps;
    this.sink = new IntakeSink(
      intake,
      portalId,
      () => crm?.defaultCountryOf(portalId) ?? intakeSettings.defaultCountry,
      metrics,
    );
    const numbers = {
      isEmployee: (number: string) => directory?.userIdFor(number) !== undefined,
      maxDigits: intakeSettings.internalMaxDigits,
    };
    const endpoints = new Endpoints(settings.trunks, numbers);
    // The operator's own settings (the environment's): reached wherever they point, through the same
    // Destinations and the same hand-read URLs (any character in a password) as a portal's.
    const egress = EgressPolicy.unrestricted();
    // Delivery may give up its lease first while the bridge stops: the follower then keeps its session until
    // its own stop drains it (a survivor following meanwhile only adds duplicates).
    const followHere = delivery
      ? () =>
          this.closing ? this.followedHere : (this.followedHere = delivery.portalStatus().deliveringHere)
      : undefined;
    if (settings.mode === 'esl') {
      // PBX_EVENTS=esl: FreeSWITCH's event socket (docs/decisions/follow-esl.md); mod_json_cdr is its ledger.
      const tracker = new EslTracker(new Legs(settings.trunks, numbers), {
        recordingTemplate: intakeSettings.recordingUrls.freeswitch,
      });
      this.follower = new EslFollower(
        eslTargetOf(settings.eslUrl as string, egress),
        tracker,
        this.sink,
        {
          followHere,
          // A restarted bridge keeps the talk time of the calls it had seen answered before.
          answeredAt: (callIds) => storedAnswers(calls, portalId, callIds),
        },
        metrics,
      );
    }
    if (settings.mode === 'ami') {
      const tracker = new CallTracker(endpoints, {
        recordingTemplate: intakeSettings.recordingUrls.asterisk,
        timeZone: intakeSettings.timeZone,
      });
      this.follower = new AmiFollower(
        amiTargetOf(settings.amiUrl as string, egress),
        tracker,
        this.sink,
        {
          followHere,
          // A survivor taking over keeps the talk time of the calls the previous replica saw answered.
          answeredAt: (callIds) => storedAnswers(calls, portalId, callIds),
        },
        metrics,
      );
    }
    if (settings.cdrUrl) {
      const ami = this.follower instanceof AmiFollower ? this.follower : undefined;
      const cdr = cdrTargetOf(settings.cdrUrl, egress);
      this.ledger = new CdrLedger(
        {
          source: new CdrSource(cdr),
          label: cdr.label,
          mapping: {
            endpoints,
            zone: intakeSettings.timeZone,
            recordingTemplate: intakeSettings.recordingUrls.asterisk,
          },
          sink: this.sink,
          positions,
          calls,
          portalId,
          metrics,
        },
        // Beside AMI: an outbound call transferred on is taken once AMI no longer sees it (cdr-ledger.ts).
        { followHere, liveOnPbx: ami && ((callId) => ami.liveOnPbx(callId)) },
      );
    }
  }

  onApplicationBootstrap(): void {
    this.follower?.start();
    this.ledger?.start();
  }

  /**
   * Before the store closes: the follower reads what the PBX sent until it acknowledges the goodbye and
   * hands over the starts it held, the ledger stops, and the sink stores all of it (at most SINK_DRAIN_MS).
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.closing = true;
    await Promise.all([this.follower?.stop(), this.ledger?.stop()]);
    await this.sink.close(SINK_DRAIN_MS);
  }

  status(): FollowHealthView {
    const ledger = this.ledger?.status();
    if (!this.follower) return { source: 'ledger', ledger: ledger as NonNullable<typeof ledger> };
    // With a ledger, the calls AMI counts as possibly lost are not lost: the ledger delivers their call.ended.
    return { ...this.follower.status(), ...(ledger ? { ledger, possiblyLostResolvedBy: 'ledger' } : {}) };
  }
}

/** Following the PBX (docs/API.md); imported only when PBX_EVENTS is set. */
@Module({
  imports: [IntakeModule],
  providers: [SinglePortalFollow, FollowService, { provide: PbxFollower, useExisting: FollowService }],
  exports: [PbxFollower],
})
export class FollowModule {}
