import { Logger } from '@nestjs/common';
import { OAuthCredentials } from '../auth/oauth-credentials';
import { EventSettings } from '../config/settings';
import { BridgeMetrics } from '../metrics/bridge-metrics';
import { START_UP_LATEST_MS, START_UP_QUIET_MS } from '../portal/budget-idle';
import { PortalClient } from '../portal/portal-client';
import { PortalCredentials } from '../portal/portal-credentials';
import { PortalEventStore } from '../store/portal-event-store';
import { PortalError } from '../portal/portal-error';
import { dedupeKeyOf, HANDLED_EVENTS, kindOf, PortalEventBody, UNINSTALL_EVENT } from './portal-event';
import { PortalEventProcessor } from './portal-event-processor';
import { PortalEventsStatus } from './portal-events-status';

/** How often offline mode asks the portal's queue (one request per look when it is empty). */
export const OFFLINE_POLL_MS = 2000;
/** Binding retries after a failure wait this long. */
const BIND_RETRY_MS = 30_000;
/** While another replica is the owner, this one looks this often whether it became it (a takeover). */
const OWNER_LOOK_MS = 1000;
/** The portal's answer to binding a handler bound already: the binding is there, which is what was asked. */
const ALREADY_BOUND = 'ERROR_EVENT_HANDLER_ALREADY_EXISTS';

interface BoundHandler {
  event?: string;
  handler?: string;
  offline?: number | string;
}

interface OfflineEvent {
  ID: number | string;
  EVENT_NAME: string;
  EVENT_DATA?: Record<string, unknown>;
  TIMESTAMP_X?: string;
}

/** What a portal's event binder is built from. */
export interface PortalEventBinderDeps {
  settings: EventSettings;
  credentials: PortalCredentials;
  client: PortalClient;
  store: PortalEventStore;
  processor: PortalEventProcessor;
  metrics: BridgeMetrics;
  /** What health and the page show of the portal's events; kept by the registry across runtimes. */
  status: PortalEventsStatus;
  portalId: string;
}

/**
 * OAuth mode (docs/API.md): binds every handled event and ONAPPUNINSTALL (always online: an uninstalled
 * application can no longer read its offline queue) after every grant stored on this replica (install,
 * re-install, app update: the portal drops an application's handlers then) and once on the replica that
 * delivers the portal (`owns`), registers the bridge's line, and with `B24_EVENTS=offline` polls `event.offline.get` (clear=0, this replica's process_id), stores each
 * event durably, then clears exactly those. Requests go through the portal client and its budget
 * (background priority). Webhook mode does nothing here: the operator sets up the outbound webhook.
 */
export class PortalEventBinder {
  private readonly logger = new Logger(PortalEventBinder.name);
  private readonly offline: boolean;
  private readonly processId: string;
  private stopped = false;
  private binding?: Promise<void>;
  private rebind = false;
  private retryTimer?: NodeJS.Timeout;
  private pollTimer?: NodeJS.Timeout;
  private polling?: Promise<void>;
  private ownerTimer?: NodeJS.Timeout;
  /** A binding succeeded in this process since start. */
  private bound = false;
  /**
   * Whether this replica is the one that binds at start (the API contract (docs/API.md): one replica does): single mode the
   * holder of the portal's delivery lease; unset, this one (many portals: the runtime builds a binder only
   * on the replica delivering the portal). A grant stored here binds here either way.
   */
  owns?: () => boolean;

  private readonly settings: EventSettings;
  private readonly credentials: PortalCredentials;
  private readonly client: PortalClient;
  private readonly store: PortalEventStore;
  private readonly processor: PortalEventProcessor;
  private readonly metrics: BridgeMetrics;
  readonly status: PortalEventsStatus;
  private readonly portalId: string;

  constructor(deps: PortalEventBinderDeps) {
    const { settings, portalId } = deps;
    ({
      settings: this.settings,
      credentials: this.credentials,
      client: this.client,
      store: this.store,
      processor: this.processor,
      metrics: this.metrics,
      status: this.status,
      portalId: this.portalId,
    } = deps);
    this.offline = settings.offline;
    // One per portal, shared by every replica and stable across restarts and new pods: events marked and not
    // cleared (a crash) come back to whichever replica asks next; replicas reading the same events store them
    // once (the dedupe key) and each clears them.
    this.processId = `bridge-${portalId}`.replace(/[^\w.-]/g, '_').slice(0, 60);
  }

