import { unixSeconds } from './date-format';
import { phpMap, portalTime, PortalTime } from './envelope';
import { parseFormParams } from './http-io';
import { MethodContext, MethodRegistry } from './method-registry';
import { BATCH_METHOD, MethodOperating } from './operating-time';
import { asList, isPlainObject, isTruthyFlag, param, Params } from './params';
import { isSandboxPortalError, portalErrors, SandboxPortalError } from './sandbox-portal-error';

export const MAX_BATCH_COMMANDS = 50;

/** `$result[label]`, `$result[label][FIELD]`, `$result[label][A][B]`. */
const REFERENCE = /\$result\[([^\]]+)\]((?:\[[^\]]*\])*)/g;

interface BatchCommand {
  label: string;
  text: string;
}

export interface BatchAnswer {
  body: { result: Record<string, unknown> };
  commands: number;
  /**
   * Figures each command's `result_time` operating use as of when it ran, and returns the use of the method
   * `batch` when the batch ended (the batch's own `time.operating`: nothing unless `batch-whole` charges it);
   * called when the answer leaves, so the figures count what other requests ran meanwhile.
   */
  figure(): MethodOperating;
}

/** The labelled commands of `cmd`, a JSON object/array or form `cmd[label]=method?query`. */
function commandsOf(params: Params): BatchCommand[] {
  const cmd = param(params, 'cmd');
  const entries = isPlainObject(cmd)
    ? Object.entries(cmd)
    : asList(cmd).map((text, index) => [String(index), text] as const);
  return entries.map(([label, text]) => ({ label, text: typeof text === 'string' ? text : '' }));
}

class BatchReferenceError extends SandboxPortalError {
  constructor(reference: string, label: string) {
    super(
      400,
      'INVALID_ARGUMENT',
      `Batch reference ${reference} cannot be resolved: command '${label}' has no such result`,
    );
  }
}

/** Replaces references in every value; a value that is only a reference takes the referenced value as is. */
function substitute(value: unknown, results: Map<string, unknown>): unknown {
  if (typeof value === 'string') {
    const whole = new RegExp(`^${REFERENCE.source}$`).exec(value);
    if (whole) return resolve(whole[0], whole[1], whole[2], results);
    return value.replace(REFERENCE, (reference: string, label: string, path: string) => {
      const resolved = resolve(reference, label, path, results);
      return typeof resolved === 'object' && resolved !== null ? JSON.stringify(resolved) : String(resolved);
    });
  }
  if (Array.isArray(value)) return value.map((item) => substitute(item, results));
  if (isPlainObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, substitute(item, results)]));
  }
  return value;
}

function resolve(reference: string, label: string, path: string, results: Map<string, unknown>): unknown {
  if (!results.has(label)) throw new BatchReferenceError(reference, label);
  let current = results.get(label);
  for (const [, key] of path.matchAll(/\[([^\]]*)\]/g)) {
    if (!isPlainObject(current) && !Array.isArray(current)) throw new BatchReferenceError(reference, label);
    const container = current as Record<string, unknown>;
    if (!(key in container)) throw new BatchReferenceError(reference, label);
    current = container[key];
  }
  if (current === undefined || current === null) throw new BatchReferenceError(reference, label);
  return current;
}

/**
 * Runs up to 50 commands in order with the batch's credentials; the batch is one request for the budget.
 * The batch itself is not charged operating time: each command is, to its own method, when its run ends
 * (`run`). With `batch-whole` the batch is checked against the method `batch` before it runs, and its whole
 * server time charged to `batch` when it ends, its commands to no method of their own.
 */
export function runBatch(params: Params, context: MethodContext, registry: MethodRegistry): BatchAnswer {
  const commands = commandsOf(params);
  if (commands.length > MAX_BATCH_COMMANDS) throw portalErrors.batchTooLong();
  const halt = isTruthyFlag(param(params, 'halt'));
  const results = new Map<string, unknown>();
  const errors = new Map<string, unknown>();
  const totals = new Map<string, unknown>();
  const nexts = new Map<string, unknown>();
  const times = new Map<string, unknown>();

  const ledger = context.state.operating;
  const commandMs = ledger.performance.commandMs;
  const prepaid = ledger.upfront;
  const batchCharged = ledger.batchWhole;
  const refusalTimes = ledger.chargeMode !== 'batch-upfront-no-reset';
  const endedAt = context.now + commands.length * commandMs;
  if (batchCharged) {
    if (ledger.blocked(BATCH_METHOD, context.now)) {
      context.state.requestLog.countOperatingLimited();
      throw portalErrors.operationTimeLimit(
        context.now,
        ledger.refuse(BATCH_METHOD, context.now, commands.length),
      );
    }
    ledger.charge(BATCH_METHOD, endedAt, (commands.length * commandMs) / 1000);
  }
  if (prepaid) {
    // The fault: the whole batch's server time, charged on arrival to every method it calls.
    const methods = new Set(commands.map(({ text }) => methodOf(text.split('?')[0])));
    for (const method of methods) ledger.charge(method, context.now, (commands.length * commandMs) / 1000);
  }
  const ran: { time: PortalTime; method: string; at: number }[] = [];
  for (const [index, { label, text }] of commands.entries()) {
    // Commands run one after another: each starts after the earlier ones' server time.
    const startedAt = context.now + index * commandMs;
    try {
      const [path, query = ''] = text.split(/\?(.*)/s);
      const method = methodOf(path);
      if (method === 'batch') throw portalErrors.batchNested();
      const definition = registry.find(method);
      if (!definition) throw portalErrors.methodNotFound();
      const commandParams = substitute(parseFormParams(query), results) as Params;
      const answer = registry.invoke(definition, commandParams, {
        ...context,
        now: startedAt,
        prepaid,
        batchCharged,
      });
      results.set(label, answer.result);
      if (answer.total !== undefined) totals.set(label, answer.total);
      if (answer.next !== undefined) nexts.set(label, answer.next);
      const time = portalTime(startedAt, answer.finishedAt);
      times.set(label, time);
      ran.push({ time, method: answer.method, at: answer.finishedAt });
    } catch (error) {
      if (!isSandboxPortalError(error)) throw error;
      errors.set(label, { error: error.code, error_description: error.description });
      // A command refused for its method's operating time says, like a direct call's 429, the count and
      // when the method's oldest use leaves (`result_time[label]`).
      // (Not with the `batch-upfront-no-reset` fault: such a refusal says nothing of the count.)
      if (refusalTimes && isPlainObject(error.extra.time)) times.set(label, error.extra.time);
      if (halt) break;
    }
  }

  return {
    body: {
      result: {
        result: phpMap(results),
        result_error: phpMap(errors),
        result_total: phpMap(totals),
        result_next: phpMap(nexts),
        result_time: phpMap(times),
      },
    },
    commands: commands.length,
    figure() {
      for (const { time, method, at } of ran) {
        const use = ledger.used(method, at);
        time.operating = use.usedSec;
        time.operating_reset_at = unixSeconds(use.resetAt);
      }
      return ledger.used(BATCH_METHOD, endedAt);
    },
  };
}

function methodOf(path: string): string {
  return path
    .replace(/^\/+/, '')
    .replace(/\.json$/i, '')
    .toLowerCase();
}
