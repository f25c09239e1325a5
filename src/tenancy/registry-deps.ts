import { Inject, Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { EgressPolicy } from '../common/egress';
import { AppConfig } from '../config/app-config';
import { PORTAL_ID } from '../config/portal-id';
import {
  AuthSettings,
  DeliverySettings,
  DialSettings,
  EventSettings,
  FollowSettings,
  IntakeSettings,
  LookupSettings,
  PortalSettings,
  RecordingSettings,
  TranscribeSettings,
} from '../config/settings';
import { Transcriber } from '../transcripts/transcriber';
import { BridgeMetrics } from '../metrics/bridge-metrics';
import { CallStore } from '../store/call-store';
import { LeaseStore, ReplicaRegistry, SharedBucketStore } from '../store/coordination-store';
import { DialStore } from '../store/dial-store';
import { FollowPositionStore } from '../store/follow-position-store';
import { LineStore } from '../store/line-store';
import { PortalEventStore } from '../store/portal-event-store';
import { PortalStore } from '../store/portal-store';
import { TokenStore } from '../store/token-store';

/**
 * What the portal registry is built from, in one object: the deployment's settings views, the stores and
 * metrics every portal's runtime shares, and the module graph (for intake, taken once the application is
 * built). Nest fills the properties, so the registry's constructor takes this one argument.
 */
@Injectable()
export class RegistryDeps {
  @Inject(AppConfig) readonly config!: AppConfig;
  @Inject(AuthSettings) readonly auth!: AuthSettings;
  @Inject(PortalSettings) readonly portal!: PortalSettings;
  @Inject(DeliverySettings) readonly delivery!: DeliverySettings;
  @Inject(LookupSettings) readonly lookup!: LookupSettings;
  @Inject(RecordingSettings) readonly recording!: RecordingSettings;
  @Inject(EventSettings) readonly events!: EventSettings;
  @Inject(IntakeSettings) readonly intake!: IntakeSettings;
  /** Single mode's one portal: its click-to-call and its followed PBX, from the environment. */
  @Inject(DialSettings) readonly dial!: DialSettings;
  @Inject(FollowSettings) readonly follow!: FollowSettings;
  @Inject(PORTAL_ID) readonly portalId!: string;
  /** What a portal's own settings may reach (SPEC §8). */
  @Inject(EgressPolicy) readonly egress!: EgressPolicy;
  @Inject(CallStore) readonly calls!: CallStore;
  @Inject(TokenStore) readonly tokens!: TokenStore;
  @Inject(LeaseStore) readonly leases!: LeaseStore;
  /** The database's request buckets with PostgreSQL; null with SQLite (one bucket per process). */
  @Inject(SharedBucketStore) readonly bucket!: SharedBucketStore | null;
  @Inject(PortalStore) readonly portals!: PortalStore;
  @Inject(ReplicaRegistry) readonly replicas!: ReplicaRegistry;
  @Inject(PortalEventStore) readonly portalEvents!: PortalEventStore;
  @Inject(DialStore) readonly dials!: DialStore;
  @Inject(FollowPositionStore) readonly positions!: FollowPositionStore;
  @Inject(LineStore) readonly lines!: LineStore;
  @Inject(BridgeMetrics) readonly metrics!: BridgeMetrics;
  @Inject(ModuleRef) readonly modules!: ModuleRef;
  @Inject(TranscribeSettings) readonly transcribe!: TranscribeSettings;
  private built?: { transcriber?: Transcriber };

  /** The deployment's one transcriber (every portal shares its TRANSCRIBE_CONCURRENCY); none without TRANSCRIBE_URL. */
  get transcriber(): Transcriber | undefined {
    this.built ??= { transcriber: Transcriber.of(this.transcribe) };
    return this.built.transcriber;
  }
}
