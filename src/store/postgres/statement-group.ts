import DataLoader from 'dataloader';

/**
 * Many portals' statements of one kind sent as one (DataLoader does the batching): a request made while
 * `inFlight` such statements are already at the database waits for one of them to come back, and goes
 * with every request that came meanwhile, up to `maxSize`. At light load a request leaves at once (with
 * whatever was asked in the same tick); under load each statement carries as many portals as the round
 * trip let gather, so the round trips a second stay bounded while the work per statement grows. At
 * 1 000 portals a replica's delivery loops ask the same three things of the database a hundred times a
 * second each; what a send costs on loopback (the wake-up of the backend) is what limits the replica.
 */
export class StatementGroup<K, V> {
  private readonly loader: DataLoader<K, V>;
  /** Statements at the database, or handed their turn and leaving this tick. */
  private busy = 0;
  /** Batches DataLoader has closed, waiting for a statement to come back. */
  private readonly waiting: (() => void)[] = [];

  constructor(
    run: (keys: readonly K[]) => Promise<(V | Error)[]>,
    private readonly inFlight = 1,
    maxSize = 200,
  ) {
    this.loader = new DataLoader<K, V>(
      async (keys) => {
        try {
          return await run(keys);
        } finally {
          // The turn passes to the batch that waited longest, or is given back.
          const next = this.waiting.shift();
          if (next) next();
          else this.busy -= 1;
        }
      },
      {
        cache: false,
        maxBatchSize: maxSize,
        batchScheduleFn: (dispatch) => {
          // Closed after the requests of this tick joined it (its first one is pushed after this call).
          if (this.busy < this.inFlight) {
            this.busy += 1;
            process.nextTick(dispatch);
          } else this.waiting.push(dispatch);
        },
      },
    );
  }

  /** Sends `key` with the next statement, and resolves or rejects with its own part of the answer. */
  run(key: K): Promise<V> {
    return this.loader.load(key);
  }
}

/**
 * `items` cut, in order, into runs in which no key repeats (a run ends before the item that would name a
 * key again): what one statement may carry when two requests of a group must not meet in it (the same
 * portal's bucket or intake, the same call's write), each later run seeing what the one before wrote.
 */
export function runsWithoutRepeats<T>(items: readonly T[], keysOf: (item: T) => readonly string[]): T[][] {
  const runs: T[][] = [];
  let run: T[] = [];
  const named = new Set<string>();
  for (const item of items) {
    const keys = keysOf(item);
    if (keys.some((key) => named.has(key))) {
      runs.push(run);
      run = [];
      named.clear();
    }
    for (const key of keys) named.add(key);
    run.push(item);
  }
  if (run.length > 0) runs.push(run);
  return runs;
}