  private stopListening?: () => void;
  private readonly closing = new AbortController();

  private get oauth(): OAuthCredentials | undefined {
    return this.credentials instanceof OAuthCredentials ? this.credentials : undefined;
  }

  /** OAuth mode: binds once this replica owns the portal, after every grant, and polls offline events. */
  start(): void {
    const oauth = this.oauth;
    if (!oauth) return;
    this.status.mode = this.offline ? 'offline' : 'online';
    this.stopListening = oauth.onGrant(() => this.bindSoon());
    // The handlers bound before stay bound on the portal: the start's check waits for room the calls do
    // not need (a grant binds at once).
    this.client.budget.whenIdle(START_UP_QUIET_MS, START_UP_LATEST_MS, this.closing.signal).then(
      () => this.bindWhenOwner(),
      () => undefined,
    );
    if (this.offline) this.schedulePoll(0);
  }

  /**
   * This process bound the portal's events already (an earlier runtime of the portal, dropped while idle):
   * the start does not bind again; a grant still does.
   */
  alreadyBound(): void {
    this.bound = true;
  }

  /** A binding (or an offline poll) is under way: the runtime is not dropped in the middle of it. */
  get busy(): boolean {
    return this.binding !== undefined || this.polling !== undefined;
  }

  /** Binds once this replica owns the portal and holds tokens; looks again until it has bound once. */
  private bindWhenOwner(): void {
    if (this.stopped || this.bound) return;
    const oauth = this.oauth;
    const owner = this.owns?.() ?? true;
    if (owner && oauth?.authorisation().state === 'authorised') return this.bindSoon();
    this.ownerTimer = setTimeout(() => this.bindWhenOwner(), OWNER_LOOK_MS);
    this.ownerTimer.unref();
  }

  async close(): Promise<void> {
    this.stopped = true;
    this.closing.abort();
    this.stopListening?.();
    clearTimeout(this.retryTimer);
    clearTimeout(this.pollTimer);
    clearTimeout(this.ownerTimer);
    await Promise.allSettled([this.binding, this.polling]);
  }

  /** Binds now, or once more after the binding under way (a grant arrived meanwhile). */
  bindSoon(): void {
    if (this.stopped) return;
    if (this.binding) {
      this.rebind = true;
      return;
    }
    this.binding = this.bindAll()
      .catch((error: unknown) => {
        this.status.lastError = `binding the portal's events failed: ${(error as Error).message}`;
        this.logger.warn(`${this.status.lastError}; trying again in ${BIND_RETRY_MS / 1000} s`);
        clearTimeout(this.retryTimer);
        this.retryTimer = setTimeout(() => this.bindSoon(), BIND_RETRY_MS);
      })
      .finally(() => {
        this.binding = undefined;
        if (this.rebind) {
          this.rebind = false;
          this.bindSoon();
        }
      });
  }

