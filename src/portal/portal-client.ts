import { Logger } from '@nestjs/common';
import { stringify } from 'qs';
import { PortalCredentials, PreparedCall } from './portal-credentials';
import { classifyPortalError, PortalError } from './portal-error';
import { BudgetPriority, PortalBudget } from './budget-waiters';
import { BudgetUnit } from './budget-unit';
import { RedirectPolicy } from './portal-redirects';
import { OperatingSettings, OperatingTime } from './operating-time';
import { ABORTED, PortalHttp, PortalHttpAnswer, PortalHttpError, TIMED_OUT, TOO_LARGE } from './portal-http';

/** The largest answer read from the portal: far above any page or batch answer, far below the heap. */
export const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

export type PortalParams = Record<string, unknown>;

export interface BatchCommand {
  /** Non-numeric: with numeric labels the portal may answer result_error as a list and lose which failed. */
  label: string;
  method: string;
  params: PortalParams;
}

export interface BatchOutcome {
  results: Record<string, unknown>;
  errors: Record<string, PortalError>;
}

/** The portal's `time` block (how real portals behave "Success envelope"); seconds, floats. */
interface PortalTime {
  start?: number;
  finish?: number;
  duration?: number;
  processing?: number;
  operating?: number;
  operating_reset_at?: number;
}

/**
 * `unit`: the caller already holds the budget unit of the first request; the client spends it when the
 * request leaves, or gives it back when nothing is sent (credentials unusable, caller gone), so it is
 * settled either way once the call returns. `budgetTaken`: the same for callers holding a unit they do not
 * pass (the client refunds through the budget). `signal`: the caller gives up (a deadline): a request
 * still waiting for the budget leaves the queue without taking a unit, one already sent is abandoned;
 * either way the call rejects with a `timeout` PortalError.
 */
export interface SendOptions {
  priority?: BudgetPriority;
  /** This request's timeout instead of the client's (a request carrying a file: scaled to its bytes). */
  timeoutMs?: number;
  unit?: BudgetUnit;
  budgetTaken?: boolean;
  signal?: AbortSignal;
}

export interface PortalClientOptions {
  timeoutMs: number;
  batchSize: number;
  /** `B24_ALLOWED_DOMAINS`: where the portal may move besides its own registrable domain. */
  allowedDomains?: readonly string[];
  /** The portal's operating-time limit (default: 480 s per method in 600 s, as real portals). */
  operating?: OperatingSettings;
  /** HTTP connections kept to the portal: batches in flight plus lookups (default 32). */
  maxSockets?: number;
}

/** Observes every request the client makes (metrics, logs); kept out of the client's logic. */
export interface PortalRequestObserver {
  onResponse(method: string, outcome: string, commands: number): void;
}

interface Envelope {
  result?: unknown;
  error?: string;
  error_description?: string;
  time?: PortalTime;
}

/**
 * The portal's REST client: every request waits for the shared request budget, goes out as JSON, and
 * comes back as a result or a classified PortalError. An expired or refused token is renewed when the
 * credentials can, and the call retried once; a portal that moved (HTTP 30x) is followed and remembered
 * when `RedirectPolicy` allows the move.
 */
export class PortalClient {
  private readonly http: PortalHttp;
  private readonly redirects: RedirectPolicy;
  private readonly logger = new Logger('PortalClient');
  /** Each method's server time against the portal's operating limit, from every answer. */
  readonly operating: OperatingTime;

  constructor(
    private readonly credentials: PortalCredentials,
    readonly budget: PortalBudget,
    private readonly options: PortalClientOptions,
    private readonly observer?: PortalRequestObserver,
  ) {
    this.http = new PortalHttp(options.maxSockets ?? 32);
    this.redirects = new RedirectPolicy(options.allowedDomains);
    this.operating = new OperatingTime({
      windowMs: 600_000,
      limitSec: 480,
      // Until a method is measured: the most a command can take without its request timing out.
      assumedCostSec: options.timeoutMs / 1000 / options.batchSize,
      ...options.operating,
    });
  }

  get portalId(): string {
    return this.credentials.portalId;
  }

  get maxBatchSize(): number {
    return this.options.batchSize;
  }

  async call<T = unknown>(method: string, params: PortalParams, options: SendOptions = {}): Promise<T> {
    const envelope = await this.send(method, params, options, 1);
    return envelope.result as T;
  }

  /** One `batch` request (halt=0): each command succeeds or fails on its own. */
  async batch(commands: BatchCommand[], options: SendOptions = {}): Promise<BatchOutcome> {
    if (commands.length === 0 || commands.length > this.options.batchSize) {
      throw new RangeError(`a batch holds 1 to ${this.options.batchSize} commands, got ${commands.length}`);
    }
    const cmd = Object.fromEntries(
      commands.map((command) => [command.label, `${command.method}?${stringify(command.params)}`]),
    );
    const sentAt = Date.now();
    const envelope = await this.send('batch', { halt: 0, cmd }, options, commands.length);
    const outcome = decodeBatch(envelope.result, commands);
    this.observeBatch(envelope.result, commands, outcome, (Date.now() - sentAt) / 1000);
    return outcome;
  }

