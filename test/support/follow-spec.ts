/**
 * What the trackers' and followers' unit specs share (AMI and the event socket alike). Nothing here imports
 * src/ (the specs beside it import this file): the shapes it needs are written out.
 */

interface CallEventShape {
  event: string;
  extension?: string;
  extensions?: string[];
  status?: string;
}

/** No employee directory: internal numbers are those of at most four digits. */
export const shortNumbers = { isEmployee: () => false, maxDigits: 4 };

/** The port (FollowSink) a follower hands its call events to, kept in memory. */
export class Collected<Event> {
  readonly events: Event[] = [];
  submit(events: Event[]): void {
    this.events.push(...events);
  }
}

export const until = async (check: () => boolean, timeoutMs = 10000) => {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

/** Each call event as [event, extension, extensions, status]. */
export const summary = (events: CallEventShape[]) =>
  events.map((e) => [e.event, e.extension ?? null, e.extensions ?? null, e.status ?? null]);

/**
 * Waits for the calls a double plays, releasing the tracker's held starts every 2 ms as a follower's timer
 * does, then once more after the last.
 */
export async function flushedUntil<Event>(
  done: Promise<unknown>[],
  tracker: { flush(): Event[] },
  events: Event[],
): Promise<void> {
  const flusher = setInterval(() => events.push(...tracker.flush()), 2);
  await Promise.all(done);
  clearInterval(flusher);
  events.push(...tracker.flush());
}
