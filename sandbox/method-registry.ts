import { Caller } from './credentials';
import { findOverlongString, MAX_STRING_LENGTH, Params } from './params';
import { PortalState } from './portal-state';
import { portalErrors } from './sandbox-portal-error';

export interface MethodContext {
  state: PortalState;
  caller: Caller;
  now: number;
}

/** What a method answers: `result`, plus `total`/`next` for list methods. */
export interface MethodResult {
  result: unknown;
  total?: number;
  next?: number;
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

  /** One call, direct or as a batch command: scope, injected fault, string limit, then the method. */
  invoke(definition: MethodDefinition, params: Params, context: MethodContext): MethodResult {
    if (definition.scope !== null && !context.caller.scopes.includes(definition.scope)) {
      throw portalErrors.insufficientScope(context.caller.kind);
    }
    const fault = context.state.faults.methodError(definition.name.toLowerCase());
    if (fault) throw fault;
    const overlong = findOverlongString(params);
    if (overlong !== null) {
      throw portalErrors.invalidArgument(`${overlong} is longer than ${MAX_STRING_LENGTH} characters`);
    }
    return definition.handler(params, context);
  }
}
