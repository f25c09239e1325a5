import { CallRecord, PortalStep } from '../calls/call';
import { BatchCommand } from '../portal/portal-client';
import {
  attachRecordParams,
  finishParams,
  hideParams,
  PORTAL_METHOD,
  registerParams,
} from './portal-commands';

/** One portal command planned for one call. */
export interface PlannedCommand {
  label: string;
  step: PortalStep;
}

/**
 * The calls and commands of one `batch` request. A call contributes the commands of its next step only:
 * register and finish of one call never share a request, because a lost answer to a request that both
 * registered and finished a call could not be repeated safely (a register after finish makes a second
 * call). Finish and attachRecord of one call may share it: both are safe to repeat. When only the finish
 * fits, it goes alone; attachRecord is the call's own next step once the finish is through.
 *
 * A call suspected of getting a request refused (`batchLimit`) caps the commands of the request it joins.
 */
export class BatchPlan {
  readonly entries: { callId: string; commands: PlannedCommand[] }[] = [];
  private size = 0;
  private limit: number;

  constructor(maxCommands: number) {
    this.limit = maxCommands;
  }

  get commandCount(): number {
    return this.size;
  }

  get callIds(): string[] {
    return this.entries.map((entry) => entry.callId);
  }

  /** Adds as many of the call's due commands as fit, in order; returns whether any did. */
  add(call: CallRecord): boolean {
    const limit = Math.min(this.limit, call.batchLimit ?? Infinity);
    const steps = dueSteps(call).slice(0, Math.max(0, limit - this.size));
    if (steps.length === 0) return false;
    const index = this.entries.length;
    this.entries.push({
      callId: call.callId,
      commands: steps.map((step) => ({ step, label: `${step}_${index}` })),
    });
    this.size += steps.length;
    this.limit = limit;
    return true;
  }

  /** The same plan without the calls not in `callIds` (dropped while being marked as sent). */
  only(callIds: ReadonlySet<string>): BatchPlan {
    const kept = new BatchPlan(this.limit);
    for (const entry of this.entries) {
      if (!callIds.has(entry.callId)) continue;
      kept.entries.push(entry);
      kept.size += entry.commands.length;
    }
    return kept;
  }

  /** The wire commands, built from the calls as stored right before sending. */
  commands(calls: ReadonlyMap<string, CallRecord>): BatchCommand[] {
    return this.entries.flatMap((entry) => {
      const call = calls.get(entry.callId)!;
      return entry.commands.map(({ label, step }) => ({
        label,
        method: PORTAL_METHOD[step],
        params: paramsOf(call, step),
      }));
    });
  }
}

/** The commands the call's next step takes, in the order they are sent. */
export function dueSteps(call: CallRecord): PortalStep[] {
  switch (call.nextStep) {
    case 'register':
      return ['register'];
    case 'finish':
      return call.ended?.recordingUrl ? ['finish', 'attachRecord'] : ['finish'];
    case 'attachRecord':
      return ['attachRecord'];
    case 'hide':
      return ['hide'];
    default:
      return [];
  }
}

function paramsOf(call: CallRecord, step: PortalStep) {
  if (step === 'register') return registerParams(call, call.portalUser!);
  if (step === 'finish') return finishParams(call);
  if (step === 'hide') return hideParams(call);
  return attachRecordParams(call);
}
