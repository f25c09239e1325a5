import { Logger } from '@nestjs/common';
import { ReplicaRegistry } from '../store/coordination-store';

/** How often the live replicas are read: a dead deliverer is noticed within this long. */
const POLL_MS = 150;

/**
 * Single mode's takeover at once (docs/decisions/failover-and-limits.md): every replica of the one portal
 * joins the replica registry under its lease owner id, as multi mode's replicas do, so the lease store
 * hands a dead owner's lease over without waiting for it to expire. This watch reads the live replicas and
 * calls `onGone` when one of them is no longer alive (its liveness lock went with its process or its
 * connection), so the replica's lease keeper asks for the lease now rather than at its next tick.
 */
export class LivenessWatch {
  private readonly logger = new Logger('Replicas');
  private live = new Set<string>();
  private joined = false;
  private running = false;
  private timer?: NodeJS.Timeout;
  private reading?: Promise<void>;
  private lastErrorLoggedAt = 0;

  constructor(
    private readonly registry: ReplicaRegistry,
    private readonly replicaId: string,
    private readonly onGone: (gone: string[]) => void,
    private readonly pollMs = POLL_MS,
  ) {}

  /**
   * Whether this replica may deliver as far as liveness goes: once joined, only while it holds its mark (a
   * replica whose mark is lost counts as dead to the others, which may take its lease at once). Before a
   * first join succeeded (the database refused it), leases run on expiry only, as without a registry.
   */
  mayDeliver(): boolean {
    return !this.joined || this.registry.holdsMark();
  }

  /** Joins the registry (a failure is logged and tried again at the next poll) and starts watching. */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    await this.poll();
  }

  /** Stops watching and gives the mark up: the others see this replica gone at their next look. */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    await this.reading;
    if (this.joined) {
      this.joined = false;
      await this.registry.leave().catch(() => undefined);
    }
  }

  private schedule(): void {
    if (!this.running) return;
    this.timer = setTimeout(() => void this.poll(), this.pollMs);
    this.timer.unref();
  }

  private poll(): Promise<void> {
    this.reading = this.read().finally(() => {
      this.reading = undefined;
      this.schedule();
    });
    return this.reading;
  }

  private async read(): Promise<void> {
    if (!this.running) return;
    try {
      if (!this.joined) {
        await this.registry.join(this.replicaId);
        this.joined = true;
      }
      const live = new Set(await this.registry.liveReplicas());
      const gone = [...this.live].filter((id) => !live.has(id) && id !== this.replicaId);
      this.live = live;
      if (gone.length > 0) this.onGone(gone);
    } catch (error) {
      if (Date.now() - this.lastErrorLoggedAt > 10_000) {
        this.lastErrorLoggedAt = Date.now();
        this.logger.warn(
          `cannot read the live replicas; a dead deliverer's lease is taken when it expires: ${(error as Error).message}`,
        );
      }
    }
  }
}
