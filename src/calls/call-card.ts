import { CallCard, cardKey, CallRecord, PortalUser, USER_KEY_PREFIX } from './call';

export { cardKey };

/**
 * The call card while the phone rings (the API contract's live call card): who should see it now, who was
 * shown it, and so which `show` and `hide` are due. Pure. People are named by card keys: an internal number
 * as the PBX wrote it, or `user:<id>` for a portal user id. One employee may come under both (a ring group
 * shown by extension, answered by `userId`): the delivery batch notes on the call which portal user each
 * internal number stands for (`card.users`, from the employee directory) and every rule here compares
 * people, not spellings, so `103` and `user:3` are one viewer when the directory puts 103 on user 3.
 *
 * - Ringing: everyone the call rings (`extensions`, or its one employee) and whoever the register popped
 *   the card for.
 * - Answered: whoever picked up last, and the phones that began ringing since (a blind transfer's target);
 *   a later answer by someone else (a transfer) moves the card to them alone.
 * - Ended: nobody. `finish` closes the card of the user it names; everyone else shown it gets a `hide`.
 * - A call the bridge first heard of after it ended is registered with SHOW=0 and shows nobody.
 */

const USER_PREFIX = USER_KEY_PREFIX;

/** The card key of the employee a command names. */
export function cardKeyOf(user: PortalUser | undefined): string | undefined {
  return cardKey(user?.USER_PHONE_INNER, user?.USER_ID);
}

/** The portal user a card key stands for: an id directly, an internal number through `employeeFor`. */
export function userIdOfCardKey(
  key: string,
  employeeFor: (extension: string) => number | null | undefined,
): number | undefined {
  if (key.startsWith(USER_PREFIX)) {
    const id = Number(key.slice(USER_PREFIX.length));
    return Number.isInteger(id) && id > 0 ? id : undefined;
  }
  return employeeFor(key) ?? undefined;
}

/** The employee a card key names, as an event names them (internal number or portal user id). */
export function whoOfCardKey(key: string): { extension?: string; userId?: number } {
  if (key.startsWith(USER_PREFIX)) {
    return { extension: undefined, userId: Number(key.slice(USER_PREFIX.length)) };
  }
  return { extension: key, userId: undefined };
}

/** The person a card key names: `user:<id>` once its portal user is known, else the key itself. */
export function personOf(call: CallRecord, key: string): string {
  const id = call.card.users?.[key];
  return id === undefined ? key : `${USER_PREFIX}${id}`;
}

/** Whether two card keys name the same person. */
export function samePerson(call: CallRecord, a: string, b: string): boolean {
  return a === b || personOf(call, a) === personOf(call, b);
}

/** The keys of `list` naming none of the people `keys` name. */
export function withoutPeople(
  call: CallRecord,
  list: string[] | undefined,
  keys: readonly string[],
): string[] {
  const people = new Set(keys.map((key) => personOf(call, key)));
  return (list ?? []).filter((key) => !people.has(personOf(call, key)));
}

/**
 * Notes which portal user each internal number among the call's card keys stands for, as `userOf` knows it
 * (the employee directory); a key noted once keeps its user for the rest of the call. The same call when
 * nothing new is known.
 */
export function withCardUsers(
  call: CallRecord,
  userOf: (extension: string) => number | undefined,
): CallRecord {
  const keys = [
    ...(call.party.ringing ?? []),
    ...(call.party.ringingSinceAnswer ?? []),
    ...(call.card.shown ?? []),
    ...(call.card.maybe ?? []),
    call.party.answeredBy,
    call.card.registerKey,
  ];
  let found: Record<string, number> | undefined;
  for (const key of keys) {
    if (!key || key.startsWith(USER_PREFIX) || call.card.users?.[key] !== undefined || found?.[key]) continue;
    const id = userOf(key);
    if (id !== undefined) found = { ...found, [key]: id };
  }
  return found ? { ...call, card: { ...call.card, users: { ...call.card.users, ...found } } } : call;
}

/** Whether the call still rings or talks: its card steps and its register go ahead of history. */
export function isLive(call: CallRecord): boolean {
  return !call.party.ended && !call.delivery.failed;
}

/** Whether the register pops the card (SHOW=1): the bridge heard of the call while it rang, and it still does. */
export function popsCard(call: CallRecord): boolean {
  return call.party.heardRinging && isLive(call);
}

/** Who should see the card now, one key per person. */
export function cardViewers(call: CallRecord): string[] {
  if (!isLive(call)) return [];
  const keys = call.party.answeredBy
    ? [call.party.answeredBy, ...(call.party.ringingSinceAnswer ?? [])]
    : [...(call.party.ringing ?? []), call.card.registerKey];
  const viewers = new Map<string, string>();
  for (const key of keys) {
    if (key && !viewers.has(personOf(call, key))) viewers.set(personOf(call, key), key);
  }
  return [...viewers.values()];
}

/** Whom `finish` names: whoever answered last, else the register's employee (card key). */
export function finishKey(call: CallRecord): string | undefined {
  return call.party.answeredBy ?? call.card.registerKey;
}

/** Card keys the card may be open for: confirmed, or sent without an answer yet. */
export function cardOpenFor(call: CallRecord): string[] {
  return [...new Set([...(call.card.shown ?? []), ...(call.card.maybe ?? [])])];
}

/**
 * The card moves still to make: `show` to viewers not confirmed yet, `hide` for everyone it may be open for
 * who should not see it. Until the call is finished on the portal, its finish closes the card of the user
 * it names, so that one is not hidden separately. Nothing moves before the call has a portal CALL_ID.
 */
export function cardMoves(call: CallRecord): { show: string[]; hide: string[] } {
  if (!call.portal.callId) return { show: [], hide: [] };
  const viewers = cardViewers(call);
  const show = call.party.heardRinging ? withoutPeople(call, viewers, call.card.shown ?? []) : [];
  const closedByFinish =
    call.party.ended && !call.portal.finished && !call.delivery.failed ? finishKey(call) : undefined;
  const stay = closedByFinish === undefined ? viewers : [...viewers, closedByFinish];
  const hide = withoutPeople(call, cardOpenFor(call), stay);
  return { show, hide };
}

/** The keys a ring group's register leaves to a `show` in the same request (everyone but its own employee). */
export function ringGroupRest(call: CallRecord, registerKey: string | undefined): string[] {
  if (!popsCard(call) || call.party.answeredBy) return [];
  const rest = withoutPeople(call, call.party.ringing, registerKey === undefined ? [] : [registerKey]);
  return rest.filter((key, index) => rest.findIndex((other) => samePerson(call, key, other)) === index);
}

/** The card as the portal confirmed showing it to `keys` (no longer only maybe open for them). */
export function cardShownTo(call: CallRecord, keys: string[]): CallCard {
  return { ...call.card, shown: withKeys(call.card.shown, keys), maybe: withoutKeys(call.card.maybe, keys) };
}

/** The card closed for the people `keys` name, whichever key they were shown it under. */
export function cardClosedFor(call: CallRecord, keys: string[]): CallCard {
  return {
    ...call.card,
    shown: withoutPeople(call, call.card.shown, keys),
    maybe: withoutPeople(call, call.card.maybe, keys),
  };
}

/** Adds keys to a list, once each. */
export function withKeys(list: string[] | undefined, keys: readonly string[]): string[] {
  return [...new Set([...(list ?? []), ...keys])];
}

/** Removes keys from a list. */
export function withoutKeys(list: string[] | undefined, keys: readonly string[]): string[] {
  return (list ?? []).filter((key) => !keys.includes(key));
}
