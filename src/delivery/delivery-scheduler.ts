import { Logger } from '@nestjs/common';
import { BudgetUnit } from '../portal/budget-unit';
import { OperatingSnapshot } from '../portal/operating-time';
import { PortalError } from '../portal/portal-error';
import { CallStore } from '../store/call-store';
import { DeliveryLease, LeaseLostError } from '../store/coordination-store';
import {
  BatchSettings,
  CallRouting,
  DeliveryBatches,
  DeliveryObserver,
  PlannedBatch,
  PortalAnswer,
} from './delivery-batch';
import { PortalTransport } from './portal-transport';
import { RecordingDelivery, RecordingOptions } from './recording-delivery';
import { Transcriber } from '../transcripts/transcriber';
import { TranscriptDelivery, TranscriptObserver } from './transcript-delivery';

export type { CallRouting, DeliveryObserver } from './delivery-batch';

export interface SchedulerSettings extends BatchSettings {
  /**
   * The most batches in flight at once (DELIVERY_MAX_IN_FLIGHT). Within it the loop keeps as many in
   * flight as the portal's answer time needs for the request budget, not latency, to be the limit.
   */
  maxInFlight: number;
  /** How long to wait before trying again a portal that refused the bridge's credentials or rights. */
  pauseMs: number;
  /**
   * With nothing due, how long the loop sleeps before it looks again (default 1 s). New work wakes it at
   * once (intake on this replica, NOTIFY from the others), so this only bounds a missed wake-up; with a
   * thousand portals a replica would otherwise ask the store twice a second per idle portal.
   */
  idleLookMs?: number;
}

/** The delivery lease as the loop uses it (`LeaseKeeper`). */
export interface LeaseHolder {
  start(): void;
  /** The lease while this replica may send. */
  current(): DeliveryLease | undefined;
  /** A fenced write found the lease taken over. */
  lost(lease: DeliveryLease): void;
  stop(): Promise<void>;
}

/** What a scheduler may be given beside its store, transport, settings and lease. */
export interface SchedulerParts {
  /** Told of each command's outcome, each retry and each card shown (metrics). */
  observer?: DeliveryObserver;
  /** The employee and the CRM binding of a call's numbers. */
  routing?: CallRouting;
  /** Recording downloads and uploads; without, recordings are not delivered. */
  recordings?: RecordingOptions;
  /** The deployment's transcriber, when this portal's calls are transcribed (SPEC §12). */
  transcripts?: { transcriber: Transcriber; observer?: TranscriptObserver };
}

/** What the portal's state is, for health details and metrics. */
export interface PortalStatus {
  portalId: string;
  /** Whether this replica holds the portal's delivery lease (only one replica delivers a portal at a time). */
  deliveringHere: boolean;
  paused: boolean;
  pausedReason?: string;
  lastRequestOk?: boolean;
  lastError?: string;
  /** Batches waiting for the portal's answer now, and how many the loop allows at the portal's answer time. */
  batchesInFlight: number;
  inFlightLimit: number;
  /** Each method's server time against the portal's operating limit, as the bridge estimates it. */
  operatingTime: OperatingSnapshot[];
}

/** A look at the queue this recent (ms) when the batch's unit came is what the batch plans from. */
const REUSE_LOOK_MS = 100;

/** While pacing, new work is looked at after at most this long. */
const PACED_RECHECK_MS = 250;

/** What one turn of the loop did: sleep this long, wait for a batch in flight, or start a batch. */
export type LoopTurn =
  | { kind: 'sleep'; ms: number }
  | { kind: 'wait' }
  | { kind: 'stopped' }
  | { kind: 'batch'; batch: Promise<void> };

/**
 * Delivers one portal's due calls: the loop. It decides when (wake and sleep, the lease, batches in
 * flight, pause, the request budget); `DeliveryBatches` decides what and sends it. The loop waits for a
 * budget unit, then hands it to a batch that fills itself with whatever is due at that moment, so a batch
 * is as full as the backlog allows when it leaves. The store is the queue: a crash at any point leaves
 * every step due again, and each step is safe to repeat.
 *
 * Only the replica holding the portal's delivery lease sends; its writes are fenced with the lease, so
 * after a takeover the old holder's late writes are refused (its sends were repeats the portal dedupes).
 */
export class DeliveryScheduler {
  private readonly logger: Logger;
  private readonly batches: DeliveryBatches;
  private readonly inFlight = new Set<string>();
  private readonly running = new Set<Promise<void>>();
  private stopped = false;
  private readonly recordings?: RecordingDelivery;
  private readonly transcripts?: TranscriptDelivery;
  /** Aborted by stop(): the loop's wait for the request budget ends instead of holding shutdown up. */
  private readonly stopping = new AbortController();
  /** The last batch found nothing to send: the loop sleeps instead of asking again at once. */
  private idle = false;
  /** The batch just started took everything due when it read, and no wake-up came since (see `turn`). */
  private drained = false;
  /** Wake-ups so far (`notify`): a look is current while this has not moved since it was made. */
  private wakes = 0;
  private loop?: Promise<void>;
  private wake?: () => void;
  private pausedUntil = 0;
  /** The operating-time limit leaves no room for what is due until then (a batch's answer may make some). */
  private pacedUntil = 0;
  /** How long the portal takes to answer a batch (ms), rising at once and falling slowly; unknown at first. */
  private answerMs?: number;
  private readonly status: Pick<
    PortalStatus,
    'portalId' | 'paused' | 'pausedReason' | 'lastRequestOk' | 'lastError'
  >;