  /**
   * Each command's figure of its method's use (`result_time[label]`), in the order the portal took them
   * (their `finish`), then each method's server time; a portal that does not say is charged the request's
   * time shared over its commands. A command refused for operating time blocks its method until the reset
   * the portal gave for it (or last gave for its method).
   */
  private observeBatch(
    raw: unknown,
    commands: BatchCommand[],
    outcome: BatchOutcome,
    elapsedSec: number,
  ): void {
    const times = (raw as { result_time?: unknown } | undefined)?.result_time;
    const byLabel = (times && !Array.isArray(times) && typeof times === 'object' ? times : {}) as Record<
      string,
      PortalTime | undefined
    >;
    const costs = new Map<string, { costSec: number; commands: number }>();
    const figures: { method: string; time: PortalTime; at?: number }[] = [];
    const refused: { label: string; method: string; time?: PortalTime }[] = [];
    for (const { label, method } of commands) {
      const time = byLabel[label];
      if (outcome.errors[label]?.kind === 'operation-limit') {
        refused.push({ label, method, time });
        continue;
      }
      const cost = costs.get(method) ?? { costSec: 0, commands: 0 };
      cost.commands += 1;
      cost.costSec += time ? (time.duration ?? time.processing ?? 0) : elapsedSec / commands.length;
      costs.set(method, cost);
      if (time?.operating !== undefined) figures.push({ method, time, at: secondsToMs(time.finish) });
    }
    figures.sort((a, b) => (a.at ?? 0) - (b.at ?? 0));
    for (const { method, time, at } of figures) {
      this.operating.observe(method, {
        usedSec: time.operating,
        resetAtMs: secondsToMs(time.operating_reset_at),
        figureAtMs: at,
      });
    }
    // Refusals after the figures: whether the portal's count explains them decides how long they hold.
    for (const { label, method, time } of refused) {
      const error = outcome.errors[label];
      this.operating.blocked(method, secondsToMs(time?.operating_reset_at));
      // The call waits for the method's reset instead of a backoff that may be shorter.
      const resumeAt = this.operating.blockedUntil(method);
      outcome.errors[label] = new PortalError(
        error.kind,
        error.code,
        error.description,
        error.status,
        resumeAt,
      );
    }
    for (const [method, cost] of costs) this.operating.observe(method, cost);
  }

  private async send(
    method: string,
    body: PortalParams,
    options: SendOptions,
    commands: number,
  ): Promise<Envelope> {
    const blockedUntil = this.operating.blockedUntil(method);
    if (blockedUntil !== undefined) {
      options.unit?.giveBack();
      throw new PortalError(
        'operation-limit',
        'OPERATION_TIME_LIMIT',
        `${method} is blocked for its operating time until ${new Date(blockedUntil).toISOString()}; not sent`,
        undefined,
        blockedUntil,
      );
    }
    let renewed = false;
    let redirects = 0;
    let held = options.unit ?? (options.budgetTaken ? new BudgetUnit(() => this.budget.refund()) : undefined);
    for (;;) {
      const unit = held ?? (await this.acquireBudget(options));
      held = undefined;
      const prepared = await this.prepareOrGiveBack(method, unit);
      if (options.signal?.aborted) {
        unit.giveBack();
        throw abandoned('before the request was sent');
      }
      unit.spend();
      const sentAt = Date.now();
      let response: PortalHttpAnswer;
      try {
        response = await this.http.post(prepared.url, body, {
          headers: prepared.headers,
          signal: options.signal,
          timeoutMs: options.timeoutMs ?? this.options.timeoutMs,
          maxAnswerBytes: MAX_ANSWER_BYTES,
        });
      } catch (error) {
        const failure = options.signal?.aborted ? abandoned('waiting for the answer') : transportError(error);
        this.observer?.onResponse(method, failure.kind, commands);
        throw failure;
      }
      const location = response.headers['location'];
      if (response.status >= 300 && response.status < 400 && location && redirects < 3) {
        redirects += 1;
        this.follow(prepared.url, location, response.status, method, commands);
        continue;
      }
      const envelope: Envelope =
        typeof response.data === 'object' && response.data !== null ? (response.data as Envelope) : {};
      const time = envelope.time;
      this.operating.observeClock(sentAt, Date.now(), secondsToMs(time?.start), secondsToMs(time?.finish));
      // When the portal counted it (its clock): the budget keeps a late start of a busy stretch.
      const startedAt = secondsToMs(time?.start);
      if (startedAt !== undefined) unit.arrived(startedAt);
      // The method's use as the portal counted it when the call ran, refused or not: it beats any estimate.
      // A batch's own figure is the method `batch`'s: followed once the portal counts any (a portal that
      // charges batches whole); one that charges only the commands says nothing there.
      const counted = method !== 'batch' || (time?.operating ?? 0) > 0 || this.operating.counted(method);
      if (time?.operating !== undefined && counted) {
        this.operating.observe(method, {
          usedSec: time.operating,
          resetAtMs: secondsToMs(time.operating_reset_at),
          figureAtMs: secondsToMs(time.finish),
        });
      }
      if (response.status < 300 && envelope.error === undefined && 'result' in envelope) {
        this.budget.onAccepted();
        this.observer?.onResponse(method, 'ok', commands);
        if (counted) {
          this.operating.observe(method, { costSec: time?.duration ?? time?.processing, commands });
        }
        return envelope;
      }
      const failure = classifyPortalError(
        envelope.error ?? '',
        envelope.error_description ?? `unexpected answer (HTTP ${response.status})`,
        response.status,
        envelope.time?.operating_reset_at,
      );
      this.observer?.onResponse(method, failure.kind, commands);
      if (failure.kind === 'budget') this.budget.onRejected();
      if (failure.kind === 'operation-limit') this.operating.blocked(method, failure.resumeAt);
      // A refused token is renewable too: another request or replica may have refreshed the pair meanwhile.
      const renewable = failure.kind === 'token-expired' || failure.kind === 'credentials';
      if (renewable && !renewed && (await this.credentials.renew(failure, prepared))) {
        renewed = true;
        continue;
      }
      throw failure;
    }
  }

