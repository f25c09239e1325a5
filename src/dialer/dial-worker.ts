import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Logger } from '@nestjs/common';
import { CallEvent } from '../calls/call';
import { EgressPolicy, EgressRefused } from '../common/egress';
import { ClickBus, PortalClick } from '../clicks/click';
import { DialSettings } from '../config/settings';
import { CrmLookupService } from '../crm/crm-lookup.service';
import { EmployeeDirectory } from '../crm/employee-directory';
import { CallIntake } from '../intake/call-intake.service';
import { BridgeMetrics } from '../metrics/bridge-metrics';
import { DialChange, DialRequest, DialState, DialStore } from '../store/dial-store';
import { clickLine, DialError, Dialer, DialRefused, portalCallIdProblem } from './dialer';
import { createDialer } from './dialer-factory';

/** How long a claimed request is this replica's before another may take it (far above one originate). */
const CLAIM_MS = 15_000;
/** While the employee is looked up, the claim is renewed this often: a slow lookup never lets it lapse. */
const RENEW_MS = 5_000;
/**
 * How long a `sending` request is left to its originate (each of its steps may take DialSettings' timeout)
 * before it is taken as sent: then it is never dialled again, so this only has to outlast one originate.
 */
const SENDING_MS = 60_000;
/** Retries while the PBX cannot be reached: the employee is waiting, so never more than this apart. */
const MAX_RETRY_MS = 2000;
const FIRST_RETRY_MS = 500;
/** Without news, the store is looked at this often (another replica's clicks, retries). */
const IDLE_POLL_MS = 1000;
/** How long a request waits for the employee directory's first copy before that counts as a failure. */
const DIRECTORY_WAIT_MS = 2000;

/** The PBX's state as the last originate found it, for health. */
export type DialerStatus = {
  mode: string | null;
  target: string | null;
  pbxReachable: boolean | null;
  lastError: string | null;
  lastAttemptAt: string | null;
};

/** Why a request cannot be dialled at all: the portal's call is finished as failed at once. */
class Undiallable extends Error {}

/** Another replica claimed the request while this one worked it: this one leaves it alone. */
class ClaimLost extends Error {}

/** What a portal's dial worker is built from. */
export interface DialWorkerDeps {
  bus: ClickBus;
  store: DialStore;
  settings: DialSettings;
  intake: CallIntake;
  directory: EmployeeDirectory;
  lookup: CrmLookupService;
  metrics: BridgeMetrics;
  portalId: string;
  /**
   * What the PBX connection may reach: single mode's policy (unrestricted: the operator's own settings);
   * a portal runtime passes the deployment's tenant rule.
   */
  egress: EgressPolicy;
  /** The PBX connection; by default the one DIAL_MODE names (dialer-factory.ts). */
  dialer?: Dialer;
}

/**
 * Click-to-call (the API contract (docs/API.md), docs/decisions/click-to-call.md). Subscribed to the ClickBus when
 * DIAL_MODE is set: a click is only stored (`dial_requests`, idempotent by CALL_ID), then a background loop
 * claims due requests, finds the employee's extension, asks the PBX, and retries while the PBX cannot be
 * reached until the click's deadline; past it the portal's call is finished as failed through intake.
 *
 * At most once: a claim carries a fencing token and every change names it, so only the current claimant
 * moves a request (docs/decisions/dialer-fencing.md); the request is marked `sending` before the originate,
 * and a request found `sending` after its claim ran out (the bridge died during the originate) is taken as
 * sent, never dialled again. A CALL_ID not of the portal's shape is refused, never sent anywhere.
 */
export class DialWorker {
  private readonly logger = new Logger('Dialer');
  /** This worker's name in the claims it takes. */
  private readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  readonly dialer?: Dialer;
  private readonly portals = new Set<string>();
  /**
   * Without news, the store is looked at this often; undefined (many portals): never on its own, the
   * registry's shared look at every portal's due work wakes it (`wake()`), as do its clicks and its retries.
   */
  idlePollMs: number | undefined = IDLE_POLL_MS;
  private running = false;
  private loop?: Promise<void>;
  private wake?: () => void;
  private woken = false;
  private status: Omit<DialerStatus, 'mode' | 'target'> = {
    pbxReachable: null,
    lastError: null,
    lastAttemptAt: null,
  };

