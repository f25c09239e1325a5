import { Logger } from '@nestjs/common';
import { LookupSettings } from '../config/settings';
import { isWithheld } from '../common/phone-number';
import { BridgeMetrics } from '../metrics/bridge-metrics';
import { PortalClient } from '../portal/portal-client';
import { PortalError } from '../portal/portal-error';
import { BackgroundSearches } from './background-searches';
import { CrmBinding, CrmMatch, LookupAnswer } from './crm-match';
import { CrmSearch } from './crm-search';
import { EmployeeDirectory } from './employee-directory';
import { LookupCache } from './lookup-cache';

/** The record a callback names, read for its responsible. */
const RECORD_GET: Record<string, string> = {
  CONTACT: 'crm.contact.get',
  COMPANY: 'crm.company.get',
  LEAD: 'crm.lead.get',
  DEAL: 'crm.deal.get',
};

/** How long past its TTL a cached answer is still served while the portal cannot be asked. */
const STALE_SERVE_MS = 24 * 3600 * 1000;
/** "No match" is cached at most this long: registering a call from an unknown number creates a lead. */
const MISS_TTL_CAP_MS = 60_000;

/**
 * Where a lookup's answer came from, the `source` of `bridge_lookup_duration_seconds`: the cache (fresh,
 * or kept past its TTL while the portal fails), the portal (its answer, or its refusal at once), or the
 * deadline (nothing cached and the portal did not answer in time: match null).
 */
type LookupSource = 'cache' | 'portal' | 'deadline';

/**
 * Who has a phone number: from the cache when fresh, else from the portal. A lookup for a ringing call
 * (`lookup`) goes ahead of background delivery and gives up at LOOKUP_DEADLINE_MS, the wait for the
 * budget included; a cached answer, even an expired one, is served when the portal fails. Binding calls
 * for delivery (`bindingFor`) uses the same cache at background priority.
 */
export class CrmLookupService {
  private readonly logger = new Logger('CrmLookup');
  private readonly cache: LookupCache;
  private readonly background: BackgroundSearches;
  private readonly deadlineMs: number;
  private readonly bindingEnabled: boolean;
  /** Portal requests under way by number, so concurrent lookups of one number share a request. */
  private readonly interactive = new Map<string, Promise<CrmMatch | null>>();
  private readonly backgroundRunning = new Map<string, Promise<CrmMatch | null>>();
  private failing = false;
  /** Rises at every CRM change: answers of requests started before it are not cached. */
  private generation = 0;

  constructor(
    private readonly search: CrmSearch,
    private readonly directory: EmployeeDirectory,
    private readonly client: PortalClient,
    settings: LookupSettings,
    private readonly metrics: BridgeMetrics,
  ) {
    const ttlMs = settings.cacheTtlMs;
    this.cache = new LookupCache({
      maxEntries: settings.cacheSize,
      ttlMs,
      missTtlMs: Math.min(ttlMs, MISS_TTL_CAP_MS),
      staleMs: STALE_SERVE_MS,
    });
    this.background = new BackgroundSearches(search, client.budget);
    this.deadlineMs = settings.deadlineMs;
    this.bindingEnabled = settings.bindCrmEntity;
  }

  /** Says once, at start, when the portal's budget cannot carry a lookup in time. */
  open(): void {
    const problem = this.search.capacityProblem(1);
    if (problem) this.logger.warn(`lookups will answer without a match: ${problem.message}`);
  }

  /**
   * A CRM record changed (a portal event): its cached lookups and every cached "no match" are dropped, so
   * the next lookup asks the portal. Returns how many cached answers went.
   */
  forgetRecord(entityType: string, entityId: number): number {
    // Requests under way started before the change: later lookups start their own, and theirs are not cached.
    this.generation += 1;
    this.interactive.clear();
    this.backgroundRunning.clear();
    return this.cache.forgetRecord(entityType, entityId);
  }

  /**
   * For a ringing call: never slower than the deadline; `match: null` with a reason when the portal failed.
   * Its whole duration is observed in `bridge_lookup_duration_seconds` by where the answer came from.
   */
  async lookup(phone: string): Promise<LookupAnswer> {
    const observe = this.metrics.lookupDuration.startTimer();
    const { answer, source } = await this.resolve(phone);
    observe({ source });
    return answer;
  }

  private async resolve(phone: string): Promise<{ answer: LookupAnswer; source: LookupSource }> {
    const cached = this.cache.get(phone);
    if (cached?.fresh) return { answer: this.answer(phone, cached.match), source: 'cache' };
    const deadline = AbortSignal.timeout(this.deadlineMs);
    // A match names its responsible employee's extension: the directory's first read starts beside the search.
    this.directory.loadNow();
    try {
      const match = await untilAborted(this.findInteractive(phone, deadline), deadline);
      this.recovered();
      // Right after start-up the directory may still be loading: its extension is worth the wait.
      if (match && !this.directory.loaded) {
        await untilAborted(this.directory.whenLoaded(), deadline).catch(() => undefined);
      }
      return { answer: this.answer(phone, match), source: 'portal' };
    } catch (error) {
      const reason = this.reasonFor(error, deadline);
      this.failed(reason);
      if (cached) return { answer: this.answer(phone, cached.match), source: 'cache' };
      const source = this.missedDeadline(error, deadline) ? 'deadline' : 'portal';
      return { answer: { phone, match: null, reason }, source };
    }
  }