  /**
   * Remembers the portal's new origin, or refuses the move with a `credentials` PortalError: delivery
   * pauses with the reason until an operator acts. Log lines name hosts only (a path holds the webhook code).
   */
  private follow(current: string, location: string, status: number, method: string, commands: number): void {
    const from = new URL(current);
    let to: URL;
    try {
      to = new URL(location, from);
    } catch {
      this.observer?.onResponse(method, 'credentials', commands);
      throw new PortalError(
        'credentials',
        'REDIRECT_REFUSED',
        `the portal answered HTTP ${status} to an invalid address`,
        status,
      );
    }
    const verdict = this.redirects.judge(from, to);
    if (!verdict.follow) {
      const refusal = `the portal answered HTTP ${status} from ${from.host} to ${to.protocol}//${to.host}, not followed: ${verdict.reason}`;
      this.logger.warn(refusal);
      this.observer?.onResponse(method, 'credentials', commands);
      throw new PortalError('credentials', 'REDIRECT_REFUSED', refusal, status);
    }
    if (to.origin !== from.origin) {
      this.logger.warn(
        `the portal moved (HTTP ${status}) from ${from.protocol}//${from.host} to ${to.protocol}//${to.host}; later requests go there`,
      );
    }
    this.credentials.moveTo(to.origin);
  }

  private async acquireBudget(options: SendOptions): Promise<BudgetUnit> {
    try {
      return await this.budget.acquire(options.priority ?? 'background', options.signal);
    } catch (error) {
      if (options.signal?.aborted) throw abandoned('waiting for the request budget');
      throw error;
    }
  }

  /** Credentials that cannot be used send nothing, so the budget unit taken for the request is given back. */
  private async prepareOrGiveBack(method: string, unit: BudgetUnit): Promise<PreparedCall> {
    try {
      return await this.credentials.prepare(method);
    } catch (error) {
      unit.giveBack();
      throw error;
    }
  }
}

interface BatchResult {
  result?: Record<string, unknown> | unknown[];
  result_error?: Record<string, { error?: string; error_description?: string }> | unknown[];
}

function decodeBatch(raw: unknown, commands: BatchCommand[]): BatchOutcome {
  const body = (raw ?? {}) as BatchResult;
  const results = Array.isArray(body.result) ? {} : (body.result ?? {});
  const rawErrors = Array.isArray(body.result_error) ? {} : (body.result_error ?? {});
  const errors: Record<string, PortalError> = {};
  for (const { label } of commands) {
    const error = rawErrors[label];
    if (error) errors[label] = classifyPortalError(error.error ?? '', error.error_description ?? '');
    else if (!(label in results)) {
      errors[label] = new PortalError('server', '', 'the batch answer did not mention this command');
    }
  }
  return { results, errors };
}

function secondsToMs(seconds: number | undefined): number | undefined {
  return typeof seconds === 'number' && Number.isFinite(seconds) ? seconds * 1000 : undefined;
}

/** The caller's signal ended the call (its deadline passed): `stage` says where it was. */
function abandoned(stage: string): PortalError {
  return new PortalError('timeout', 'ABORTED', `the caller gave up ${stage}`);
}

/** A transport failure, described without the URL (a webhook URL holds its secret code). */
function transportError(error: unknown): PortalError {
  if (error instanceof PortalHttpError) {
    if (error.code === TOO_LARGE) {
      return new PortalError('server', TOO_LARGE, `the portal's answer exceeded ${MAX_ANSWER_BYTES} bytes`);
    }
    if (error.code === TIMED_OUT || error.code === ABORTED) {
      return new PortalError('timeout', error.code, 'the portal did not answer in time');
    }
    return new PortalError('network', error.code, `no answer from the portal (${error.code})`);
  }
  return new PortalError('network', 'NETWORK', 'no answer from the portal');
}
