import { Counter, Gauge, Histogram, collectDefaultMetrics, Registry } from 'prom-client';

/**
 * Every Prometheus metric of the bridge, in one registry per application instance (tests build several).
 * Gauges that describe the store or the portal are filled on scrape by the collectors registered in
 * MetricsModule, so nothing polls when nobody looks.
 */
export class BridgeMetrics {
  readonly registry = new Registry();

  readonly events = this.counter(
    'bridge_events_total',
    'PBX call events by outcome: accepted (newly stored), duplicate, rejected (in a 4xx body)',
    ['outcome'],
  );

  readonly portalRequests = this.counter(
    'bridge_portal_requests_total',
    'Requests to the portal by method and outcome (ok, or the error kind: budget, server, network, …)',
    ['portal', 'method', 'outcome'],
  );

  readonly batchCommands = this.histogram(
    'bridge_batch_commands',
    'Commands per batch request sent to the portal',
    [1, 5, 10, 20, 30, 40, 45, 50],
    ['portal'],
  );

  readonly commands = this.counter(
    'bridge_commands_total',
    'Telephony commands by step and outcome: delivered, failed (parked), retried',
    ['portal', 'step', 'outcome'],
  );

  readonly ringToCard = this.histogram(
    'bridge_ring_to_card_seconds',
    'From storing a ringing call to the portal answering its register with SHOW=1 (the card popped)',
    [0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
    ['portal'],
  );

  readonly transcripts = this.counter(
    'bridge_transcripts_total',
    'Call transcripts by outcome: attached (the portal has it), none (no speech), failed (given up)',
    ['portal', 'outcome'],
  );

  readonly transcribeSeconds = this.counter(
    'bridge_transcribe_service_seconds_total',
    "Time spent waiting for the transcription service's answers",
    ['portal'],
  );

  readonly retries = this.counter(
    'bridge_retries_total',
    'Calls scheduled for a retry, by the kind of portal answer',
    ['portal', 'reason'],
  );

  readonly budgetWait = this.counter(
    'bridge_budget_wait_seconds_total',
    'Time requests spent waiting for the portal request budget',
    ['portal'],
  );

  readonly queueDepth = this.gauge(
    'bridge_queue_depth',
    'Calls with portal work left (held calls included)',
    ['portal'],
  );

  readonly queueOldestAge = this.gauge(
    'bridge_queue_oldest_age_seconds',
    'Age of the oldest call with portal work left',
    ['portal'],
  );

  readonly callsFailed = this.gauge(
    'bridge_calls_failed',
    'Calls parked as failed, waiting for an operator',
    ['portal'],
  );

  readonly callsDeleted = this.counter(
    'bridge_calls_deleted_total',
    'Settled (finished or failed) calls deleted with their events once older than RETENTION_DAYS',
  );

  readonly portalPaused = this.gauge(
    'bridge_portal_paused',
    '1 while delivery to the portal is paused (credentials or rights refused)',
    ['portal'],
  );

  readonly batchesInFlight = this.gauge(
    'bridge_batches_in_flight',
    'Batch requests waiting for the portal answer now (the loop keeps as many as its answer time needs)',
    ['portal'],
  );

  readonly operatingSeconds = this.gauge(
    'bridge_portal_operating_seconds',
    'Server time a portal method has used in the portal window, as the bridge estimates it (the portal blocks the method past B24_OPERATING_LIMIT_SEC)',
    ['portal', 'method'],
  );

  readonly deliveryLeaseHeld = this.gauge(
    'bridge_delivery_lease_held',
    '1 on the replica that delivers the portal now (holds its delivery lease); the sum over replicas is 1',
    ['portal'],
  );

  readonly tokenRefreshes = this.counter('bridge_token_refreshes_total', 'OAuth token refreshes by outcome', [
    'portal',
    'outcome',
  ]);

  readonly lookupDuration = this.histogram(
    'bridge_lookup_duration_seconds',
    'Time to answer GET /v1/lookup, by where the answer came from',
    [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 1.5, 2, 5],
    ['source'],
  );

  readonly dials = this.counter(
    'bridge_dials_total',
    'Click-to-call dial requests by outcome: sent (the PBX took it), failed (the portal call finished as failed), retried',
    ['mode', 'outcome'],
  );

  readonly clickToOriginate = this.histogram(
    'bridge_click_to_originate_seconds',
    "Seconds from a click (the portal event's time) to the PBX accepting the originate",
    [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
    ['mode'],
  );

  // Following the PBX (PBX_EVENTS, the API contract (docs/API.md)).
  readonly followConnected = this.gauge(
    'bridge_pbx_follow_connected',
    '1 while the PBX connection (PBX_EVENTS: ami or esl) is logged in and followed here, else 0',
  );

  readonly followAmiEvents = this.counter(
    'bridge_pbx_follow_events_total',
    'Events read from the PBX connection',
  );

  readonly followedCallEvents = this.counter(
    'bridge_pbx_follow_call_events_total',
    'Call events the followed PBX gave, by event',
    ['event'],
  );

  readonly followCalls = this.gauge('bridge_pbx_follow_calls', 'Calls followed right now');

  readonly followLost = this.counter(
    'bridge_pbx_follow_calls_lost_total',
    'Calls followed before a disconnect whose end was never seen (no ledger)',
  );

  readonly followReconnects = this.counter(
    'bridge_pbx_follow_reconnects_total',
    'Reconnects of the PBX connection',
  );

  // The CDR ledger (ASTERISK_CDR_URL, the API contract (docs/API.md)).
  readonly ledgerConnected = this.gauge(
    'bridge_pbx_ledger_connected',
    '1 while the CDR ledger (ASTERISK_CDR_URL) answers and is read here, else 0',
  );

  readonly ledgerRows = this.counter(
    'bridge_pbx_ledger_rows_total',
    'CDR rows read from the ledger (each row once)',
  );

  readonly ledgerCalls = this.counter(
    'bridge_pbx_ledger_calls_total',
    'Finished calls in the ledger by outcome: taken (not ended by followed or posted events), already_ended, internal, rejected',
    ['outcome'],
  );

  readonly ledgerLag = this.gauge(
    'bridge_pbx_ledger_lag_seconds',
    'Now minus the end of the newest CDR row read',
  );

  readonly portalEvents = this.counter(
    'bridge_portal_events_total',
    'Portal event posts and their handling by event and outcome: stored, duplicate, refused, unknown ' +
      '(answered and ignored), published, no_subscriber, cache_dropped, malformed, retried',
    ['event', 'outcome'],
  );

  private counter<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []) {
    return new Counter<L>({ name, help, labelNames, registers: [this.registry] });
  }

  private gauge<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []) {
    return new Gauge<L>({ name, help, labelNames, registers: [this.registry] });
  }

  private histogram<L extends string>(
    name: string,
    help: string,
    buckets: number[],
    labelNames: readonly L[],
  ) {
    return new Histogram<L>({ name, help, buckets, labelNames, registers: [this.registry] });
  }

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