  private readonly bus: ClickBus;
  private readonly store: DialStore;
  private readonly settings: DialSettings;
  private readonly intake: CallIntake;
  private readonly directory: EmployeeDirectory;
  private readonly lookup: CrmLookupService;
  private readonly metrics: BridgeMetrics;

  constructor(deps: DialWorkerDeps) {
    ({
      bus: this.bus,
      store: this.store,
      settings: this.settings,
      intake: this.intake,
      directory: this.directory,
      lookup: this.lookup,
      metrics: this.metrics,
    } = deps);
    this.dialer = deps.dialer ?? createDialer(deps.settings, deps.egress);
    this.portals.add(deps.portalId);
  }

  /** Subscribes to the ClickBus (with DIAL_MODE set): clicks are stored from now on. */
  open(): void {
    if (this.dialer) this.bus.subscribe('dialer', (click) => this.accept(click));
  }

  /** The loop that works the stored requests starts. */
  start(): void {
    if (!this.dialer) return;
    this.running = true;
    this.loop = this.run();
  }

  /** The loop ends after the request it works. */
  async close(): Promise<void> {
    this.running = false;
    this.poke();
    await this.loop;
  }

  /** Health: DIAL_MODE, the PBX (no credentials), and whether it was reachable last time. */
  get dialerStatus(): DialerStatus | undefined {
    if (!this.dialer || !this.settings.mode) return undefined;
    return { mode: this.settings.mode, target: this.dialer.target, ...this.status };
  }

  /** The ClickBus handler: stores the request (fast, idempotent by CALL_ID) and wakes the loop. */
  async accept(click: PortalClick): Promise<void> {
    this.portals.add(click.portalId);
    await this.store.add({
      portalId: click.portalId,
      portalCallId: click.portalCallId,
      kind: click.kind,
      userId: click.userId,
      phoneNumber: click.phoneNumber,
      crmEntityType: click.crmEntityType,
      crmEntityId: click.crmEntityId,
      lineNumber: click.lineNumber,
      clickedAt: click.clickedAt,
      deadline: click.clickedAt + this.settings.timeoutMs,
    });
    this.poke();
  }

  /** Work may be due (the registry's shared look found some): one pass now. */
  wakeUp(): void {
    if (this.running) this.poke();
  }

  private poke(): void {
    this.woken = true;
    this.wake?.();
  }

