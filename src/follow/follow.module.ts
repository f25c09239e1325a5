import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Module,
  OnApplicationBootstrap,
  Optional,
} from '@nestjs/common';
import { FollowSettings, IntakeSettings } from '../config/settings';
import { PORTAL_ID } from '../config/portal-id';
import { EmployeeDirectory } from '../crm/employee-directory';
import { PortalCrm } from '../crm/portal-crm';
import { DeliveryService } from '../delivery/delivery.service';
import { CallIntake } from '../intake/call-intake.service';
import { IntakeModule } from '../intake/intake.module';
import { BridgeMetrics } from '../metrics/bridge-metrics';
import { CallStore } from '../store/call-store';
import { AmiFollower } from './ami/ami-follower';
import { amiTargetOf } from './ami/ami-session';
import { CallTracker } from './ami/call-tracker';
import { Endpoints } from './ami/endpoints';
import { IntakeSink } from './intake-sink';
import { storedAnswers } from './stored-answers';
import { FollowStatusView, PbxFollower } from './pbx-follower';

/**
 * PBX_EVENTS=ami with one portal: follows AMI_URL on the replica that holds the portal's delivery lease
 * (`deliveringHere`), so with several replicas one follows at a time and a survivor takes over with the
 * lease; the intake's idempotency keys make an overlap during a takeover harmless.
 */
@Injectable()
export class FollowService extends PbxFollower implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly follower: AmiFollower;
  private readonly sink: IntakeSink;

  constructor(
    settings: FollowSettings,
    intakeSettings: IntakeSettings,
    intake: CallIntake,
    metrics: BridgeMetrics,
    @Inject(PORTAL_ID) portalId: string,
    @Optional() delivery?: DeliveryService,
    @Optional() crm?: PortalCrm,
    @Optional() directory?: EmployeeDirectory,
    @Optional() calls?: CallStore,
  ) {
    super();
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
    const tracker = new CallTracker(new Endpoints(settings.trunks, numbers), {
      recordingTemplate: intakeSettings.recordingUrls.asterisk,
    });
    this.follower = new AmiFollower(
      amiTargetOf(settings.amiUrl as string),
      tracker,
      this.sink,
      {
        followHere: delivery ? () => delivery.portalStatus().deliveringHere : undefined,
        // A survivor taking over keeps the talk time of the calls the previous replica saw answered.
        answeredAt: calls && ((callIds) => storedAnswers(calls, portalId, callIds)),
      },
      metrics,
    );
  }

  onApplicationBootstrap(): void {
    this.follower.start();
  }

  beforeApplicationShutdown(): void {
    this.follower.stop();
    this.sink.stop();
  }

  status(): FollowStatusView {
    return this.follower.status();
  }
}

/** Following the PBX (SPEC.md §9); imported only when PBX_EVENTS is set. */
@Module({
  imports: [IntakeModule],
  providers: [FollowService, { provide: PbxFollower, useExisting: FollowService }],
  exports: [PbxFollower],
})
export class FollowModule {}
