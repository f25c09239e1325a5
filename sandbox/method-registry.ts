import { Caller } from './credentials';
import { findOverlongString, MAX_STRING_LENGTH, Params } from './params';
import { PortalState } from './portal-state';
import { portalErrors } from './sandbox-portal-error';

export interface MethodContext {
  state: PortalState;
  caller: Caller;
  /** When the call starts (a batch's later commands start after the earlier ones' server time). */
  now: number;
  /** The batch's server time was charged when it arrived (`batch-upfront`): the command is not charged again. */
  prepaid?: boolean;
  /**
   * The batch is charged for the command's time, to the method `batch` (`batch-whole`): the command is
   * neither charged to its own method nor checked against it.
   */
  batchCharged?: boolean;
}

/** What a method answers: `result`, plus `total`/`next` for list methods. */
export interface MethodResult {
  result: unknown;
  total?: number;
  next?: number;
}

/** A call's answer, its method (lower case), and when its server time ended. */
export interface InvokedResult extends MethodResult {
  method: string;
  finishedAt: number;
}

export type MethodHandler = (params: Params, context: MethodContext) => MethodResult;

export interface MethodDefinition {
  /** As documented (`telephony.externalCall.searchCrmEntities`); looked up case-insensitively. */
  name: string;
  /** The permission area the method needs; null for general methods (profile, app.info, user.current). */
  scope: string | null;
  handler: MethodHandler;
}

/** The portal's REST methods by lower-case name; runs one call with its rights, faults and limits. */
export class MethodRegistry {
  private readonly methods = new Map<string, MethodDefinition>();

  constructor(definitions: MethodDefinition[]) {
    for (const definition of definitions) this.methods.set(definition.name.toLowerCase(), definition);
  }

  find(name: string): MethodDefinition | undefined {
    return this.methods.get(name.toLowerCase());
  }

  /**
   * One call, direct or as a batch command: scope, injected fault, the method's operating-time block,
   * string limit, then the method, charged `commandMs` of server time to its method when it has run (at
   * `context.now + commandMs`; on arrival with `batch-upfront`; to the batch with `batch-whole`). The method's use is figured when the answer
   * leaves (`OperatingTimeLedger.used` at `finishedAt`), so it counts what other requests ran meanwhile.
   */
  invoke(definition: MethodDefinition, params: Params, context: MethodContext): InvokedResult {
    if (definition.scope !== null && !context.caller.scopes.includes(definition.scope)) {
      throw portalErrors.insufficientScope(context.caller.kind);
    }
    const method = definition.name.toLowerCase();
    const fault = context.state.faults.methodError(method);
    if (fault) throw fault;
    const ledger = context.state.operating;
    const commandMs = ledger.performance.commandMs;
    const upfront = ledger.upfront;
    // A direct call on an up-front portal pays on arrival too.
    if (upfront && !context.prepaid) ledger.charge(method, context.now, commandMs / 1000);
    // Checked before it runs: the call that takes the count over the limit completes, the next is refused.
    if (!context.batchCharged && ledger.blocked(method, context.now)) {
      context.state.requestLog.countOperatingLimited();
      throw portalErrors.operationTimeLimit(context.now, ledger.refuse(method, context.now));
    }
    // Charged when its run ends, to its own method (a `batch-whole` batch pays for it instead).
    if (!upfront && !context.batchCharged) ledger.charge(method, context.now + commandMs, commandMs / 1000);
    ledger.countRun(method, context.now);
    const overlong = findOverlongString(params);
    if (overlong !== null) {
      throw portalErrors.invalidArgument(`${overlong} is longer than ${MAX_STRING_LENGTH} characters`);
    }
    return { ...definition.handler(params, context), method, finishedAt: context.now + commandMs };
  }
}