  private async run(): Promise<void> {
    while (this.running) {
      this.woken = false;
      let nextDue = this.idlePollMs === undefined ? Infinity : Date.now() + this.idlePollMs;
      for (const portalId of this.portals) {
        try {
          const claimed = await this.store.claim(portalId, this.owner, CLAIM_MS, 20);
          await Promise.all(
            claimed.map((request) =>
              this.work(request).catch((error: Error) =>
                this.logger.error(`dial request ${request.portalCallId}: ${error.message}`),
              ),
            ),
          );
          const due = await this.store.nextDueAt(portalId);
          if (due !== undefined) nextDue = Math.min(nextDue, due);
        } catch (error) {
          this.logger.error(`dial requests of ${portalId}: ${(error as Error).message}`);
        }
      }
      if (!this.running || this.woken) continue;
      const waitMs = Math.max(20, nextDue - Date.now());
      await new Promise<void>((resolve) => {
        // Nothing due and no idle look: asleep until woken (a click, the registry's shared look, shutdown).
        const timer = Number.isFinite(waitMs) ? setTimeout(resolve, waitMs) : undefined;
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  private async work(request: DialRequest): Promise<void> {
    const { portalCallId } = request;
    const shapeProblem = portalCallIdProblem(portalCallId);
    if (shapeProblem) {
      await this.refuse(request, shapeProblem);
      return;
    }
    if (Date.now() >= request.deadline) {
      await this.fail(request, request.lastError ?? 'not dialled within DIAL_TIMEOUT_SEC', 'pending');
      return;
    }
    let employee: { userId: number; extension: string };
    try {
      employee = await this.holdingClaim(request, () => this.employeeOf(request));
    } catch (error) {
      if (error instanceof ClaimLost) return this.lost(request, 'while its employee was looked up');
      if (error instanceof Undiallable) return this.fail(request, error.message, 'pending');
      return this.retry(request, error, 'pending');
    }
    const { userId, extension } = employee;
    // The decision to dial, under the claim: only one claimant ever moves a request to `sending`.
    const sending = await this.change(request, ['pending'], {
      state: 'sending',
      dueInMs: SENDING_MS,
      userId,
      extension,
    });
    if (!sending) return this.lost(request, 'before the originate');
    try {
      await this.dialer!.originate({
        extension,
        number: request.phoneNumber,
        crmCallId: portalCallId,
        userId,
        line: clickLine(request.lineNumber, (problem) =>
          this.logger.warn(`dial request ${portalCallId}: ${problem}`),
        ),
      });
    } catch (error) {
      if (error instanceof DialRefused) return this.fail(request, error.message, 'sending');
      if (error instanceof EgressRefused) {
        // The deployment's rule refuses the PBX's address (SPEC §8): no retry would change that, so the
        // click fails now, its reason naming the setting, the host and the rule (never a credential).
        this.status = {
          pbxReachable: false,
          lastError: error.message,
          lastAttemptAt: new Date().toISOString(),
        };
        return this.fail(request, error.message, 'sending');
      }
      return this.retry(request, error, 'sending');
    }
    const now = Date.now();
    this.status = { pbxReachable: true, lastError: null, lastAttemptAt: new Date(now).toISOString() };
    this.metrics.dials.inc({ mode: this.settings.mode, outcome: 'sent' });
    this.metrics.clickToOriginate.observe(
      { mode: this.settings.mode },
      Math.max(0, (now - request.clickedAt) / 1000),
    );
    this.logger.log(`dialled ${portalCallId}: extension ${extension}, attempt ${request.attempts + 1}`);
    // The PBX took it: whatever happens now, it is never dialled again. A store failure here leaves the
    // request `sending`, which the next claim after the lease settles as sent.
    await this.change(request, ['sending'], { state: 'sent', attempts: request.attempts + 1 }).catch(
      (error: Error) => this.logger.error(`dial request ${portalCallId}: marking it sent: ${error.message}`),
    );
  }

  /** A change made under the request's claim; false when another replica has claimed it since. */
  private change(request: DialRequest, from: DialState[], change: DialChange): Promise<boolean> {
    return this.store.update(request.portalId, request.portalCallId, { claim: request.claim!, from, change });
  }

  /**
   * Runs `task` (the employee's lookup, which may wait on the portal) while renewing the request's claim every
   * RENEW_MS, so a slow lookup never lets the claim lapse; rejects with ClaimLost when a renewal finds the
   * request claimed by another replica meanwhile.
   */
  private async holdingClaim<T>(request: DialRequest, task: () => Promise<T>): Promise<T> {
    let lost = false;
    const timer = setInterval(() => {
      this.change(request, ['pending'], { dueInMs: CLAIM_MS }).then(
        (held) => (lost ||= !held),
        // A store error: the fenced change to `sending` decides in the end.
        (error: Error) => this.logger.warn(`renewing the claim on ${request.portalCallId}: ${error.message}`),
      );
    }, RENEW_MS);
    try {
      const result = await task();
      if (lost) throw new ClaimLost();
      return result;
    } finally {
      clearInterval(timer);
    }
  }

  private lost(request: DialRequest, when: string): void {
    this.logger.warn(`dial request ${request.portalCallId}: another replica claimed it ${when}; left to it`);
  }

  /** The employee to ring: the clicking user, or for a callback the client's responsible (else the default). */
  private async employeeOf(request: DialRequest): Promise<{ userId: number; extension: string }> {
    let userId = request.userId;
    if (userId === undefined && request.kind === 'callback') {
      // The record the callback form named decides; the number's owner only when it names none (or is gone):
      // a known client's number may sit on another employee's record than the form's new lead.
      if (request.crmEntityType && request.crmEntityId !== undefined) {
        userId = await this.lookup.responsibleOf(request.crmEntityType, request.crmEntityId);
      }
      const client = userId === undefined ? await this.lookup.clientFor(request.phoneNumber) : undefined;
      userId ??= client?.responsibleUserId ?? this.settings.defaultUserId;
      if (userId === undefined) {
        throw new Undiallable('no responsible employee for the callback and no B24_DEFAULT_USER_ID');
      }
    }
    if (userId === undefined) throw new Undiallable('the click names no employee (USER_ID)');
    if (!this.directory.loaded) {
      this.directory.loadNow();
      await Promise.race([
        this.directory.whenLoaded(),
        new Promise((resolve) => setTimeout(resolve, DIRECTORY_WAIT_MS)),
      ]);
      if (!this.directory.loaded) {
        throw new Error('the employee directory has not been read from the portal yet');
      }
    }
    const extension = this.directory.extensionOf(userId);
    if (!extension) {
      throw new Undiallable(`employee ${userId} has no internal number (UF_PHONE_INNER) or is inactive`);
    }
    return { userId, extension };
  }

  /** The PBX (or the portal, for a callback's responsible) could not be asked: again soon, until the deadline. */
  private async retry(request: DialRequest, error: unknown, from: DialState): Promise<void> {
    const now = Date.now();
    const reason = error instanceof Error ? error.message : String(error);
    const attempts = request.attempts + 1;
    if (error instanceof DialError) {
      this.status = { pbxReachable: false, lastError: reason, lastAttemptAt: new Date(now).toISOString() };
    }
    const delay = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.min(request.attempts, 4));
    const dueInMs = Math.max(0, Math.min(delay, request.deadline - now));
    this.logger.warn(`dial request ${request.portalCallId}, attempt ${attempts}: ${reason}`);
    try {
      // Fenced and only from the state this claim left it in: a late failure never resets a request another
      // replica has since claimed, sent or failed.
      const back = await this.change(request, [from], {
        state: 'pending',
        attempts,
        lastError: reason,
        dueInMs,
      });
      if (!back) return this.lost(request, 'before its failure was stored');
      this.metrics.dials.inc({ mode: this.settings.mode, outcome: 'retried' });
    } catch (failure) {
      this.logger.error(`dial request ${request.portalCallId}: ${(failure as Error).message}`);
    }
  }

  /**
   * A CALL_ID that is not of the portal's shape: never sent to the PBX, nor back to the portal (it names no
   * call the portal made); the request is failed with the reason.
   */
  private async refuse(request: DialRequest, reason: string): Promise<void> {
    if (!(await this.change(request, ['pending'], { state: 'failed', lastError: reason }))) {
      return this.lost(request, 'before it was refused');
    }
    this.metrics.dials.inc({ mode: this.settings.mode, outcome: 'failed' });
    this.logger.warn(`dial request refused: ${reason}`);
  }

  /**
   * Finishes the portal's call as failed through intake: a synthetic PBX call `dial-<CALL_ID>` whose events
   * carry `crmCallId`, so that CALL_ID is finished and nothing is registered. Stored before the request is
   * marked failed; a crash between them submits the same events again, which intake takes as duplicates.
   */
  private async fail(request: DialRequest, reason: string, from: DialState): Promise<void> {
    // Still ours? Checked (and the claim renewed) before the portal's call is finished as failed.
    if (!(await this.change(request, [from], { dueInMs: CLAIM_MS }))) {
      return this.lost(request, 'before it was failed');
    }
    const callId = `dial-${request.portalCallId}`;
    const common = {
      callId,
      direction: 'outbound' as const,
      phoneNumber: request.phoneNumber,
      extension: request.extension,
      userId: request.userId,
      crmCallId: request.portalCallId,
    };
    const events: CallEvent[] = [
      { ...common, event: 'call.started', at: new Date(request.clickedAt).toISOString() },
      {
        ...common,
        event: 'call.ended',
        at: new Date().toISOString(),
        startedAt: new Date(request.clickedAt).toISOString(),
        durationSec: 0,
        status: 'failed',
        failedReason: reason,
      },
    ];
    await this.intake.submit(request.portalId, events);
    if (!(await this.change(request, [from], { state: 'failed', lastError: reason }))) {
      return this.lost(request, 'while it was failed');
    }
    this.metrics.dials.inc({ mode: this.settings.mode, outcome: 'failed' });
    this.logger.warn(`dial request ${request.portalCallId} failed: ${reason}`);
  }
}
