/**
 * Figures that cost a scan (queue depths of every portal), read at most once per `maxAgeMs` however often
 * they are asked for. A reader gets the last figures read at once; when they are older than `maxAgeMs`, one
 * read starts in the background for the readers after it. Only the very first reader waits for a read.
 */
export class BackgroundFigures<T> {
  private last?: { value: T; readAt: number };
  private reading?: Promise<T>;

  constructor(
    private readonly read: () => Promise<T>,
    private readonly maxAgeMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The last figures and when they were read (ms since the epoch). */
  async latest(): Promise<{ value: T; readAt: number }> {
    if (!this.last) {
      await this.refresh();
      return this.last!;
    }
    if (this.now() - this.last.readAt >= this.maxAgeMs) {
      // A failed background read keeps the last figures; the next reader past maxAgeMs tries again.
      this.refresh().catch(() => undefined);
    }
    return this.last;
  }

  private refresh(): Promise<T> {
    this.reading ??= this.read()
      .then((value) => {
        this.last = { value, readAt: this.now() };
        return value;
      })
      .finally(() => {
        this.reading = undefined;
      });
    return this.reading;
  }
}