  constructor(
    private readonly store: CallStore,
    private readonly transport: PortalTransport,
    private readonly settings: SchedulerSettings,
    private readonly lease: LeaseHolder,
    parts: SchedulerParts = {},
  ) {
    const { observer, routing, recordings, transcripts } = parts;
    this.logger = new Logger(`Delivery ${transport.portalId}`);
    this.status = { portalId: transport.portalId, paused: false };
    this.recordings =
      recordings && new RecordingDelivery(store, transport.portalId, recordings, () => this.notify());
    this.transcripts =
      transcripts &&
      new TranscriptDelivery(
        store,
        transport.portalId,
        transcripts.transcriber,
        () => this.notify(),
        transcripts.observer,
      );
    this.batches = new DeliveryBatches({
      store,
      transport,
      settings,
      observer,
      routing,
      recordings: this.recordings,
      transcripts: this.transcripts,
    });
  }

  start(): void {
    this.lease.start();
    this.loop ??= this.run();
  }

  /** New work may be due: stop sleeping. */
  notify(): void {
    this.wakes += 1;
    // New work or a freed call: what an empty batch did not find may be there now, so no idle sleep.
    this.idle = false;
    this.drained = false;
    // It may be of a method with operating-time room: looked at within a quarter of a second, not at the
    // end of the pacing (which can be a block of minutes), and no more often while intake keeps waking it.
    this.pacedUntil = Math.min(this.pacedUntil, Date.now() + PACED_RECHECK_MS);
    this.wake?.();
  }

  /** New credentials were stored (an install, an authorisation): end a pause now instead of waiting it out. */
  resume(): void {
    this.pausedUntil = 0;
    this.status.paused = false;
    this.status.pausedReason = undefined;
    this.notify();
  }

  portalStatus(): PortalStatus {
    return {
      ...this.status,
      deliveringHere: this.lease.current() !== undefined,
      batchesInFlight: this.running.size,
      inFlightLimit: this.inFlightLimit(),
      operatingTime: this.transport.operating?.snapshot() ?? [],
    };
  }