  /**
   * With B24_BIND_CRM_ENTITY: the client a call from this number is bound to, at background priority.
   * Undefined when the setting is off, nothing matches, or the portal refuses the lookup for good
   * (rights, parameters: the call is then registered unbound); rejects with the PortalError when the
   * portal may answer later (network, 5xx, budget) and nothing is cached.
   */
  async bindingFor(phoneE164: string): Promise<CrmBinding | undefined> {
    // A withheld number is nobody's: the call is bound to no record.
    if (!this.bindingEnabled || isWithheld(phoneE164)) return undefined;
    return toBinding(await this.backgroundMatch(phoneE164, 'binding a call to its CRM client'));
  }

  /**
   * Missed-call tasks: the client a number belongs to, whatever B24_BIND_CRM_ENTITY says, at background
   * priority; null when nothing matches or the portal refuses the search for good; rejects with the
   * PortalError when the portal may answer later and nothing is cached.
   */
  async clientFor(phoneE164: string): Promise<CrmMatch | null> {
    return isWithheld(phoneE164)
      ? null
      : this.backgroundMatch(phoneE164, 'finding the client of a missed call');
  }

  /**
   * The cached match when fresh, else the portal's at background priority (the cached one when it fails);
   * null when the portal refuses for good (`what` is logged as skipped), its error when it may answer later.
   */
  private async backgroundMatch(phoneE164: string, what: string): Promise<CrmMatch | null> {
    const cached = this.cache.get(phoneE164);
    if (cached?.fresh) return cached.match;
    try {
      return await this.findInBackground(phoneE164);
    } catch (error) {
      if (cached) return cached.match;
      if (error instanceof PortalError && error.retryable) throw error;
      this.logger.warn(`${what} skipped: ${(error as Error).message}`);
      return null;
    }
  }

  /**
   * Callbacks (docs/API.md): the responsible employee (`ASSIGNED_BY_ID`) of the CRM record the portal named,
   * at background priority. Undefined for a type the bridge does not read, a record that is gone, or a
   * refusal for good; rejects with the PortalError when the portal may answer later.
   */
  async responsibleOf(entityType: string, entityId: number): Promise<number | undefined> {
    const method = RECORD_GET[entityType.toUpperCase()];
    if (!method) return undefined;
    try {
      const record = await this.client.call<{ ASSIGNED_BY_ID?: unknown } | null>(
        method,
        { id: entityId },
        { priority: 'background' },
      );
      const responsible = Number(record?.ASSIGNED_BY_ID);
      return Number.isInteger(responsible) && responsible > 0 ? responsible : undefined;
    } catch (error) {
      if (error instanceof PortalError && error.retryable) throw error;
      this.logger.warn(
        `reading ${entityType} ${entityId}'s responsible skipped: ${(error as Error).message}`,
      );
      return undefined;
    }
  }

  private answer(phone: string, match: CrmMatch | null): LookupAnswer {
    if (!match) return { phone, match: null };
    const extension = this.directory.extensionOf(match.responsibleUserId);
    return { phone, match: { ...match, responsibleExtension: extension ?? null } };
  }

  private findInteractive(phone: string, deadline: AbortSignal): Promise<CrmMatch | null> {
    return this.shared(this.interactive, phone, async () => {
      const results = await this.search.find([phone], { priority: 'interactive', signal: deadline });
      return settle(results.get(phone));
    });
  }

  /** Joins a request already under way for the number, whatever its priority. */
  private findInBackground(phone: string): Promise<CrmMatch | null> {
    const running = this.interactive.get(phone);
    if (running) return running;
    return this.shared(this.backgroundRunning, phone, () => this.background.find(phone));
  }

  private shared(
    running: Map<string, Promise<CrmMatch | null>>,
    phone: string,
    find: () => Promise<CrmMatch | null>,
  ): Promise<CrmMatch | null> {
    const existing = running.get(phone);
    if (existing) return existing;
    const generation = this.generation;
    const request = find().then((match) => {
      // A CRM change since the request started may make its answer stale: answer it, do not cache it.
      if (generation === this.generation) this.cache.set(phone, match);
      return match;
    });
    running.set(phone, request);
    void request
      .catch(() => undefined)
      .finally(() => {
        if (running.get(phone) === request) running.delete(phone);
      });
    return request;
  }

  /** A shared request cut short by an earlier caller's deadline reads as a deadline too. */
  private missedDeadline(error: unknown, deadline: AbortSignal): boolean {
    return deadline.aborted || (error instanceof PortalError && error.code === 'ABORTED');
  }

  private reasonFor(error: unknown, deadline: AbortSignal): string {
    if (this.missedDeadline(error, deadline)) {
      const where = error instanceof PortalError && error.code === 'ABORTED' ? ` (${error.description})` : '';
      return `the portal did not answer within ${this.deadlineMs} ms${where}`;
    }
    if (error instanceof PortalError) return `the portal could not be asked: ${error.message}`;
    return `the lookup failed: ${(error as Error).message}`;
  }

  /** One warning when lookups start failing and one line when they recover, not one per ringing call. */
  private failed(reason: string): void {
    if (this.failing) return;
    this.failing = true;
    this.logger.warn(`lookups are failing (${reason}); answering from the cache or without a match`);
  }

  private recovered(): void {
    if (!this.failing) return;
    this.failing = false;
    this.logger.log('lookups reach the portal again');
  }
}

function settle(result: CrmMatch | null | PortalError | undefined): CrmMatch | null {
  if (result instanceof PortalError) throw result;
  return result ?? null;
}

function toBinding(match: CrmMatch | null): CrmBinding | undefined {
  return match ? { CRM_ENTITY_TYPE: match.entityType, CRM_ENTITY_ID: match.entityId } : undefined;
}

/**
 * `work`, or the signal's reason once it aborts, whichever comes first. The reason waits a tick, so work
 * that honours the signal itself rejects first with its own error (which says where it was).
 */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const abort = () => setImmediate(() => reject(signal.reason));
    signal.addEventListener('abort', abort, { once: true });
    void work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}
