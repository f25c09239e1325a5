import { Counter, Gauge, Histogram, collectDefaultMetrics, Registry } from 'prom-client';

/**
 * Every Prometheus metric of the bridge, in one registry per application instance (tests build several).
 * Gauges that describe the store or the portal are filled on scrape by the collectors registered in
 * MetricsModule, so nothing polls when nobody looks.
 */
export class BridgeMetrics {
  readonly registry = new Registry();

  readonly events = new Counter({
    name: 'bridge_events_total',
    help: 'PBX call events by outcome: accepted (newly stored), duplicate, rejected (in a 4xx body)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly portalRequests = new Counter({
    name: 'bridge_portal_requests_total',
    help: 'Requests to the portal by method and outcome (ok, or the error kind: budget, server, network, …)',
    labelNames: ['portal', 'method', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly batchCommands = new Histogram({
    name: 'bridge_batch_commands',
    help: 'Commands per batch request sent to the portal',
    labelNames: ['portal'] as const,
    buckets: [1, 5, 10, 20, 30, 40, 45, 50],
    registers: [this.registry],
  });

  readonly commands = new Counter({
    name: 'bridge_commands_total',
    help: 'Telephony commands by step and outcome: delivered, failed (parked), retried',
    labelNames: ['portal', 'step', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly ringToCard = new Histogram({
    name: 'bridge_ring_to_card_seconds',
    help: 'From storing a ringing call to the portal answering its register with SHOW=1 (the card popped)',
    labelNames: ['portal'] as const,
    buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
    registers: [this.registry],
  });

  readonly retries = new Counter({
    name: 'bridge_retries_total',
    help: 'Calls scheduled for a retry, by the kind of portal answer',
    labelNames: ['portal', 'reason'] as const,
    registers: [this.registry],
  });

  readonly budgetWait = new Counter({
    name: 'bridge_budget_wait_seconds_total',
    help: 'Time requests spent waiting for the portal request budget',
    labelNames: ['portal'] as const,
    registers: [this.registry],
  });

  readonly queueDepth = new Gauge({
    name: 'bridge_queue_depth',
    help: 'Calls with portal work left (held calls included)',
    labelNames: ['portal'] as const,
    registers: [this.registry],
  });

  readonly queueOldestAge = new Gauge({
    name: 'bridge_queue_oldest_age_seconds',
    help: 'Age of the oldest call with portal work left',
    labelNames: ['portal'] as const,
    registers: [this.registry],
  });

  readonly callsFailed = new Gauge({
    name: 'bridge_calls_failed',
    help: 'Calls parked as failed, waiting for an operator',
    labelNames: ['portal'] as const,
    registers: [this.registry],
  });

  readonly callsDeleted = new Counter({
    name: 'bridge_calls_deleted_total',
    help: 'Settled (finished or failed) calls deleted with their events once older than RETENTION_DAYS',
    registers: [this.registry],
  });

  readonly portalPaused = new Gauge({
    name: 'bridge_portal_paused',
    help: '1 while delivery to the portal is paused (credentials or rights refused)',
    labelNames: ['portal'] as const,
    registers: [this.registry],
  });

  readonly batchesInFlight = new Gauge({
    name: 'bridge_batches_in_flight',
    help: 'Batch requests waiting for the portal answer now (the loop keeps as many as its answer time needs)',
    labelNames: ['portal'] as const,
    registers: [this.registry],
  });

  readonly operatingSeconds = new Gauge({
    name: 'bridge_portal_operating_seconds',
    help: 'Server time a portal method has used in the portal window, as the bridge estimates it (the portal blocks the method past B24_OPERATING_LIMIT_SEC)',
    labelNames: ['portal', 'method'] as const,
    registers: [this.registry],
  });

  readonly deliveryLeaseHeld = new Gauge({
    name: 'bridge_delivery_lease_held',
    help: '1 on the replica that delivers the portal now (holds its delivery lease); the sum over replicas is 1',
    labelNames: ['portal'] as const,
    registers: [this.registry],
  });

  readonly tokenRefreshes = new Counter({
    name: 'bridge_token_refreshes_total',
    help: 'OAuth token refreshes by outcome',
    labelNames: ['portal', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly lookupDuration = new Histogram({
    name: 'bridge_lookup_duration_seconds',
    help: 'Time to answer GET /v1/lookup, by where the answer came from',
    labelNames: ['source'] as const,
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 1.5, 2, 5],
    registers: [this.registry],
  });

  readonly dials = new Counter({
    name: 'bridge_dials_total',
    help: 'Click-to-call dial requests by outcome: sent (the PBX took it), failed (the portal call finished as failed), retried',
    labelNames: ['mode', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly clickToOriginate = new Histogram({
    name: 'bridge_click_to_originate_seconds',
    help: "Seconds from a click (the portal event's time) to the PBX accepting the originate",
    labelNames: ['mode'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
    registers: [this.registry],
  });

  // Following the PBX (PBX_EVENTS, the API contract (docs/API.md)).
  readonly followConnected = new Gauge({
    name: 'bridge_pbx_follow_connected',
    help: '1 while the PBX connection (PBX_EVENTS: ami or esl) is logged in and followed here, else 0',
    registers: [this.registry],
  });

  readonly followAmiEvents = new Counter({
    name: 'bridge_pbx_follow_events_total',
    help: 'Events read from the PBX connection',
    registers: [this.registry],
  });

  readonly followedCallEvents = new Counter({
    name: 'bridge_pbx_follow_call_events_total',
    help: 'Call events the followed PBX gave, by event',
    labelNames: ['event'] as const,
    registers: [this.registry],
  });

  readonly followCalls = new Gauge({
    name: 'bridge_pbx_follow_calls',
    help: 'Calls followed right now',
    registers: [this.registry],
  });

  readonly followLost = new Counter({
    name: 'bridge_pbx_follow_calls_lost_total',
    help: 'Calls followed before a disconnect whose end was never seen (no ledger)',
    registers: [this.registry],
  });

  readonly followReconnects = new Counter({
    name: 'bridge_pbx_follow_reconnects_total',
    help: 'Reconnects of the PBX connection',
    registers: [this.registry],
  });

  // The CDR ledger (ASTERISK_CDR_URL, the API contract (docs/API.md)).
  readonly ledgerConnected = new Gauge({
    name: 'bridge_pbx_ledger_connected',
    help: '1 while the CDR ledger (ASTERISK_CDR_URL) answers and is read here, else 0',
    registers: [this.registry],
  });

  readonly ledgerRows = new Counter({
    name: 'bridge_pbx_ledger_rows_total',
    help: 'CDR rows read from the ledger (each row once)',
    registers: [this.registry],
  });

  readonly ledgerCalls = new Counter({
    name: 'bridge_pbx_ledger_calls_total',
    help: 'Finished calls in the ledger by outcome: taken (not ended by followed or posted events), already_ended, internal, rejected',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly ledgerLag = new Gauge({
    name: 'bridge_pbx_ledger_lag_seconds',
    help: 'Now minus the end of the newest CDR row read',
    registers: [this.registry],
  });

  readonly portalEvents = new Counter({
    name: 'bridge_portal_events_total',
    help:
      'Portal event posts and their handling by event and outcome: stored, duplicate, refused, unknown ' +
      '(answered and ignored), published, no_subscriber, cache_dropped, malformed, retried',
    labelNames: ['event', 'outcome'] as const,
    registers: [this.registry],
  });

  private readonly scrapeHooks: (() => Promise<void>)[] = [];

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    // Zero from the start, so dashboards plot the followed call events before the first call.
    for (const event of ['call.started', 'call.answered', 'call.ended']) {
      this.followedCallEvents.inc({ event }, 0);
    }
    for (const outcome of ['taken', 'already_ended', 'internal', 'rejected']) {
      this.ledgerCalls.inc({ outcome }, 0);
    }
  }

  /** Registers a refresh of gauges that run on every scrape. */
  onScrape(hook: () => Promise<void>): void {
    this.scrapeHooks.push(hook);
  }

  async render(): Promise<string> {
    await Promise.all(this.scrapeHooks.map((hook) => hook()));
    return this.registry.metrics();
  }
}
