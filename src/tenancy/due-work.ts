import { Logger } from '@nestjs/common';
import { CallStore, DueWorkOf } from '../store/call-store';

/** How often a replica asks the store which portals have work due: a sleeping worker waits at most this. */
export const DUE_LOOK_MS = 1000;
/** At most this many portals per look (more are busy portals, whose loops run on their own anyway). */
const DUE_LIMIT = 10_000;

/**
 * The one shared wake-up path of a replica's portals (docs/decisions/tenancy.md): instead of a loop per
 * portal per worker kind looking at the store (delivery, dialer, events), one timer asks the store once a
 * second which portals have work due (`CallStore.portalsWithDueWork`: calls, dial requests, portal events)
 * and hands the list on. Intake on this replica, NOTIFY from another and clicks wake a portal at once; this
 * finds what those do not announce: retries come due, work another replica took in without NOTIFY (SQLite
 * has one process), a claim run out.
 */
export class DueWork {
  private readonly logger = new Logger('Portals');
  private timer?: NodeJS.Timeout;
  private looking?: Promise<void>;
  private failing = false;

  constructor(
    private readonly calls: CallStore,
    private readonly found: (due: DueWorkOf[]) => void | Promise<void>,
    private readonly periodMs = DUE_LOOK_MS,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.look(), this.periodMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.looking;
  }

  /** One look now (a look under way is not doubled). */
  look(): Promise<void> {
    this.looking ??= this.lookOnce().finally(() => (this.looking = undefined));
    return this.looking;
  }

  private async lookOnce(): Promise<void> {
    try {
      const due = await this.calls.portalsWithDueWork(Date.now(), DUE_LIMIT);
      if (this.failing) this.logger.log('the look at due work reads the store again');
      this.failing = false;
      if (due.length > 0) await this.found(due);
    } catch (error) {
      // Once per outage: the next look tries again in a second.
      if (!this.failing) this.logger.warn(`cannot look for due work: ${(error as Error).message}`);
      this.failing = true;
    }
  }
}
