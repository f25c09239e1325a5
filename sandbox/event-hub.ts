import * as qs from 'qs';
import { postForm } from './app-install';
import type { PortalState } from './portal-state';

/** A handler bound with event.bind by an application. */
export interface EventBinding {
  clientId: string;
  event: string;
  handler: string;
  authType: number;
  eventType: 'online' | 'offline';
}

/** An offline event waiting for event.offline.get; `processId` once a reader marked it (clear=0). */
export interface OfflineEvent {
  ID: number;
  MESSAGE_ID: string;
  EVENT_NAME: string;
  EVENT_DATA: Record<string, unknown>;
  EVENT_ADDITIONAL: Record<string, unknown>;
  TIMESTAMP_X: string;
  clientId: string;
  processId: string | null;
}

/** An application's line (telephony.externalLine.*). */
export interface ExternalLine {
  clientId: string;
  NUMBER: string;
  NAME: string;
  CRM_AUTO_CREATE: 'Y' | 'N';
}

/** One post of an event to a handler, for inspection. */
export interface EventPost {
  url: string;
  event: string;
  status: number | null;
  error: string | null;
  /** Date.now() when the post was sent, and when its answer (or error) came. */
  sentAt: number;
  answeredAt: number | null;
}

/** The outbound webhook (webhook mode): posts the chosen events with its authentication code. */
export interface OutboundWebhook {
  url: string;
  applicationToken: string;
  events: string[];
}

/**
 * The portal's events: handlers bound by applications (online: a form-encoded post with the
 * application's token; offline: a queue read with event.offline.get), plus one outbound webhook a test
 * configures. Posts are not retried, like the portal's.
 */
export class EventHub {
  readonly bindings: EventBinding[] = [];
  readonly offline: OfflineEvent[] = [];
  readonly lines: ExternalLine[] = [];
  readonly posts: EventPost[] = [];
  outbound: OutboundWebhook | null = null;
  private nextOfflineId = 1;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly state: PortalState) {}

  /** Fires an event: posts it to the bound online handlers and the outbound webhook, queues it offline. */
  fire(name: string, data: Record<string, unknown>, userId = 1): void {
    const event = name.toUpperCase();
    const now = this.state.now();
    const ts = String(Math.floor(now / 1000));
    for (const binding of this.bindings.filter((candidate) => candidate.event === event)) {
      const app = this.state.credentials.app(binding.clientId);
      if (!app) continue;
      if (binding.eventType === 'offline') {
        const id = this.nextOfflineId++;
        this.offline.push({
          ID: id,
          MESSAGE_ID: `msg${id.toString(16).padStart(8, '0')}`,
          EVENT_NAME: event,
          EVENT_DATA: data,
          EVENT_ADDITIONAL: { user_id: userId },
          TIMESTAMP_X: new Date(now).toISOString(),
          clientId: binding.clientId,
          processId: null,
        });
        continue;
      }
      this.post(binding.handler, event, data, ts, app.applicationToken);
    }
    if (this.outbound?.events.includes(event)) {
      this.post(this.outbound.url, event, data, ts, this.outbound.applicationToken);
    }
  }

  /** An application was (re)installed or removed: its handlers vanish, as on the portal. */
  forgetApp(clientId: string): void {
    for (let index = this.bindings.length - 1; index >= 0; index -= 1) {
      if (this.bindings[index].clientId === clientId) this.bindings.splice(index, 1);
    }
  }

  /** Waits for the posts under way (tests, shutdown). */
  async settled(): Promise<void> {
    await Promise.all([...this.inFlight]);
  }

  clear(): void {
    this.bindings.length = 0;
    this.offline.length = 0;
    this.lines.length = 0;
    this.posts.length = 0;
    this.outbound = null;
  }

  private post(url: string, event: string, data: Record<string, unknown>, ts: string, token: string): void {
    const { domain, memberId } = this.state.identity;
    const form = qs.stringify({
      event,
      data,
      ts,
      auth: { domain, member_id: memberId, application_token: token },
    });
    const record: EventPost = { url, event, status: null, error: null, sentAt: Date.now(), answeredAt: null };
    this.posts.push(record);
    const sent = postForm(url, form)
      .then(({ status }) => {
        record.status = status;
      })
      .catch((error: unknown) => {
        record.error = (error as Error).message;
      })
      .finally(() => {
        record.answeredAt = Date.now();
        this.inFlight.delete(sent);
      });
    this.inFlight.add(sent);
  }
}
