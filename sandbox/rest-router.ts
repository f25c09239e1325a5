import { downloadRecordUrls } from './record-url-download';
import { IncomingMessage, ServerResponse } from 'node:http';
import { runBatch } from './batch';
import { Caller } from './credentials';
import { portalTime } from './envelope';
import {
  MAX_BODY_BYTES,
  parseBodyParams,
  parseFormParams,
  readBody,
  sendJson,
  sendRedirect,
} from './http-io';
import { sendPage } from './faults';
import { MethodContext, MethodRegistry } from './method-registry';
import { MethodOperating } from './operating-time';
import { param, Params } from './params';
import { PortalState } from './portal-state';
import { RequestLogEntry } from './request-log';
import { isSandboxPortalError, portalErrors, SandboxPortalError } from './sandbox-portal-error';

/** A /rest path: `/rest/<user_id>/<code>/<method>` (webhook) or `/rest/<method>` (OAuth), optional `v1/`. */
type RestAddress =
  { kind: 'webhook'; userId: number; code: string; method: string } | { kind: 'oauth'; method: string };

export function parseRestAddress(pathname: string): RestAddress | undefined {
  const segments = pathname
    .replace(/^\/rest\/?/, '')
    .split('/')
    .filter((segment) => segment !== '');
  if (segments[0]?.toLowerCase() === 'v1' && segments.length > 1) segments.shift();
  const method = (name: string | undefined) =>
    decodeURIComponent(name ?? '')
      .replace(/\.json$/i, '')
      .toLowerCase();
  if (segments.length === 3 && /^\d+$/.test(segments[0])) {
    return {
      kind: 'webhook',
      userId: Number(segments[0]),
      code: decodeURIComponent(segments[1]),
      method: method(segments[2]),
    };
  }
  if (segments.length === 2 && /^\d+$/.test(segments[0])) {
    return {
      kind: 'webhook',
      userId: Number(segments[0]),
      code: decodeURIComponent(segments[1]),
      method: '',
    };
  }
  if (segments.length <= 1) return { kind: 'oauth', method: method(segments[0]) };
  return undefined;
}

function bearerToken(req: IncomingMessage): string | undefined {
  const match = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
  return match?.[1];
}

interface Answer {
  status: number;
  body: unknown;
  /** The methods the request called (lower case; a batch's commands' methods). */
  methods: string[];
  /** Commands that passed the budget and authentication. */
  executed: number;
  commands: number;
  /** The caller was cut off before the request ran (a late-processed lost answer): nothing is sent. */
  lost?: boolean;
  /** Figures the operating time the answer reports, as of when its commands ran; called when it leaves. */
  settle?: () => void;
}

/**
 * What running a method (or a batch) gives: the envelope without `time`, and how to figure the operating
 * time to report once the answer leaves.
 */
interface Ran {
  envelope: Record<string, unknown>;
  figure(): MethodOperating | undefined;
}

/**
 * Serves /rest: address forms, parameters, faults, the request budget, credentials, rights, the method and
 * the answer envelope, and records each request in the log.
 */
