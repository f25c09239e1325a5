import { CallRecord } from './call';
import { LineBook, ruleOf } from '../common/lines';

/** What a call's line rules read (`LifecycleSettings`' part for lines and missed-call tasks). */
export interface LineSettings {
  missedCallTaskDeadlineMs?: number;
  missedCallTaskWindowMs?: number;
  lines?: LineBook;
}

/** The call's line and what its rule (LINES) fixes for the call: register terms, and `ignored`. */
export function assignLine(call: CallRecord, line: string | undefined, settings: LineSettings): void {
  if (line === undefined) return;
  call.party.line = line;
  const rule = ruleOf(settings.lines, line);
  if (!rule) return;
  const terms = {
    ...(rule.crmCreate === false ? { crmCreate: false } : {}),
    ...(rule.crmSource !== undefined ? { crmSource: rule.crmSource } : {}),
    ...(rule.defaultUserId !== undefined ? { defaultUserId: rule.defaultUserId } : {}),
  };
  if (Object.keys(terms).length) call.portal = { ...call.portal, lineTerms: terms };
  if (rule.report === false) call.delivery.ignored = true;
}

/**
 * The missed-call task deadline of this call: none for an ignored call (nothing goes to the portal), the
 * line's own `missedCallTask` where its rule has one, else the portal's MISSED_CALL_TASK.
 */
export function missedTaskDeadlineOf(call: CallRecord, settings: LineSettings): number | undefined {
  if (call.delivery.ignored) return undefined;
  const own = ruleOf(settings.lines, call.party.line)?.missedCallTask;
  if (own === false) return undefined;
  if (own === true) return settings.missedCallTaskDeadlineMs ?? settings.missedCallTaskWindowMs;
  return settings.missedCallTaskDeadlineMs;
}
