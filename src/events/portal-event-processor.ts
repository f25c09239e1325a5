import { Logger } from '@nestjs/common';
import { ClickBus } from '../clicks/click';
import { LookupSettings } from '../config/settings';
import { CrmLookupService } from '../crm/crm-lookup.service';
import { backoffMs } from '../delivery/backoff';
import { BridgeMetrics } from '../metrics/bridge-metrics';
import { PortalEventStore, StoredPortalEvent } from '../store/portal-event-store';
import { clickOf, crmChangeOf, kindOf, PortalEventBody } from './portal-event';

/**
 * How long a claimed event is left to this processor before another may take it (a crash). Its handlers
 * only store (the click registry, the dialer's request), so 10 s is ample; and a click claimed by a process
 * killed right after the 200 is taken again well within DIAL_TIMEOUT_SEC (default 30 s) and still dialled.
 */
export const CLAIM_LEASE_MS = 10_000;
/** Events claimed at a time. */
const BATCH = 20;
/** How often the processor looks without being woken: other replicas' posts, retries falling due. */
export const POLL_MS = 500;
/** Retries of a failing handler wait at most this long. */
const MAX_BACKOFF_MS = 60_000;

/** What a portal's event processor is built from. */
export interface PortalEventProcessorDeps {
  store: PortalEventStore;
  bus: ClickBus;
  lookups: CrmLookupService;
  metrics: BridgeMetrics;
  lookupSettings: LookupSettings;
  portalId: string;
}

/**
 * Handles the stored portal events in the background (docs/API.md): clicks and callbacks go to the
 * ClickBus, CRM changes drop cached lookups. Woken by new posts, else it polls; claims are leased in the
 * store, so replicas never handle one event together and an event a dead process held is taken again.
 * A handler's rejection leaves the event pending with `lastError`, retried with backoff.
 */
export class PortalEventProcessor {
  private readonly logger = new Logger(PortalEventProcessor.name);
  private stopped = false;
  private running?: Promise<void>;
  private wakeUp?: () => void;
  private woken = false;
  /** How often it looks without being woken; with many portals, longer (each post wakes its own portal). */
  pollMs = POLL_MS;

  private readonly store: PortalEventStore;
  private readonly bus: ClickBus;
  private readonly lookups: CrmLookupService;
  private readonly metrics: BridgeMetrics;
  private readonly lookupSettings: LookupSettings;
  private readonly portalId: string;

  constructor(deps: PortalEventProcessorDeps) {
    ({
      store: this.store,
      bus: this.bus,
      lookups: this.lookups,
      metrics: this.metrics,
      lookupSettings: this.lookupSettings,
      portalId: this.portalId,
    } = deps);
  }

  /** The background loop starts. */
  start(): void {
    this.running = this.loop();
  }

  /** The loop ends after the batch it handles. */
  async close(): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.running;
  }

  /** A new event was stored: look now. */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      this.woken = false;
      let claimed = 0;
      try {
        claimed = await this.runOnce();
      } catch (error) {
        this.logger.warn(`portal events: cannot read the store (${(error as Error).message})`);
      }
      if (claimed === BATCH || this.woken || this.stopped) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.pollMs);
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeUp = undefined;
    }
  }

  /** Claims due events and handles each; returns how many were claimed. */
  async runOnce(): Promise<number> {
    const events = await this.store.claimDue(this.portalId, CLAIM_LEASE_MS, BATCH);
    for (const event of events) {
      if (this.stopped) break;
      await this.handle(event);
    }
    return events.length;
  }

  private async handle(stored: StoredPortalEvent): Promise<void> {
    const { event } = stored;
    let body: PortalEventBody;
    try {
      const payload = JSON.parse(stored.payload) as { data?: Record<string, unknown>; ts?: string };
      body = { event, data: payload.data ?? {}, ts: payload.ts };
    } catch {
      return this.settle(stored, 'ignored', 'malformed', 'the stored payload is not JSON');
    }
    const kind = kindOf(event);
    if (kind === 'crm') {
      const change = crmChangeOf(body);
      if (!change) return this.settle(stored, 'ignored', 'malformed', 'data[FIELDS][ID] is missing');
      const dropped = this.lookups.forgetRecord(change.entityType, change.entityId);
      // The other replicas cache lookups too: each drops its own (docs/API.md), here within a NOTIFY.
      await this.store.publish({ portalId: this.portalId, kind: 'crm-changed', ...change });
      return this.settle(
        stored,
        'processed',
        'cache_dropped',
        `dropped ${dropped} cached lookups here; every replica told`,
      );
    }
    if (kind === 'click' || kind === 'callback') {
      const click = clickOf(this.portalId, body, stored.receivedAt, this.lookupSettings.defaultCountry);
      if ('error' in click) return this.settle(stored, 'ignored', 'malformed', click.error);
      if (this.bus.subscribers.length === 0) {
        return this.settle(stored, 'ignored', 'no_subscriber', 'click-to-call is off (no DIAL_MODE)');
      }
      const acting = this.bus.acting;
      try {
        await this.bus.publish(click);
      } catch (error) {
        const message = (error instanceof Error ? error.message : String(error)).slice(0, 500);
        const delay = backoffMs(stored.attempts - 1, MAX_BACKOFF_MS);
        this.logger.warn(`portal event ${stored.id} (${event}): ${message}; retried in ${delay} ms`);
        this.metrics.portalEvents.inc({ event, outcome: 'retried' });
        await this.store.retry(stored.id, delay, message);
        return;
      }
      if (!acting) {
        // Only recorded for matching (the click registry): nothing dials it.
        return this.settle(stored, 'ignored', 'no_subscriber', 'click-to-call is off (no DIAL_MODE)');
      }
      return this.settle(stored, 'processed', 'published');
    }
    return this.settle(stored, 'ignored', 'unknown', 'the bridge does not handle this event');
  }

  private async settle(
    stored: StoredPortalEvent,
    state: 'processed' | 'ignored',
    outcome: string,
    note?: string,
  ): Promise<void> {
    await this.store.settle(stored.id, state, note);
    this.metrics.portalEvents.inc({ event: stored.event, outcome });
  }
}
