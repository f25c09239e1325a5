import { CallCard, CallRecord, PortalStep, withCard } from '../calls/call';
import { cardMoves, ringGroupRest, userIdOfCardKey, withKeys } from '../calls/call-card';
import { dropCardKeys, markCardHidden, plan as replan } from '../calls/call-lifecycle';
import { dueSteps } from '../calls/step-planner';
import { CallMark, MarkContext } from './batch-mark';
import { BatchParty } from './batch-party';

/** A card move naming internal numbers waits this long for the employee directory's first copy. */

/** Whom a batch's card moves (show, hide) name, fixed as portal user ids before sending. */
export class BatchCard {
  constructor(private readonly party: BatchParty) {}

  /**
   * The card follows people, not spellings: with the employees of the card keys known, the moves the plan
   * was read with may change (an answer by userId within a ring group shown by extension).
   */
  withKnownUsers(mark: CallMark, context: MarkContext): CallMark {
    const known = this.party.withCardUsers(mark.call);
    if (known === mark.call) return mark;
    const call = replan(known, context.now);
    return { ...mark, call, stop: dueSteps(call)[0] !== context.planned[0] };
  }

  fixMoves(mark: CallMark, context: MarkContext): CallMark {
    const card = this.fixCardMoves(mark.call, context.planned, context.now);
    if (card.steps[0] !== context.planned[0]) {
      return { call: replan(card.call, context.now), steps: card.steps, stop: true };
    }
    return { call: card.call, steps: card.steps };
  }

  /**
   * Fixes whom a planned show and hide name, as portal user ids. Card keys no portal user is known for
   * leave the card (noted on the call); a show or hide left with nobody is dropped from the request, and a
   * call whose own next step that was is re-planned instead of sent.
   */
  private fixCardMoves(
    call: CallRecord,
    planned: PortalStep[],
    now: number,
  ): { call: CallRecord; steps: PortalStep[] } {
    let steps = [...planned];
    const unknown: string[] = [];
    let waiting = false;
    const resolve = (keys: string[]) => {
      const target = { keys: [] as string[], userIds: [] as number[] };
      for (const key of keys) {
        const known = call.card.users?.[key] ?? this.party.employeeFor(key);
        const id = userIdOfCardKey(key, () => known);
        if (id === undefined) {
          // The directory is not loaded yet (undefined): the move waits for it; known not to exist: dropped.
          if (known === undefined && this.party.routed && !key.startsWith('user:')) waiting = true;
          else unknown.push(key);
          continue;
        }
        target.keys.push(key);
        if (!target.userIds.includes(id)) target.userIds.push(id);
      }
      return target;
    };
    let sendingCard: CallCard['sending'] = {};
    if (steps.includes('show')) {
      const keys = call.portal.callId ? cardMoves(call).show : ringGroupRest(call, call.card.registerKey);
      const show = resolve(keys);
      if (show.userIds.length > 0) sendingCard = { ...sendingCard, show };
      else steps = steps.filter((step) => step !== 'show');
    }
    if (steps.includes('hide')) {
      const hide = resolve(cardMoves(call).hide);
      if (hide.userIds.length === 0 && call.card.toHide && call.card.registerKey === undefined) {
        const userId = this.party.cardUserOf(call);
        if (userId !== undefined) hide.userIds.push(userId);
      }
      if (hide.userIds.length > 0) sendingCard = { ...sendingCard, hide };
      else steps = steps.filter((step) => step !== 'hide');
    }
    const maybe = withKeys(call.card.maybe, sendingCard.show?.keys ?? []);
    let next = withCard(call, { sending: sendingCard, maybe });
    if (unknown.length > 0) next = dropCardKeys(next, unknown, now);
    if (planned[0] === 'hide' && steps[0] !== 'hide' && next.card.toHide) {
      // A parked call's card whose employee has no known user id: nothing can close it.
      next = markCardHidden(
        next,
        now,
        `hide: the card of internal number ${call.portal.user?.USER_PHONE_INNER} stays open (no user id known for it)`,
      );
    } else if (waiting && steps[0] !== planned[0]) {
      next = this.party.waitForEmployees(next, 'card', now);
    }
    if (waiting) this.party.needEmployees();
    return { call: next, steps };
  }
}