  /** Stops taking new batches, waits for the ones in flight to settle, then gives the lease up. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort(new Error('delivery is stopping'));
    // Downloads and uploads in flight end now: another replica (or the next start) takes them up.
    this.recordings?.stop();
    this.transcripts?.stop();
    this.notify();
    await this.loop;
    await Promise.allSettled([...this.running]);
    await this.lease.stop();
  }

  /**
   * One turn of the loop, without its sleep, and the batch it started settled: what `start()` repeats.
   * Specs drive the loop through it instead of through timers.
   */
  async runOnce(): Promise<LoopTurn> {
    const turn = await this.turn();
    if (turn.kind === 'batch') await turn.batch;
    return turn;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        const wakes = this.wakes;
        const turn = await this.turn();
        // A wake-up while the turn awaited the store (new work after its look, or stop()) found no sleep to
        // end: the loop turns again instead of sleeping through it (up to an hour with many portals).
        if (turn.kind === 'sleep' && this.wakes === wakes && !this.stopped) await this.sleep(turn.ms);
      } catch (error) {
        this.logger.error(`delivery loop error: ${(error as Error).message}`);
        await this.sleep(1000);
      }
    }
  }

  private async turn(): Promise<LoopTurn> {
    const now = Date.now();
    // Transfers started under a lease this replica no longer holds (lost, handed over) are aborted.
    this.recordings?.keepOnly(this.lease.current());
    if (now < this.pausedUntil) return { kind: 'sleep', ms: this.pausedUntil - now };
    if (this.running.size >= this.inFlightLimit()) {
      await Promise.race(this.running);
      return { kind: 'wait' };
    }
    // Without this the loop would take a unit, plan nothing and give it back without ever yielding.
    const look = this.settings.idleLookMs ?? 1000;
    if (this.idle) {
      this.idle = false;
      return { kind: 'sleep', ms: look };
    }
    if (now < this.pacedUntil) return { kind: 'sleep', ms: Math.min(1000, this.pacedUntil - now) };
    // Another replica delivers this portal (or none yet): wait to be told the lease is ours.
    if (!this.lease.current()) return { kind: 'sleep', ms: Math.min(1000, look) };
    // A batch in flight just claimed everything due it read, and nothing woke the loop since: its answer will.
    if (this.drained) {
      this.drained = false;
      return { kind: 'sleep', ms: look };
    }
    const portalId = this.transport.portalId;
    // The look reads a whole batch's candidates (less the calls of batches in flight), and the batch plans
    // from them when they are still what its own read would return: one read of the queue per batch.
    const candidates = this.batches.candidates();
    const wakes = this.wakes;
    const looked = await this.store.lookDue(portalId, now, candidates, this.inFlight);
    if (looked.due.length === 0) {
      const dueAt = looked.nextDueAt;
      return { kind: 'sleep', ms: dueAt === undefined || dueAt <= now ? look : Math.min(look, dueAt - now) };
    }
    let unit: BudgetUnit;
    try {
      unit = await this.transport.budget.acquire('background', this.stopping.signal);
    } catch (error) {
      if (this.stopped) return { kind: 'stopped' };
      throw error;
    }
    const lease = this.lease.current();
    if (this.stopped || !lease) {
      unit.giveBack();
      return { kind: this.stopped ? 'stopped' : 'wait' };
    }
    // The look is what the batch's own read would return: it was made just now, or it read every call due
    // (fewer than it asked for) and nothing woke the loop since (new work wakes it; a wait for the unit on
    // a busy replica or database does not change the queue). Otherwise (a look that filled up before a wait
    // at the ceiling, or new work since) the batch reads again, so it leaves as full as the backlog is now.
    const whole = looked.due.length < candidates && this.wakes === wakes;
    const read = whole || Date.now() - now <= REUSE_LOOK_MS ? looked.due : undefined;
    /** The wake-up count when this batch turned out to have taken everything due (see `drained`). */
    let drainedAt: number | undefined;
    let planned!: (plan: PlannedBatch) => void;
    const claimedItsCalls = new Promise<PlannedBatch>((resolve) => (planned = resolve));
    const batch: Promise<void> = this.batches
      .send({
        lease,
        unit,
        claimed: this.inFlight,
        onAnswer: (answer) => this.heard(answer),
        onPlanned: planned,
        looked: read,
      })
      .then(
        // A batch that found nothing to do frees nothing: waking the loop for it would only spin.
        (result) => {
          // Out of the count before the wake-up, so the turn it starts sees a portal with no batch in flight.
          this.running.delete(batch);
          if (result.kind === 'paced') this.pacedUntil = result.until;
          else if (result.kind === 'idle') this.idle = true;
          else {
            // An answer reports the methods' use and frees what was set aside for it: plan again now.
            this.pacedUntil = 0;
            // Unless the batch took every call due when it read, nothing woke the loop since, and it left
            // none of its calls with a step due: a look now would find nothing (one statement a batch).
            if (result.kind === 'worked' && result.settled && drainedAt === this.wakes) return;
            this.notify();
          }
        },
        (error: Error) => {
          this.running.delete(batch);
          if (error instanceof LeaseLostError) this.lease.lost(error.lease);
          else this.logger.error(`delivery batch error: ${error.message}`);
          this.notify();
        },
      );
    // Its handlers above take it out of the count.
    this.running.add(batch);
    // The next unit is taken once this batch has planned: a unit granted while earlier batches still plan
    // would leave late, and the portal would count it closer to the next one than the bucket mirror did.
    const plannedBatch = await Promise.race([claimedItsCalls, batch.then(() => undefined)]);
    // It took every call due when it read and nothing woke the loop since that read: nothing more is due
    // until its answer (which wakes the loop) or new work (which does too), so the next turn need not look.
    if (plannedBatch?.drained && this.wakes === wakes) {
      this.drained = true;
      drainedAt = wakes;
    }
    return { kind: 'batch', batch };
  }

  /**
   * Batches in flight the loop allows now: enough to keep the request budget busy while each takes the
   * portal's answer time (Little's law: rate × answer time, with a quarter and two batches to spare),
   * within `maxInFlight`. Before the first answer the whole `maxInFlight`, so a burst is not wasted.
   */
  inFlightLimit(): number {
    const cap = this.settings.maxInFlight;
    if (this.answerMs === undefined) return cap;
    const rate = this.transport.budget.snapshot().ratePerSec;
    const needed = Math.ceil(((rate * this.answerMs) / 1000) * 1.25) + 2;
    return Math.max(1, Math.min(cap, needed));
  }

  /** What the portal said to a batch: the status health shows, and a pause when it refused the bridge. */
  private heard(answer: PortalAnswer): void {
    if (answer.ok) {
      // Only answers measure the portal: a timeout or a dropped connection says nothing of its speed.
      const ms = answer.elapsedMs;
      this.answerMs = this.answerMs === undefined || ms > this.answerMs ? ms : this.answerMs * 0.8 + ms * 0.2;
      this.status.lastRequestOk = true;
      this.status.lastError = undefined;
      this.status.paused = false;
      this.status.pausedReason = undefined;
      return;
    }
    this.status.lastRequestOk = false;
    this.status.lastError = answer.error.message;
    if (answer.pause) this.pause(answer.error);
  }

  private pause(error: PortalError): void {
    this.pausedUntil = Date.now() + this.settings.pauseMs;
    this.status.paused = true;
    this.status.pausedReason = error.message;
    this.logger.error(
      `portal ${this.transport.portalId} refused the bridge (${error.message}); delivery paused, nothing is dropped. ` +
        `Check the webhook URL and its rights, or re-authorise the application (/oauth/start or reinstall); retrying in ${Math.round(this.settings.pauseMs / 1000)} s`,
    );
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}
