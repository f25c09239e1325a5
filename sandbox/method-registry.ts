import { Caller } from './credentials';
import { findOverlongString, MAX_STRING_LENGTH, Params } from './params';
import { MethodOperating } from './operating-time';
import { PortalState } from './portal-state';
import { portalErrors } from './sandbox-portal-error';

export interface MethodContext {
  state: PortalState;
  caller: Caller;
  /** When the call starts (a batch's later commands start after the earlier ones' server time). */
  now: number;
}

/** What a method answers: `result`, plus `total`/`next` for list methods. */
export interface MethodResult {
  result: unknown;
  total?: number;
  next?: number;
}

/** A call's answer with the method's operating time after it ran. */
export interface InvokedResult extends MethodResult {
  operating: MethodOperating;
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
   * string limit, then the method, charged `commandMs` of server time to its method (finishing at
   * `context.now + commandMs`).
   */
  invoke(definition: MethodDefinition, params: Params, context: MethodContext): InvokedResult {
    if (definition.scope !== null && !context.caller.scopes.includes(definition.scope)) {
      throw portalErrors.insufficientScope(context.caller.kind);
    }
    const method = definition.name.toLowerCase();
    const fault = context.state.faults.methodError(method);
    if (fault) throw fault;
    const ledger = context.state.operating;
    if (ledger.blocked(method, context.now)) {
      ledger.refused += 1;
      context.state.requestLog.countOperatingLimited();
      throw portalErrors.operationTimeLimit(context.now, ledger.used(method, context.now));
    }
    const commandMs = ledger.performance.commandMs;
    ledger.charge(method, context.now + commandMs, commandMs / 1000);
    const overlong = findOverlongString(params);
    if (overlong !== null) {
      throw portalErrors.invalidArgument(`${overlong} is longer than ${MAX_STRING_LENGTH} characters`);
    }
    return { ...definition.handler(params, context), operating: ledger.used(method, context.now) };
  }
}
