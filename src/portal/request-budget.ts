/**
 * The bridge's copy of the portal's leaky bucket (REAL-PORTAL.md "Rate limit"): the counter rises by one
 * per request and drains `ratePerSec`; a request is sent only when it fits under `burst`. Every request
 * to the portal passes here; interactive ones (lookups for a ringing call) go ahead of background delivery.
 * When the portal answers 503 anyway (another application shares its budget), the bucket is taken as
 * full and the drain rate is halved, then recovers as requests succeed.
 *
 * A little headroom is kept under the portal's bucket size: requests granted in order can arrive out of
 * order or bunched (latency varies), and the portal counts them on arrival.
 */
export type BudgetPriority = 'interactive' | 'background';

interface Waiter {
  resolve: () => void;
  enqueuedAt: number;
}

export interface BudgetSnapshot {
  level: number;
  ratePerSec: number;
  waiting: number;
  waitedMsTotal: number;
}

export class RequestBudget {
  private level = 0;
  private updatedAt: number;
  private slowdown = 1;
  private readonly queues: Record<BudgetPriority, Waiter[]> = { interactive: [], background: [] };
  private timer?: NodeJS.Timeout;
  private waitedMsTotal = 0;
  private readonly capacity: number;

  constructor(
    private readonly ratePerSec: number,
    burst: number,
    private readonly now: () => number = Date.now,
  ) {
    this.updatedAt = this.now();
    this.capacity = Math.max(1, burst - Math.max(1, Math.floor(burst * 0.04)));
  }

  /**
   * Resolves when one request may be sent now; the request is counted at that moment. An aborted `signal`
   * takes the waiter out of the queue without a unit and rejects with the signal's reason.
   */
  acquire(priority: BudgetPriority = 'background', signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { resolve, enqueuedAt: this.now() };
      if (signal) {
        const cancel = () => {
          const queue = this.queues[priority];
          const index = queue.indexOf(waiter);
          if (index < 0) return;
          queue.splice(index, 1);
          reject(signal.reason);
        };
        signal.addEventListener('abort', cancel, { once: true });
        waiter.resolve = () => {
          signal.removeEventListener('abort', cancel);
          resolve();
        };
      }
      this.queues[priority].push(waiter);
      this.pump();
    });
  }

  /** Gives back a unit taken but not used for a request. */
  refund(): void {
    this.drain();
    this.level = Math.max(0, this.level - 1);
  }

  /** The portal said 503 QUERY_LIMIT_EXCEEDED: its bucket is full, and someone else is draining it too. */
  onRejected(): void {
    this.drain();
    this.level = this.capacity;
    this.slowdown = Math.max(0.25, this.slowdown / 2);
  }

  onAccepted(): void {
    this.slowdown = Math.min(1, this.slowdown + 0.02);
  }

  snapshot(): BudgetSnapshot {
    this.drain();
    return {
      level: this.level,
      ratePerSec: this.effectiveRate(),
      waiting: this.queues.interactive.length + this.queues.background.length,
      waitedMsTotal: this.waitedMsTotal,
    };
  }

  /** Releases every waiter (shutdown): they proceed and their requests fail or finish on their own. */
  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const waiter of [...this.queues.interactive, ...this.queues.background]) waiter.resolve();
    this.queues.interactive = [];
    this.queues.background = [];
  }

  private effectiveRate(): number {
    return this.ratePerSec * this.slowdown;
  }

  private drain(): void {
    const now = this.now();
    this.level = Math.max(0, this.level - ((now - this.updatedAt) / 1000) * this.effectiveRate());
    this.updatedAt = now;
  }

  private pump(): void {
    if (this.timer) return;
    this.drain();
    for (;;) {
      const waiter = this.queues.interactive[0] ?? this.queues.background[0];
      if (!waiter) return;
      if (this.level + 1 > this.capacity) {
        const waitMs = Math.ceil(((this.level + 1 - this.capacity) / this.effectiveRate()) * 1000);
        this.timer = setTimeout(() => {
          this.timer = undefined;
          this.pump();
        }, waitMs);
        return;
      }
      (this.queues.interactive.length ? this.queues.interactive : this.queues.background).shift();
      this.level += 1;
      this.waitedMsTotal += this.now() - waiter.enqueuedAt;
      waiter.resolve();
    }
  }
}
