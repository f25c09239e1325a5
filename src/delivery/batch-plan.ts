import { CallRecord, PortalStep } from '../calls/call';
import { BatchCommand } from '../portal/portal-client';
import { attachRecordParams, finishParams, PORTAL_METHOD, registerParams } from './portal-commands';

/** One portal command planned for one call. */
export interface PlannedCommand {
  label: string;
  step: PortalStep;
}

/**
 * The calls and commands of one `batch` request. A call contributes the commands of its next step only:
 * register and finish of one call never share a request, because a lost answer to a request that both
 * registered and finished a call could not be repeated safely (a register after finish makes a second
 * call). Finish and attachRecord of one call may share it: both are safe to repeat.
 */
export class BatchPlan {
  readonly entries: { callId: string; commands: PlannedCommand[] }[] = [];
  private size = 0;

  constructor(private readonly maxCommands: number) {}

  get commandCount(): number {
    return this.size;
  }

  get callIds(): string[] {
    return this.entries.map((entry) => entry.callId);
  }

  /** Adds the call's due commands if they fit; returns whether they did. */
  add(call: CallRecord): boolean {
    const steps = stepsOf(call);
    if (steps.length === 0 || this.size + steps.length > this.maxCommands) return false;
    const index = this.entries.length;
    this.entries.push({
      callId: call.callId,
      commands: steps.map((step) => ({ step, label: `${step}_${index}` })),
    });
    this.size += steps.length;
    return true;
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

function stepsOf(call: CallRecord): PortalStep[] {
  switch (call.nextStep) {
    case 'register':
      return ['register'];
    case 'finish':
      return call.ended?.recordingUrl ? ['finish', 'attachRecord'] : ['finish'];
    case 'attachRecord':
      return ['attachRecord'];
    default:
      return [];
  }
}

function paramsOf(call: CallRecord, step: PortalStep) {
  if (step === 'register') return registerParams(call, call.portalUser!);
  if (step === 'finish') return finishParams(call);
  return attachRecordParams(call);
}