  /**
   * Idempotent: `event.get` first, binds only what is missing, and a handler another replica bound
   * meanwhile (ERROR_EVENT_HANDLER_ALREADY_EXISTS) counts as bound; `telephony.externalLine.get` before
   * `.add`.
   */
  async bindAll(): Promise<void> {
    const online = this.offline ? this.publicHandlerUrl() : this.handlerUrl();
    const wanted = HANDLED_EVENTS.map((event) => ({ event, offline: this.offline }));
    if (online) wanted.push({ event: UNINSTALL_EVENT, offline: false });
    else this.logger.warn('PUBLIC_URL is not set: the portal cannot tell the bridge of an uninstall');
    const bound = await this.client.call<BoundHandler[]>('event.get', {}, { priority: 'background' });
    const present = new Set(
      (Array.isArray(bound) ? bound : []).map((item) => {
        const offline = Number(item.offline) === 1;
        const handler = offline ? '' : sameUrl(String(item.handler ?? ''));
        return `${String(item.event).toUpperCase()} ${offline ? 'offline' : handler}`;
      }),
    );
    for (const { event, offline } of wanted) {
      if (present.has(`${event} ${offline ? 'offline' : sameUrl(online ?? '')}`)) continue;
      const params: Record<string, unknown> = { event, event_type: offline ? 'offline' : 'online' };
      if (!offline) params.handler = online;
      try {
        await this.client.call('event.bind', params, { priority: 'background' });
      } catch (error) {
        if (!(error instanceof PortalError && error.code === ALREADY_BOUND)) throw error;
      }
    }
    const number = this.settings.lineNumber;
    const lines = await this.client.call<{ NUMBER?: string }[]>(
      'telephony.externalLine.get',
      {},
      { priority: 'background' },
    );
    if (!(Array.isArray(lines) ? lines : []).some((line) => line.NUMBER === number)) {
      await this.client.call(
        'telephony.externalLine.add',
        { NUMBER: number, NAME: `PBX bridge (${number})` },
        { priority: 'background' },
      );
    }
    this.bound = true;
    Object.assign(this.status, {
      boundEvents: wanted.map(({ event }) => event),
      boundAt: Date.now(),
      line: number,
      lastError: null,
    });
    this.logger.log(
      `bound ${wanted.length} portal events (${this.offline ? 'offline' : 'online'}); line ${number} registered`,
    );
  }

  private handlerUrl(): string {
    const url = this.publicHandlerUrl();
    if (!url) {
      throw new Error('PUBLIC_URL is not set: the portal cannot post events (or set B24_EVENTS=offline)');
    }
    return url;
  }

  private publicHandlerUrl(): string | undefined {
    const base = this.settings.publicUrl;
    return base ? `${base.replace(/\/+$/, '')}/v1/portal/events` : undefined;
  }

  private schedulePoll(delayMs: number): void {
    if (this.stopped) return;
    this.pollTimer = setTimeout(() => {
      this.polling = this.pollOnce()
        .then((fetched) => this.schedulePoll(fetched === 50 ? 0 : OFFLINE_POLL_MS))
        .catch((error: unknown) => {
          this.logger.warn(`event.offline.get failed: ${(error as Error).message}`);
          this.schedulePoll(OFFLINE_POLL_MS * 5);
        });
    }, delayMs);
  }

  /**
   * One look at the offline queue: the events marked with this process_id (new ones, and any fetched but
   * not cleared before a crash), each stored (a repeat is deduplicated), then cleared by id.
   */
  async pollOnce(): Promise<number> {
    const oauth = this.oauth;
    if (!oauth || oauth.authorisation().state !== 'authorised') return 0;
    const answer = await this.client.call<{ process_id?: string; events?: OfflineEvent[] }>(
      'event.offline.get',
      { clear: 0, process_id: this.processId, limit: 50 },
      { priority: 'background' },
    );
    const events = Array.isArray(answer?.events) ? answer.events : [];
    if (events.length === 0) return 0;
    for (const item of events) {
      const event = String(item.EVENT_NAME ?? '').toUpperCase();
      if (!kindOf(event)) {
        this.metrics.portalEvents.inc({ event: 'other', outcome: 'unknown' });
        continue;
      }
      const at = item.TIMESTAMP_X ? Date.parse(item.TIMESTAMP_X) : NaN;
      const body: PortalEventBody = {
        event,
        data: item.EVENT_DATA ?? {},
        ts: Number.isFinite(at) ? String(Math.floor(at / 1000)) : `offline-${item.ID}`,
      };
      const { duplicate } = await this.store.add({
        portalId: this.portalId,
        dedupeKey: dedupeKeyOf(body),
        event,
        payload: JSON.stringify({ data: body.data, ts: body.ts }),
        receivedAt: Date.now(),
      });
      this.metrics.portalEvents.inc({ event, outcome: duplicate ? 'duplicate' : 'stored' });
    }
    this.processor.wake();
    await this.client.call(
      'event.offline.clear',
      { process_id: answer.process_id ?? this.processId, id: events.map((item) => item.ID) },
      { priority: 'background' },
    );
    this.status.offlineFetched += events.length;
    return events.length;
  }
}

/** One handler address however it is spelt (the portal may give it back normalised). */
function sameUrl(url: string): string {
  try {
    return new URL(url).href.replace(/\/+$/, '');
  } catch {
    return url;
  }
}
