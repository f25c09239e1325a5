import { Logger } from '@nestjs/common';
import { CallEvent } from '../calls/call';
import { CallIntake } from '../intake/call-intake.service';
import { BridgeMetrics } from '../metrics/bridge-metrics';
import { parseCallEvents } from '../pbx/call-event-validation';
import { FollowSink } from './follow-sink';

/** Events waiting for the store at most; past it the oldest are dropped and logged (the store is down). */
const MAX_WAITING = 100_000;
const BATCH = 500;
const MAX_RETRY_MS = 10_000;

/**
 * The follower's way into the durable intake: each event validated and normalised exactly as a posted one,
 * stored in order, a store failure retried with backoff, so nothing is dropped while the process lives.
 */
export class IntakeSink extends FollowSink {
  private readonly logger = new Logger('PbxFollow');
  private waiting: CallEvent[] = [];
  private draining = false;
  private stopped = false;

  constructor(
    private readonly intake: CallIntake,
    private readonly portalId: string,
    private readonly country: () => string | undefined,
    private readonly metrics?: BridgeMetrics,
  ) {
    super();
  }

  submit(events: CallEvent[]): void {
    if (events.length === 0) return;
    for (const event of events) this.metrics?.followedCallEvents.inc({ event: event.event });
    this.waiting.push(...events);
    if (this.waiting.length > MAX_WAITING) {
      const excess = this.waiting.length - MAX_WAITING;
      this.waiting = this.waiting.slice(excess);
      this.logger.error(`${excess} followed call events dropped: the store has not taken events for a while`);
    }
    void this.drain();
  }

  /** Resolves once everything submitted so far is stored (or the sink is stopped). */
  async idle(): Promise<void> {
    while ((this.waiting.length > 0 || this.draining) && !this.stopped) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  stop(): void {
    this.stopped = true;
  }

  /**
   * The follower stopped: stores what it handed over, then stops. At most `maxMs` (the store may be down, and
   * a shutdown must end): what is left then is dropped and logged.
   */
  async close(maxMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise((resolve) => (timer = setTimeout(resolve, maxMs)));
    await Promise.race([this.idle(), late]);
    clearTimeout(timer);
    this.stop();
    if (this.waiting.length === 0) return;
    this.logger.error(`${this.waiting.length} followed call events not stored: the store did not take them`);
    this.waiting = [];
  }

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    let failures = 0;
    try {
      while (this.waiting.length > 0 && !this.stopped) {
        const batch = this.waiting.slice(0, BATCH);
        const valid = batch.flatMap((event) => this.validated(event));
        try {
          if (valid.length > 0) {
            const result = await this.intake.submit(this.portalId, valid);
            this.metrics?.events.inc({ outcome: 'accepted' }, result.accepted);
            this.metrics?.events.inc({ outcome: 'duplicate' }, result.duplicates);
          }
          this.waiting.splice(0, batch.length);
          failures = 0;
        } catch (error) {
          failures++;
          const wait = Math.min(MAX_RETRY_MS, 250 * 2 ** Math.min(failures, 6));
          this.logger.warn(
            `could not store followed call events, retrying in ${wait} ms: ${(error as Error).message}`,
          );
          await new Promise((resolve) => setTimeout(resolve, wait));
        }
      }
    } finally {
      this.draining = false;
    }
  }

  private validated(event: CallEvent): CallEvent[] {
    try {
      return parseCallEvents(event, this.country());
    } catch (error) {
      this.metrics?.events.inc({ outcome: 'rejected' });
      const problems = JSON.stringify(
        (error as { getResponse?: () => unknown }).getResponse?.() ?? String(error),
      );
      this.logger.warn(`followed ${event.event} of call ${event.callId} not stored: ${problems}`);
      return [];
    }
  }
}
