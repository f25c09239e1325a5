import { QueueStats } from '../store/call-store';

/**
 * A port: with many portals (docs/API.md) the portal registry provides what readiness reports of them, an
 * aggregate and the portals with the deepest queues; never a reason to fail readiness.
 */
export abstract class PortalsHealth {
  /** How many portals are served: from memory, for every probe. */
  abstract count(): number;

  /** The portals' states counted from memory (delivering here, paused, needing re-authorisation). */
  abstract overview(): Record<string, unknown>;

  /** The aggregate and the deepest queues: a grouped scan of the waiting calls (readiness reads it rarely). */
  abstract queues(): Promise<Record<string, unknown>>;
}

/**
 * A port: with one portal, what readiness reports of it (its delivery and credentials, its click-to-call
 * dialer, its followed PBX), provided by the portal registry's seeded portal; never a reason to fail
 * readiness.
 */
export abstract class PortalHealth {
  /** The portal's queue, as the store has it. */
  abstract queueStats(): Promise<QueueStats>;
  /** The `portal` check's details: delivery, authorisation, operating time, the queue and events. */
  abstract portal(stats: QueueStats): Record<string, unknown>;
  /** The `dialer` check's details. */
  abstract dialer(): Record<string, unknown>;
  /** The `pbxFollow` check's details; undefined when the PBX is not followed. */
  abstract follow(): Record<string, unknown> | undefined;
}
