interface Counter {
  prefix: string;
  counter: number;
}

/**
 * Channels created and hung up while nobody listened, from gaps in Uniqueid counters (counted at a resync
 * and when the first channel after it appears); a lower bound, 0 across an Asterisk restart.
 */
export class UniqueidGaps {
  /** Highest Uniqueid counter seen (its prefix: what comes before the last dot). */
  private highest?: Counter;
  /** After a resync: channels above this counter not seen yet were created while disconnected. */
  private gapFrom?: Counter;
  private unseenCount = 0;

  get unseen(): number {
    return this.unseenCount;
  }

  /** What a resync compares the live channels with (`settle`). */
  get mark(): Counter | undefined {
    return this.highest;
  }

  note(uniqueid: string): void {
    const parsed = counterOf(uniqueid);
    if (!parsed) return;
    const gap = this.gapFrom;
    if (gap && gap.prefix === parsed.prefix && parsed.counter > gap.counter) {
      this.unseenCount += parsed.counter - gap.counter - 1;
      this.gapFrom = undefined;
    }
    const highest = this.highest;
    if (!highest || highest.prefix !== parsed.prefix || parsed.counter > highest.counter) {
      this.highest = parsed;
    }
  }

  /**
   * After a resync that saw `live`: channels whose counter lies between the highest seen before (`before`)
   * and the highest live now but that were not listed were created and gone meanwhile. -1 when Asterisk
   * restarted (new prefix).
   */
  settle(before: Counter | undefined, live: Set<string | undefined>): number {
    const unseen = this.unseenSince(before, live);
    if (unseen > 0) this.unseenCount += unseen;
    this.gapFrom = unseen >= 0 ? this.highest : undefined;
    return unseen;
  }

  private unseenSince(before: Counter | undefined, live: Set<string | undefined>): number {
    const now = this.highest;
    if (!before || !now) return 0;
    if (before.prefix !== now.prefix) return -1;
    let listed = 0;
    for (const id of live) {
      const parsed = id ? counterOf(id) : undefined;
      if (parsed && parsed.prefix === before.prefix && parsed.counter > before.counter) listed++;
    }
    return Math.max(0, now.counter - before.counter - listed);
  }
}

/** `<systemname->epoch.counter`: the counter restarts with Asterisk, so it only counts within one run. */
function counterOf(uniqueid: string): Counter | undefined {
  const match = /^(.*?)(\d+)\.(\d+)$/.exec(uniqueid);
  if (!match) return undefined;
  return { prefix: match[1], counter: Number(match[3]) };
}
