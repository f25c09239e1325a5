import { DeliveryDeps } from '../delivery/delivery.service';
import { ReplicaRegistry } from '../store/coordination-store';
import { PortalScopedSettings } from './portal-scoped-settings';

/**
 * An idle portal's delivery looks at the store on its own only this often: a backstop. New work wakes it at
 * once (intake here, NOTIFY from another replica), a known retry's due time ends its sleep, and the
 * registry's one look a second at every portal's due work (`DueWork`) wakes it for the rest. Ten thousand
 * idle portals at the former 5 s were 4 000 statements a second.
 */
const IDLE_LOOK_MS = 3_600_000;

/**
 * Where a portal's services run, said once for the runtime (docs/decisions/one-assembly-path.md). Two
 * placements exist:
 * - `COMPETE`, single mode's seeded portal: every replica runs its delivery, and they compete for its lease
 *   through their liveness marks. There is no registry-wide look, so its workers keep their own polls. It is
 *   never dropped, and the one holding the lease binds its events.
 * - `SHARD`, every installed portal of multi mode: the shard map gives its delivery to one replica, which
 *   chases the lease until the previous holder lets go; the registry's look (`DueWork`) wakes its workers.
 */
export interface RuntimePlacement {
  readonly name: 'compete' | 'shard';
  /** Kept built whatever its settings and however idle (the seeded portal is the application's one). */
  readonly alwaysPinned: boolean;
  /** The registry's one look at every portal's due work wakes the dialer and event processor. */
  readonly sharedLook: boolean;
  /**
   * The directory starts at `open()`; else at `startSeeded()`, once the application is up (a request sent
   * while Nest still builds it leaves late, and the portal counts it after those granted behind it). Its
   * first read then waits for an idle budget or for something that needs it (`EmployeeDirectory`).
   */
  readonly directoryAtOpen: boolean;
  /** Only the replica holding the delivery lease binds the portal's events (replicas start together). */
  readonly bindsOnLease: boolean;
  /** After stopping, readiness and the page still show the last delivery and followers (the bridge stops). */
  readonly keepsLastStatus: boolean;
  /** How its delivery takes and keeps the portal's lease. */
  delivery(
    scoped: PortalScopedSettings,
    run: { replicaId: string; replicas: ReplicaRegistry },
  ): Pick<DeliveryDeps, 'options' | 'replicas'>;
}

export const COMPETE: RuntimePlacement = {
  name: 'compete',
  alwaysPinned: true,
  sharedLook: false,
  directoryAtOpen: false,
  bindsOnLease: true,
  keepsLastStatus: true,
  // Every replica competes for the lease, each with its own liveness mark (LivenessWatch).
  delivery: (scoped, run) => ({ options: { metricsPortal: scoped.metricsLabel }, replicas: run.replicas }),
};

export const SHARD: RuntimePlacement = {
  name: 'shard',
  alwaysPinned: false,
  sharedLook: true,
  directoryAtOpen: true,
  bindsOnLease: false,
  keepsLastStatus: false,
  delivery: (scoped, run) => ({
    options: {
      owner: run.replicaId,
      metricsPortal: scoped.metricsLabel,
      // The registry fills the queue gauges of all its portals at once.
      gauges: false,
      idleLookMs: IDLE_LOOK_MS,
      // Until the previous holder lets go (it finishes its batches in flight) or its replica is seen dead.
      chaseLeaseMs: scoped.delivery.leaseMs + 5000,
    },
  }),
};
