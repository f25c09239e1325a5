import { createHash } from 'node:crypto';
import { PortalClick } from '../clicks/click';
import { toE164 } from '../common/phone-number';
import { CRM_ENTITY_ORDER, CrmEntityType } from '../crm/crm-match';

/** What the bridge does with a portal event (docs/API.md); anything else is answered 200 and ignored. */
export type PortalEventKind = 'click' | 'callback' | 'crm';

/** Every event the bridge handles, the ones OAuth mode binds at install. */
export const CLICK_EVENTS = { ONEXTERNALCALLSTART: 'click', ONEXTERNALCALLBACKSTART: 'callback' } as const;
export const CRM_CHANGE_EVENTS = CRM_ENTITY_ORDER.flatMap((entity) =>
  ['ADD', 'UPDATE', 'DELETE'].map((change) => `ONCRM${entity}${change}`),
);
export const HANDLED_EVENTS = [...Object.keys(CLICK_EVENTS), ...CRM_CHANGE_EVENTS];
/**
 * The portal's post when the application is removed (docs/API.md): bound at every install, always online
 * (once uninstalled the application can no longer read an offline queue), and never stored as an event:
 * it pauses the portal at once.
 */
export const UNINSTALL_EVENT = 'ONAPPUNINSTALL';

/** The part of a post the bridge keeps: never its `auth[…]`. */
export interface PortalEventBody {
  event: string;
  data: Record<string, unknown>;
  ts?: string;
}

export function kindOf(event: string): PortalEventKind | undefined {
  if (event in CLICK_EVENTS) return CLICK_EVENTS[event as keyof typeof CLICK_EVENTS];
  if (CRM_CHANGE_EVENTS.includes(event)) return 'crm';
  return undefined;
}

/** A parsed form field as text (qs gives strings, arrays or objects). */
export function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  return undefined;
}

function objectOf(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/** `event`, `data` and `ts` of a parsed form body; undefined without an event name. */
export function bodyOf(form: unknown): PortalEventBody | undefined {
  const fields = objectOf(form);
  const event = textOf(fields.event)?.trim().toUpperCase();
  if (!event || event.length > 100) return undefined;
  return { event, data: objectOf(fields.data), ts: textOf(fields.ts) };
}

/** The application token a post carries, `auth[application_token]`. */
export function applicationTokenOf(form: unknown): string | undefined {
  return textOf(objectOf(objectOf(form).auth).application_token);
}

/** Sorted keys, so one post encoded twice gives one key. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/**
 * The same post again is one event: a click by its CALL_ID (the portal registers each click as a new
 * call), any other event by its name, data and `ts`.
 */
export function dedupeKeyOf(body: PortalEventBody): string {
  const callId = textOf(body.data.CALL_ID);
  const identity = kindOf(body.event) === 'crm' || !callId ? canonical(body) : `call:${callId}`;
  return createHash('sha256').update(`${body.event}\n${identity}`).digest('hex');
}

/** The ms epoch of the portal's `ts` (seconds), else undefined. */
export function timestampOf(ts: string | undefined): number | undefined {
  if (!ts || !/^\d{9,11}$/.test(ts)) return undefined;
  return Number(ts) * 1000;
}

/**
 * When the click happened, ms epoch. The portal's `ts` is in whole seconds: the click was within the second
 * after it, and no later than the bridge received the post. So the receipt time, kept within that second
 * (a post read later, or an offline event, counts from the end of its second; a portal clock ahead, from
 * `ts`). Taking `ts` alone put every click up to a second early: the dial deadline came up to a second
 * soon and bridge_click_to_originate_seconds read up to a second high.
 */
export function clickTime(ts: number | undefined, receivedAt: number): number {
  if (ts === undefined) return receivedAt;
  return Math.min(Math.max(receivedAt, ts), ts + 999);
}

function positiveInteger(value: unknown): number | undefined {
  const text = textOf(value);
  if (!text || !/^\d{1,12}$/.test(text)) return undefined;
  const number = Number(text);
  return number > 0 ? number : undefined;
}

/** A click or callback as the ClickBus carries it, or why it cannot be one. */
export function clickOf(
  portalId: string,
  body: PortalEventBody,
  receivedAt: number,
  defaultCountry?: string,
): PortalClick | { error: string } {
  const kind = CLICK_EVENTS[body.event as keyof typeof CLICK_EVENTS];
  if (!kind) return { error: `${body.event} is not a click` };
  const { data } = body;
  const portalCallId = textOf(data.CALL_ID)?.trim();
  const phone = textOf(data.PHONE_NUMBER)?.trim();
  if (!portalCallId) return { error: 'data[CALL_ID] is missing' };
  if (!phone) return { error: 'data[PHONE_NUMBER] is missing' };
  const userId = positiveInteger(data.USER_ID);
  if (kind === 'click' && userId === undefined) return { error: 'data[USER_ID] is missing' };
  const click: PortalClick = {
    portalId,
    kind,
    portalCallId,
    phoneNumber: toE164(phone, defaultCountry) ?? phone,
    clickedAt: clickTime(timestampOf(body.ts), receivedAt),
  };
  if (userId !== undefined) click.userId = userId;
  const entityType = textOf(data.CRM_ENTITY_TYPE)?.trim();
  if (entityType) click.crmEntityType = entityType;
  const entityId = positiveInteger(data.CRM_ENTITY_ID);
  if (entityId !== undefined) click.crmEntityId = entityId;
  const line = textOf(data.LINE_NUMBER)?.trim();
  if (line) click.lineNumber = line;
  return click;
}

/** The record a CRM change event names (`data[FIELDS][ID]`), or undefined. */
export function crmChangeOf(
  body: PortalEventBody,
): { entityType: CrmEntityType; entityId: number } | undefined {
  const match = /^ONCRM(CONTACT|COMPANY|LEAD)(ADD|UPDATE|DELETE)$/.exec(body.event);
  const entityId = positiveInteger(objectOf(body.data.FIELDS).ID);
  if (!match || entityId === undefined) return undefined;
  return { entityType: match[1] as CrmEntityType, entityId };
}
