import { ExternalLine, OfflineEvent } from '../event-hub';
import { MethodContext, MethodDefinition, MethodResult } from '../method-registry';
import { asList, intParam, isTruthyFlag, objectParam, Params, stringParam } from '../params';
import { portalErrors } from '../sandbox-portal-error';

/** event.* needs an application's authorisation: a webhook cannot bind handlers. */
function appOf(context: MethodContext) {
  if (context.caller.kind !== 'oauth') {
    throw portalErrors.invalidRequest('Application context required (event.* works only with OAuth)');
  }
  return context.caller.app;
}

function bind(params: Params, context: MethodContext): MethodResult {
  const app = appOf(context);
  const event = stringParam(params, 'event')?.toUpperCase();
  const handler = stringParam(params, 'handler');
  const eventType = (stringParam(params, 'event_type') ?? 'online').toLowerCase();
  if (!event) throw portalErrors.invalidArgument('event is required');
  if (eventType !== 'online' && eventType !== 'offline') {
    throw portalErrors.invalidArgument('event_type must be online or offline');
  }
  if (eventType === 'online' && !handler) throw portalErrors.invalidArgument('handler is required');
  const { bindings } = context.state.events;
  const same = bindings.find(
    (binding) =>
      binding.clientId === app.clientId &&
      binding.event === event &&
      binding.eventType === eventType &&
      binding.handler === (handler ?? ''),
  );
  if (same) throw portalErrors.handlerExists();
  bindings.push({
    clientId: app.clientId,
    event,
    handler: handler ?? '',
    authType: intParam(params, 'auth_type') ?? 0,
    eventType,
  });
  return { result: true };
}

function get(_params: Params, context: MethodContext): MethodResult {
  const app = appOf(context);
  return {
    result: context.state.events.bindings
      .filter((binding) => binding.clientId === app.clientId)
      .map((binding) => ({
        event: binding.event,
        handler: binding.handler,
        auth_type: String(binding.authType),
        offline: binding.eventType === 'offline' ? 1 : 0,
      })),
  };
}

function unbind(params: Params, context: MethodContext): MethodResult {
  const app = appOf(context);
  const event = stringParam(params, 'event')?.toUpperCase();
  const handler = stringParam(params, 'handler');
  const { bindings } = context.state.events;
  let count = 0;
  for (let index = bindings.length - 1; index >= 0; index -= 1) {
    const binding = bindings[index];
    if (binding.clientId !== app.clientId || binding.event !== event) continue;
    if (handler !== undefined && binding.handler !== handler) continue;
    bindings.splice(index, 1);
    count += 1;
  }
  return { result: { count } };
}

function view(event: OfflineEvent) {
  return {
    ID: event.ID,
    TIMESTAMP_X: event.TIMESTAMP_X,
    EVENT_NAME: event.EVENT_NAME,
    EVENT_DATA: event.EVENT_DATA,
    EVENT_ADDITIONAL: event.EVENT_ADDITIONAL,
    MESSAGE_ID: event.MESSAGE_ID,
    PROCESS_ID: event.processId ?? '',
  };
}

/** `filter[EVENT_NAME]` (one name or a list) narrows what is read. */
function matchesFilter(params: Params, event: OfflineEvent): boolean {
  const filter = objectParam(params, 'filter');
  const names = filter.EVENT_NAME ?? filter['=EVENT_NAME'];
  if (names === undefined) return true;
  return asList(names).some((name) => String(name).toUpperCase() === event.EVENT_NAME);
}

/**
 * event.offline.get: up to `limit` (≤ 50) queued events of the application, oldest first. `clear=1`
 * (default) removes them; `clear=0` marks them with `process_id` (given or new) until event.offline.clear:
 * another reader does not get them, the same process_id gets them again.
 */
function offlineGet(params: Params, context: MethodContext): MethodResult {
  const app = appOf(context);
  const limit = Math.min(50, Math.max(1, intParam(params, 'limit') ?? 50));
  const clearParam = params.clear;
  const clear = clearParam === undefined ? true : isTruthyFlag(clearParam);
  const processId =
    stringParam(params, 'process_id') ?? `proc${Math.random().toString(16).slice(2, 14).padEnd(12, '0')}`;
  const queue = context.state.events.offline;
  const taken = queue
    .filter(
      (event) =>
        event.clientId === app.clientId &&
        (event.processId === null || event.processId === processId) &&
        matchesFilter(params, event),
    )
    .slice(0, limit);
  if (clear) {
    for (const event of taken) queue.splice(queue.indexOf(event), 1);
  } else {
    for (const event of taken) event.processId = processId;
  }
  return { result: { process_id: processId, events: taken.map(view) } };
}

