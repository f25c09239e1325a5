import {
  CallEvent,
  CallPortal,
  CallRecord,
  ClickToCall,
  hasStartDetails,
  withDelivery,
  withParty,
  withPortal,
} from './call';

/**
 * Click-to-call (docs/API.md): the portal registered the call when the employee clicked; the bridge never
 * registers it again, it finishes that CALL_ID with what the PBX reports. The PBX's report is tied to the
 * portal's call by the `crmCallId` the PBX carries (`matchedBy: 'crmCallId'`), or else by the first
 * outbound call from the clicking employee's extension to the clicked number that starts within
 * DIAL_MATCH_SEC of the click (`matchedBy: 'click'`). Pure rules; the store lends the claims (`ClickClaims`)
 * inside the intake transaction that applies the event, so a click or a CALL_ID is claimed by one call only.
 */

/** A click as the bridge keeps it for matching (the `clicks` table). */
export interface StoredClick {
  portalCallId: string;
  /** The employee who clicked; none for a visitor's callback (matched by number only). */
  userId?: number;
  /** E.164 when it parsed; unset on a row made by a `crmCallId` before the click itself arrived. */
  phoneNumber?: string;
  /** ms epoch; unset as `phoneNumber`. */
  clickedAt?: number;
  /** The bridge call that took this portal call (by click or by crmCallId). */
  matchedCallId?: string;
}

/** The intake transaction's view of the stored clicks; every change is written with the events. */
export interface ClickClaims {
  /**
   * Claims the portal call for `callId` (recording a row for it when the click is not known yet). Returns
   * the bridge call that holds it (`callId` itself, or another call that claimed it first) and the clicking
   * employee when the click is known.
   */
  claim(portalCallId: string, callId: string): { holder: string; userId?: number };
  /** Clicks to `phoneNumber` (E.164) no call has taken yet, oldest first. */
  openClicks(phoneNumber: string): StoredClick[];
}

export interface ClickMatchSettings {
  /** DIAL_MATCH_SEC in ms: how long after a click the PBX's outbound call may start. */
  windowMs: number;
  /** The portal user with this internal number (the employee directory); undefined when unknown. */
  userOf(extension: string): number | undefined;
}

/** PBX and portal clocks differ a little: a call that starts this much before the click still matches. */
export const CLICK_CLOCK_SKEW_MS = 5_000;

/** Longest CALL_ID accepted from a PBX (`externalCall.<hex>.<digits>` is well under it). */
export const CRM_CALL_ID_MAX = 64;
/** What a portal CALL_ID looks like: printable, no spaces (`externalCall.<hex>.<digits>`). */
export const CRM_CALL_ID_PATTERN = /^[A-Za-z0-9._:-]+$/;

/** A PBX field that should hold a CALL_ID: trimmed, undefined when empty or not one (a dialplan `${}` left empty). */
export function crmCallIdOf(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return trimmed.length > 0 && trimmed.length <= CRM_CALL_ID_MAX && CRM_CALL_ID_PATTERN.test(trimmed)
    ? trimmed
    : undefined;
}

/** Whether this click is the one the call answers: same employee, same number, started in the window. */
export function clickMatches(click: StoredClick, call: CallRecord, settings: ClickMatchSettings): boolean {
  if (click.matchedCallId !== undefined || click.clickedAt === undefined) return false;
  if (
    call.party.direction !== 'outbound' ||
    !call.party.phoneNumber ||
    click.phoneNumber !== call.party.phoneNumber
  ) {
    return false;
  }
  const started = Date.parse(call.party.startedAt ?? '');
  if (!Number.isFinite(started)) return false;
  if (started < click.clickedAt - CLICK_CLOCK_SKEW_MS || started > click.clickedAt + settings.windowMs) {
    return false;
  }
  if (click.userId === undefined) return true;
  if (call.party.userId !== undefined) return call.party.userId === click.userId;
  return call.party.extension !== undefined && settings.userOf(call.party.extension) === click.userId;
}

/** The oldest click the call answers, if any. */
export function pickClick(
  clicks: readonly StoredClick[],
  call: CallRecord,
  settings: ClickMatchSettings,
): StoredClick | undefined {
  return [...clicks]
    .filter((click) => clickMatches(click, call, settings))
    .sort((a, b) => a.clickedAt! - b.clickedAt!)[0];
}

/**
 * After an event was applied: ties the call to the portal's call, by the event's `crmCallId`, else by a
 * click. A call that has a CALL_ID (or whose register was sent) keeps it; a conflicting `crmCallId` is
 * noted in `lastError`. The clicking employee's card was popped by the portal: the call pops none.
 */
export function linkPortalCall(
  call: CallRecord,
  event: CallEvent,
  claims: ClickClaims | undefined,
  settings: ClickMatchSettings,
): CallRecord {
  if (event.crmCallId) return withClickUser(linkByCrmCallId(call, event, event.crmCallId, claims));
  if (call.portal.clickToCall) return withClickUser(call);
  if (!claims || call.portal.callId || call.portal.clickToCall || call.delivery.stepsSent.register) {
    return call;
  }
  if (!hasStartDetails(call) || call.party.direction !== 'outbound') return call;
  const click = pickClick(claims.openClicks(call.party.phoneNumber!), call, settings);
  if (!click) return call;
  const { holder } = claims.claim(click.portalCallId, call.callId);
  const user = click.userId ?? call.party.userId;
  return linked(call, { portalCallId: click.portalCallId, matchedBy: 'click' }, holder, user);
}

/** A linked call learns its employee later (the first event named none): `finish` names them. */
function withClickUser(call: CallRecord): CallRecord {
  if (!call.portal.clickToCall || call.portal.user) return call;
  const portalUser = portalUserOf(call.party.userId, call.party.extension);
  return portalUser ? withPortal(call, { user: portalUser }) : call;
}

function portalUserOf(userId: number | undefined, extension: string | undefined): CallPortal['user'] {
  if (userId !== undefined) return { USER_ID: userId };
  return extension ? { USER_PHONE_INNER: extension } : undefined;
}

function linkByCrmCallId(
  call: CallRecord,
  event: CallEvent,
  crmCallId: string,
  claims: ClickClaims | undefined,
): CallRecord {
  if (call.portal.callId === crmCallId) return call;
  if (call.portal.callId || call.delivery.stepsSent.register) {
    const had = call.portal.callId ?? 'a register already sent';
    return withDelivery(call, {
      lastError: `crmCallId ${crmCallId} of ${event.event} ignored: the call has ${had}`,
    });
  }
  const claimed = claims ? claims.claim(crmCallId, call.callId) : { holder: call.callId };
  // The PBX's own employee first (who really called), else the one who clicked.
  const user = call.party.userId ?? (call.party.extension ? undefined : claimed.userId);
  return linked(call, { portalCallId: crmCallId, matchedBy: 'crmCallId' }, claimed.holder, user);
}

function linked(call: CallRecord, link: ClickToCall, holder: string, userId: number | undefined): CallRecord {
  const user = call.portal.user ?? portalUserOf(userId, call.party.extension);
  const next = withParty(withPortal(call, { callId: link.portalCallId, user }), { heardRinging: false });
  if (holder === call.callId) return withPortal(next, { clickToCall: link });
  // Another bridge call (the dialer's timeout report, or the PBX's own) holds this CALL_ID: it finishes it.
  const finished = withPortal(next, { clickToCall: { ...link, finishedBy: holder }, finished: true });
  return withDelivery(finished, {
    lastError: `portal call ${link.portalCallId} is finished by call ${holder}: not finished again`,
  });
}
