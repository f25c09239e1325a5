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