/** event.offline.clear: removes the events `process_id` marked, all of them or those in `id[]`/`message_id[]`. */
function offlineClear(params: Params, context: MethodContext): MethodResult {
  const app = appOf(context);
  const processId = stringParam(params, 'process_id');
  if (!processId) throw portalErrors.invalidArgument('process_id is required');
  const ids = params.id === undefined ? undefined : asList(params.id).map(Number);
  const messageIds = params.message_id === undefined ? undefined : asList(params.message_id).map(String);
  const queue = context.state.events.offline;
  for (let index = queue.length - 1; index >= 0; index -= 1) {
    const event = queue[index];
    if (event.clientId !== app.clientId || event.processId !== processId) continue;
    if (ids && !ids.includes(event.ID)) continue;
    if (messageIds && !messageIds.includes(event.MESSAGE_ID)) continue;
    queue.splice(index, 1);
  }
  return { result: true };
}

/** event.offline.list: reads the queue without changing it. */
function offlineList(params: Params, context: MethodContext): MethodResult {
  const app = appOf(context);
  const events = context.state.events.offline.filter(
    (event) => event.clientId === app.clientId && matchesFilter(params, event),
  );
  return { result: events.map(view), total: events.length };
}

/**
 * telephony.externalLine.* needs an application's authorisation, as the real portal's: a webhook is refused. Each application has its own lines.
 */
function lineAppOf(context: MethodContext): string {
  if (context.caller.kind !== 'oauth') {
    throw portalErrors.invalidRequest(
      'Application context required (telephony.externalLine.* works only with OAuth)',
    );
  }
  return context.caller.app.clientId;
}

function autoCreate(params: Params): 'Y' | 'N' | undefined {
  const value = stringParam(params, 'CRM_AUTO_CREATE')?.toUpperCase();
  return value === undefined ? undefined : value === 'N' ? 'N' : 'Y';
}

/**
 * telephony.externalLine.add: a new line of the application; the add of a number it has already answers
 * that line's ID and changes nothing (its name changes through .update), so a repeated add makes no second line.
 */
function lineAdd(params: Params, context: MethodContext): MethodResult {
  const clientId = lineAppOf(context);
  const number = stringParam(params, 'NUMBER');
  if (!number) throw portalErrors.invalidArgument('NUMBER is required');
  const { lines } = context.state.events;
  const mine = (line: ExternalLine) => line.clientId === clientId && line.NUMBER === number;
  if (!lines.some(mine)) {
    lines.push({
      clientId,
      NUMBER: number,
      NAME: stringParam(params, 'NAME') || number,
      CRM_AUTO_CREATE: autoCreate(params) ?? 'Y',
    });
  }
  return { result: { ID: lines.findIndex(mine) + 1 } };
}

/** telephony.externalLine.update: NUMBER, and NAME or CRM_AUTO_CREATE (else ERROR_CORE, as the real portal). */
function lineUpdate(params: Params, context: MethodContext): MethodResult {
  const clientId = lineAppOf(context);
  const number = stringParam(params, 'NUMBER');
  const name = stringParam(params, 'NAME');
  const auto = autoCreate(params);
  if (!number || (name === undefined && auto === undefined)) {
    throw portalErrors.core('NUMBER and NAME or CRM_AUTO_CREATE are required');
  }
  const line = context.state.events.lines.find(
    (item) => item.clientId === clientId && item.NUMBER === number,
  );
  if (!line) throw portalErrors.core(`Line ${number} is not found`);
  if (name !== undefined) line.NAME = name;
  if (auto !== undefined) line.CRM_AUTO_CREATE = auto;
  return { result: { ID: context.state.events.lines.indexOf(line) + 1 } };
}

function lineGet(_params: Params, context: MethodContext): MethodResult {
  const clientId = lineAppOf(context);
  return {
    result: context.state.events.lines
      .filter((line) => line.clientId === clientId)
      .map(({ NUMBER, NAME, CRM_AUTO_CREATE }) => ({ NUMBER, NAME, CRM_AUTO_CREATE })),
  };
}

function lineDelete(params: Params, context: MethodContext): MethodResult {
  const clientId = lineAppOf(context);
  const number = stringParam(params, 'NUMBER');
  const { lines } = context.state.events;
  const index = lines.findIndex((line) => line.clientId === clientId && line.NUMBER === number);
  if (index >= 0) lines.splice(index, 1);
  return { result: index >= 0 };
}

export const eventMethods: MethodDefinition[] = [
  { name: 'event.bind', scope: null, handler: bind },
  { name: 'event.get', scope: null, handler: get },
  { name: 'event.unbind', scope: null, handler: unbind },
  { name: 'event.offline.get', scope: null, handler: offlineGet },
  { name: 'event.offline.clear', scope: null, handler: offlineClear },
  { name: 'event.offline.list', scope: null, handler: offlineList },
  { name: 'telephony.externalLine.add', scope: 'telephony', handler: lineAdd },
  { name: 'telephony.externalLine.update', scope: 'telephony', handler: lineUpdate },
  { name: 'telephony.externalLine.get', scope: 'telephony', handler: lineGet },
  { name: 'telephony.externalLine.delete', scope: 'telephony', handler: lineDelete },
];
