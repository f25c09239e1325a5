/**
 * A port: with many portals (docs/API.md) the portal registry provides what readiness reports of them, an
 * aggregate and the portals with the deepest queues; never a reason to fail readiness.
 */
export abstract class PortalsHealth {
  abstract details(): Promise<Record<string, unknown>>;
}