export class RestRouter {
  constructor(
    private readonly state: PortalState,
    private readonly registry: MethodRegistry,
    private readonly sleep: (ms: number) => Promise<void>,
  ) {}

  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const arrivedAt = this.state.now();
    const address = parseRestAddress(url.pathname);
    const entry: RequestLogEntry = {
      at: arrivedAt,
      path: url.pathname,
      method: address?.method ?? '',
      commands: 1,
      status: 0,
      error: null,
      auth: address?.kind ?? null,
    };
    const redirect = this.state.faults.redirect();
    if (redirect) {
      sendRedirect(res, redirect.status, `${redirect.location}${url.pathname}${url.search}`);
      this.record(entry, redirect.status, null, 0);
      return;
    }
    const answer = await this.answer(req, url, address, arrivedAt, res);
    if (answer.lost) {
      // Cut off before it was processed (`lose-answer` with `processAfterMs`): nothing to send.
      this.record(entry, 0, 'ANSWER_LOST', answer.executed);
      return;
    }
    // The server time its commands took (they ran side by side with other requests), then any injected latency.
    const delay =
      answer.executed * this.state.operating.performance.commandMs +
      this.state.faults.latencyMs(answer.methods);
    if (delay > 0) await this.sleep(delay);
    answer.settle?.();
    if (answer.executed > 0 && this.state.faults.loseAnswer(answer.methods)) {
      res.destroy();
      this.record(entry, 0, 'ANSWER_LOST', answer.executed);
      return;
    }
    entry.commands = answer.commands;
    const error = (answer.body as { error?: unknown }).error;
    if (typeof answer.body === 'string') sendPage(res, answer.status, answer.body);
    else sendJson(res, answer.status, answer.body);
    this.record(entry, answer.status, typeof error === 'string' ? error : null, answer.executed);
  }

  private async answer(
    req: IncomingMessage,
    url: URL,
    address: RestAddress | undefined,
    arrivedAt: number,
    res: ServerResponse,
  ): Promise<Answer> {
    let commands = 1;
    let executed = 0;
    let methods: string[] = address?.method ? [address.method] : [];
    try {
      const body = await readBody(req);
      if (body === null) throw portalErrors.tooLarge(MAX_BODY_BYTES);
      const params: Params = {
        ...parseFormParams(url.search),
        ...parseBodyParams(req.headers['content-type'], body),
      };
      if (address?.method === 'batch') {
        commands = Math.max(1, countCommands(params));
        methods = batchMethods(params);
      }
      const refusal = this.state.faults.refusal(body);
      if (refusal) return { ...refusal, executed: 0, commands, methods };
      const injected = this.state.faults.requestError();
      if (injected) throw injected;
      if (!this.state.budget.tryTake(arrivedAt)) throw portalErrors.queryLimitExceeded();
      const caller = this.authenticate(req, address, params);
      const method = address?.method ?? '';
      const run = this.runner(method);
      if (this.state.downloadRecordUrls) {
        await downloadRecordUrls(method, params, this.state.recordUrlDownloads);
      }
      // A portal still busy with a request its caller gave up on: the caller is cut off now, the request
      // runs later.
      const lateMs = this.state.faults.lateProcessingMs(methods);
      if (lateMs !== undefined) {
        res.destroy();
        await this.sleep(lateMs);
        try {
          run(params, { state: this.state, caller, now: this.state.now() });
        } catch {
          // Refused when it finally ran: the caller, cut off long ago, never learns either way.
        }
        return { status: 0, body: {}, executed: commands, commands, methods, lost: true };
      }
      executed = commands;
      const { envelope, figure } = run(params, { state: this.state, caller, now: arrivedAt });
      const finish = arrivedAt + commands * this.state.operating.performance.commandMs;
      const time = portalTime(arrivedAt, Math.max(finish, this.state.now()));
      const settle = () => {
        const operating = figure();
        if (operating) {
          Object.assign(
            time,
            portalTime(arrivedAt, time.finish * 1000, operating.resetAt, operating.usedSec),
          );
        }
      };
      return { status: 200, body: { ...envelope, time }, executed, commands, methods, settle };
    } catch (error) {
      if (!isSandboxPortalError(error)) console.error('sandbox portal: unexpected failure', error);
      const failure = isSandboxPortalError(error)
        ? error
        : new SandboxPortalError(500, 'INTERNAL_SERVER_ERROR', 'Internal server error');
      // An over-long batch, or one refused for the operating time of `batch` (`batch-whole`), is refused
      // before any of its commands runs.
      const refusedWhole =
        failure.code === 'ERROR_BATCH_LENGTH_EXCEEDED' ||
        (address?.method === 'batch' && failure.code === 'OPERATION_TIME_LIMIT');
      const ran = refusedWhole ? 0 : executed;
      return { status: failure.status, body: failure.body(), executed: ran, commands, methods };
    }
  }

  /** The method (or batch) behind a name, as a function from parameters to the answer without `time`. */
  private runner(method: string): (params: Params, context: MethodContext) => Ran {
    if (method === 'batch') {
      return (params, context) => {
        const fault = this.state.faults.methodError('batch');
        if (fault) throw fault;
        const answer = runBatch(params, context, this.registry);
        return { envelope: answer.body, figure: () => answer.figure() };
      };
    }
    const definition = method === '' ? undefined : this.registry.find(method);
    if (!definition) throw portalErrors.methodNotFound();
    return (params, context) => {
      const { result, total, next, method, finishedAt } = this.registry.invoke(definition, params, context);
      return {
        envelope: {
          result,
          ...(next === undefined ? {} : { next }),
          ...(total === undefined ? {} : { total }),
        },
        figure: () => this.state.operating.used(method, finishedAt),
      };
    };
  }

  private authenticate(req: IncomingMessage, address: RestAddress | undefined, params: Params): Caller {
    if (address?.kind === 'webhook') {
      return this.state.credentials.authenticateWebhook(address.userId, address.code);
    }
    const auth = param(params, 'auth');
    const token = typeof auth === 'string' && auth !== '' ? auth : bearerToken(req);
    if (token === undefined) throw portalErrors.noAuth();
    return this.state.credentials.authenticateToken(token, this.state.now());
  }

  private record(entry: RequestLogEntry, status: number, error: string | null, executed: number): void {
    this.state.requestLog.record({ ...entry, status, error }, executed);
  }
}

/** The methods a batch's commands call (`method?query`), lower case. */
function batchMethods(params: Params): string[] {
  const cmd = param(params, 'cmd');
  const texts = Array.isArray(cmd) ? cmd : cmd !== null && typeof cmd === 'object' ? Object.values(cmd) : [];
  return texts.map((text) => String(text).split('?')[0].toLowerCase());
}

function countCommands(params: Params): number {
  const cmd = param(params, 'cmd');
  if (Array.isArray(cmd)) return cmd.length;
  return cmd !== null && typeof cmd === 'object' ? Object.keys(cmd).length : 0;
}
