/**
 * The portal's second limit (how real portals behave "Errors"): the server time each method uses is summed over a
 * sliding window (10 minutes); a method over the limit (480 s) is blocked, HTTP 429 `OPERATION_TIME_LIMIT`,
 * until `time.operating_reset_at`. Every answer says how much its method has used (`time.operating`; inside
 * a batch, `result_time[label].operating` for each command's own method; a batch's own `time.operating` is
 * the method `batch`'s, which a portal that charges batches whole counts and blocks).
 *
 * The portal keeps each method's use in buckets, one per tenth of the window on its clock: a bucket opens
 * with the first use in its tenth and leaves whole one window after that use, at the whole second (rounded
 * down); `operating_reset_at` is when the oldest live one leaves. This mirrors those buckets from the
 * portal's own figures: each figure, taken when its command ran (portal clock), is the truth at that
 * moment; what it adds over the mirror went into the bucket of that moment's tenth (opened then if the
 * mirror had none), what it lacks left the oldest buckets first, and the reset it names is when the oldest
 * leaves (a mirrored bucket said to leave earlier leaves then; the oldest one of the reset's tenth leaves
 * then, its first use having come before the mirror saw it). So the estimate is always the portal's last
 * count, less the buckets that have left since, plus what requests in flight are expected to cost; it frees
 * time when the portal does, and never on the bridge's own charges alone (other applications, or a portal
 * whose books differ from what its answers say, are in the figures). Once the portal's named reset has
 * passed without a newer figure, a small request may go to ask: the bridge never waits past
 * `operating_reset_at` on an estimate.
 */

export interface OperatingSettings {
  /** The portal's window, 600 000 ms on real portals (B24_OPERATING_WINDOW_SEC). */
  windowMs: number;
  /** Server seconds per method per window before the portal blocks it, 480 (B24_OPERATING_LIMIT_SEC). */
  limitSec: number;
  /** The share of the limit the bridge keeps to; the rest absorbs other applications and estimate error. */
  targetShare?: number;
  /**
   * Server seconds a command is assumed to take until the portal has answered one of its method: the most
   * it can take without its request timing out (B24_TIMEOUT_MS over B24_BATCH_SIZE). Unset: not limited
   * until measured.
   */
  assumedCostSec?: number;
}

/** What one answer said about one method. Times are the portal's clock (ms epoch) unless said otherwise. */
export interface OperatingReport {
  /** `operating`: seconds the method has used in the window, as the portal counts (all applications). */
  usedSec?: number;
  /** `operating_reset_at`: when the oldest of the method's use leaves the window. */
  resetAtMs?: number;
  /** When the portal took the figure: the command's `finish`. Unknown: now. */
  figureAtMs?: number;
  /** The server time of the report's commands (`duration`/`processing`), when the answer says. */
  costSec?: number;
  /** How many commands `costSec` covers (default 1). */
  commands?: number;
}

/** Seconds set aside for commands in flight; given back with `release` once they are answered. */
export interface OperatingReservation {
  readonly seconds: ReadonlyMap<string, number>;
  readonly commands: ReadonlyMap<string, number>;
}

export interface OperatingSnapshot {
  method: string;
  usedSec: number;
  limitSec: number;
  blockedUntil?: number;
}

/** One of the portal's buckets as mirrored: a tenth's use, and when it leaves the window (portal ms). */
interface Bucket {
  /** The tenth of the window (on the portal's clock) whose use it holds. */
  tenth: number;
  leavesAt: number;
  sec: number;
}

interface MethodUse {
  /** The mirror of the portal's live buckets, oldest first. */
  buckets: Bucket[];
  /** When the portal took the last figure accepted (portal ms); older figures are stale. */
  figureAt: number;
  /** The portal's last `operating_reset_at` (portal ms). */
  resetAt?: number;
  reservedSec: number;
  /** Commands in flight (whatever their cost was taken to be). */
  reservedCommands: number;
  /** The portal has counted use of the method (a figure above zero): it charges it. */
  counted: boolean;
  /** Server seconds one command of this method takes (moving average); undefined until answered once. */
  costSec?: number;
  /** Refused by the portal: no command goes before this (local ms). */
  blockedUntil: number;
  /** When the last refusal came (portal ms): until a newer figure, only a small request goes. */
  refusedAt: number;
}

/** The default share of the limit kept to: 97 %, so the bridge runs within 3 % of what the limit allows. */
export const DEFAULT_TARGET_SHARE = 0.97;

/** The portal's window is cut in this many tenths, each one's use leaving whole. */
const TENTHS_PER_WINDOW = 10;

/** After a moment the portal named, act this much later (timers, rounding of the portal's figures). */
const GUARD_MS = 25;

/** A refusal is expected from this share of the limit on; below it the portal's count disagrees with it. */
const NEAR_LIMIT = 0.9;

/** A refusal the portal's count does not explain (and that names no reset) holds the method this long at most. */
const UNEXPLAINED_BLOCK_MS = 10_000;

/** The least wait the loop is given, so a plan never spins on a moment just passed. */
const MIN_WAIT_MS = 50;

export class OperatingTime {
  private readonly methods = new Map<string, MethodUse>();
  private readonly targetSec: number;
  private readonly sliceMs: number;
  /**
   * The portal's clock less the bridge's (ms), kept at the largest value the answers prove (`finish` came
   * before the answer did), so a moment the portal names is never taken as passed before it has.
   */
  private offsetMs?: number;

  constructor(
    private readonly settings: OperatingSettings,
    private readonly now: () => number = Date.now,
  ) {
    this.targetSec = settings.limitSec * (settings.targetShare ?? DEFAULT_TARGET_SHARE);
    this.sliceMs = settings.windowMs / TENTHS_PER_WINDOW;
  }

  /**
   * An answer's own `time` against when its request was sent and its answer came (bridge clock): the
   * portal's clock is at least `finish` when the answer arrives, and at most `start` when it was sent.
   */
  observeClock(sentAt: number, receivedAt: number, startMs?: number, finishMs?: number): void {
    if (finishMs === undefined || !Number.isFinite(finishMs)) return;
    const lower = finishMs - receivedAt;
    const upper = startMs !== undefined && Number.isFinite(startMs) ? startMs - sentAt : Infinity;
    this.offsetMs = Math.min(Math.max(this.offsetMs ?? lower, lower), Math.max(lower, upper));
  }

  /** What an answer said of `method`: a newer figure of the portal's count is the truth; the cost is learnt. */
  observe(method: string, report: OperatingReport): void {
    const use = this.use(method);
    if (report.costSec !== undefined && report.costSec >= 0) {
      const perCommand = report.costSec / Math.max(1, report.commands ?? 1);
      use.costSec = use.costSec === undefined ? perCommand : use.costSec * 0.7 + perCommand * 0.3;
    }
    if (report.usedSec !== undefined && report.usedSec >= 0) {
      this.takeFigure(use, report.usedSec, report.figureAtMs ?? this.portalNow(), report.resetAtMs);
    } else if (report.costSec && use.figureAt === -Infinity) {
      // A portal that does not report: the bridge's own charges are the mirror.
      this.add(use, this.portalNow(), report.costSec);
    }
  }

  /** Whether the portal has counted any use of `method` (a portal that never charges `batch` has not). */
  counted(method: string): boolean {
    return this.find(method)?.counted ?? false;
  }

  /**
   * The portal refused the method for its operating time; it unblocks it at `untilMs` (portal clock). Not
   * said (a command refused inside a batch): if the portal's count was near the limit, at the reset it last
   * named, or else when its oldest mirrored bucket leaves (the first moment anything can be freed); if its
   * count had room (the refusal disagrees with it), a short while at most, then a small request asks again.
   */
  blocked(method: string, untilMs?: number): void {
    const use = this.use(method);
    const portalNow = this.portalNow();
    const nextBucket = this.nextLeaving(use, portalNow) ?? portalNow + this.sliceMs;
    let until = untilMs !== undefined && untilMs > portalNow ? untilMs : undefined;
    if (until === undefined && this.mirrored(use, portalNow) < this.settings.limitSec * NEAR_LIMIT) {
      until = Math.min(nextBucket, portalNow + UNEXPLAINED_BLOCK_MS);
    }
    if (until === undefined && use.resetAt !== undefined && use.resetAt > portalNow) until = use.resetAt;
    until ??= nextBucket;
    use.blockedUntil = Math.max(use.blockedUntil, this.toLocal(until) + GUARD_MS);
    use.refusedAt = portalNow;
  }

  /** When the method may be called again, if it is blocked now. */
  blockedUntil(method: string): number | undefined {
    const until = this.find(method)?.blockedUntil ?? 0;
    return until > this.now() ? until : undefined;
  }

  /** The method's use now as the bridge estimates it: the mirrored count plus what is in flight. */
  usedSec(method: string): number {
    const use = this.find(method);
    return use ? this.mirrored(use, this.portalNow()) + use.reservedSec : 0;
  }

  /**
   * How many commands of `method` may go now under the target. Fewer than `minUseful` counts as none, so a
   * method at its limit goes in requests worth sending rather than a command at a time. Until the method's
   * cost is measured it is taken as `assumedCostSec`, and one request may always go while none of the
   * method is in flight, to measure it; `Infinity` when nothing bounds it. With no room on the estimate, an
   * ask goes once the portal's named reset has passed with no figure since (the portal answers what its
   * count is, and the next plan uses it): `minUseful` commands at most, fewer if the estimate leaves less
   * under the limit itself; after a refusal, no more than `minUseful` until a figure shows the count again.
   */
  allowance(method: string, minUseful = 1): number {
    const use = this.find(method);
    const now = this.now();
    if (use && use.blockedUntil > now) return 0;
    const cost = use?.costSec || this.settings.assumedCostSec;
    if (!cost) return Infinity;
    const used = use ? this.mirrored(use, this.portalNow()) + use.reservedSec : 0;
    const commands = Math.floor((this.targetSec - used) / cost + 1e-9);
    const probing = use !== undefined && use.refusedAt > -Infinity && use.refusedAt >= use.figureAt;
    // A limit too small for minUseful commands at all: fewer are still worth sending.
    if (commands >= Math.min(minUseful, Math.floor(this.targetSec / cost))) {
      return probing ? Math.min(commands, minUseful) : Math.max(0, commands);
    }
    if (!use?.costSec && !use?.reservedCommands) return Infinity;
    return this.mayAsk(use) ? this.askSize(used, cost, minUseful) : 0;
  }

  /**
   * How many commands an ask sends: `minUseful`, but no more than the estimate leaves under the portal's
   * limit itself (the target's margin is what an ask may use), and at least one. A mirror that is right
   * is then never refused: the reset the portal named may free less than `minUseful` commands' worth.
   */
  private askSize(used: number, cost: number, minUseful: number): number {
    const underLimit = Math.floor((this.settings.limitSec - used) / cost);
    return Math.max(1, Math.min(minUseful, underLimit));
  }

  /** Sets aside the expected cost of commands about to be sent, by method. */
  reserve(commands: ReadonlyMap<string, number>): OperatingReservation {
    const seconds = new Map<string, number>();
    for (const [method, count] of commands) {
      const use = this.use(method);
      const sec = count * (use.costSec || this.settings.assumedCostSec || 0);
      use.reservedSec += sec;
      use.reservedCommands += count;
      seconds.set(method, sec);
    }
    return { seconds, commands: new Map(commands) };
  }

  release(reservation: OperatingReservation): void {
    for (const [method, sec] of reservation.seconds) {
      const use = this.find(method);
      if (!use) continue;
      use.reservedSec = Math.max(0, use.reservedSec - sec);
      use.reservedCommands = Math.max(0, use.reservedCommands - (reservation.commands.get(method) ?? 0));
    }
  }

  /**
   * When `minUseful` commands of a method without allowance may go (bridge clock): its block's end, the
   * moment enough of the mirrored buckets have left the window (each at its own time), or the portal's
   * named reset when no figure has come since (then a request asks). Undefined when an answer in flight
   * will tell (it wakes the loop).
   */
  nextRoomAt(method: string, minUseful = 1): number | undefined {
    const use = this.find(method);
    if (!use) return undefined;
    const now = this.now();
    if (use.blockedUntil > now) return use.blockedUntil;
    // Not measured yet: the answer of the request in flight tells (and wakes the loop).
    if (!use.costSec) return undefined;
    const portalNow = this.portalNow();
    let excess = this.mirrored(use, portalNow) + use.reservedSec + minUseful * use.costSec - this.targetSec;
    if (excess <= 0) return now;
    let at: number | undefined;
    for (const bucket of this.live(use, portalNow)) {
      excess -= bucket.sec;
      if (excess <= 0) {
        at = this.toLocal(bucket.leavesAt) + GUARD_MS;
        break;
      }
    }
    const askAt = this.askAt(use);
    if (askAt !== undefined) at = Math.min(at ?? Infinity, askAt);
    if (at === undefined && use.reservedCommands > 0) return undefined;
    at ??= this.toLocal(this.nextLeaving(use, portalNow) ?? portalNow + this.sliceMs) + GUARD_MS;
    return Math.max(at, now + MIN_WAIT_MS);
  }

  snapshot(): OperatingSnapshot[] {
    const now = this.now();
    const portalNow = this.portalNow();
    return [...this.methods.entries()].map(([method, use]) => ({
      method,
      usedSec: this.mirrored(use, portalNow) + use.reservedSec,
      limitSec: this.settings.limitSec,
      ...(use.blockedUntil > now ? { blockedUntil: use.blockedUntil } : {}),
    }));
  }

  /**
   * A figure newer than the last: what it adds over the mirror at its moment went into that moment's tenth's
   * bucket (opened then, if the mirror has none: its first use came by then); what it lacks has left, taken
   * from the oldest buckets. The reset it names is when the portal's oldest live bucket leaves: mirrored
   * buckets said to leave before it leave then, and when the mirror's oldest leaves later, the oldest one
   * of the reset's tenth (its first use came before the mirror saw it) leaves then.
   */
  private takeFigure(use: MethodUse, usedSec: number, at: number, resetAt?: number): void {
    if (at < use.figureAt) return;
    use.buckets = this.live(use, at);
    if (resetAt !== undefined && resetAt > at && usedSec > 0) this.placeReset(use, resetAt);
    let rise = usedSec - this.mirrored(use, at);
    if (rise > 0) this.add(use, at, rise);
    for (const bucket of use.buckets) {
      if (rise >= 0) break;
      const taken = Math.min(bucket.sec, -rise);
      bucket.sec -= taken;
      rise += taken;
    }
    use.buckets = use.buckets.filter((bucket) => bucket.sec > 0);
    use.figureAt = at;
    if (usedSec > 0) use.counted = true;
    if (resetAt !== undefined) use.resetAt = resetAt;
    // The portal's own count says there is room: a refusal before it no longer holds the method back.
    if (usedSec < this.settings.limitSec && use.refusedAt <= at) use.blockedUntil = 0;
  }

  /** The portal's oldest live bucket leaves at `resetAt`: the mirror's leave no earlier, and one leaves then. */
  private placeReset(use: MethodUse, resetAt: number): void {
    const tenth = this.tenthOf(resetAt - this.settings.windowMs);
    for (const bucket of use.buckets) {
      if (bucket.leavesAt < resetAt) bucket.leavesAt = resetAt;
    }
    const oldest = use.buckets[0];
    if (oldest && oldest.leavesAt > resetAt && oldest.tenth === tenth) oldest.leavesAt = resetAt;
    this.order(use);
  }

  /**
   * May a small request go to ask the portal: none in flight, and its named reset passed with no figure
   * since, or a window has passed since its last refusal with no figure since (a refusal that named no
   * reset: by then all the use the portal counted at it has left).
   */
  private mayAsk(use: MethodUse | undefined): boolean {
    const at = this.askAt(use);
    return at !== undefined && this.now() >= at;
  }

  /** When a small request may go to ask (bridge clock), if nothing in flight will tell first. */
  private askAt(use: MethodUse | undefined): number | undefined {
    if (!use || use.reservedCommands > 0) return undefined;
    let at: number | undefined;
    if (use.resetAt !== undefined && use.figureAt < use.resetAt) at = this.toLocal(use.resetAt) + GUARD_MS;
    if (use.refusedAt > -Infinity && use.refusedAt >= use.figureAt) {
      const afterRefusal = this.toLocal(use.refusedAt + this.settings.windowMs) + GUARD_MS;
      at = Math.min(at ?? Infinity, afterRefusal);
    }
    return at;
  }

  /** The mirrored count at `at` (portal clock): the buckets that have not left the window by then. */
  private mirrored(use: MethodUse, at: number): number {
    let sum = 0;
    for (const bucket of use.buckets) if (bucket.leavesAt > at) sum += bucket.sec;
    return sum;
  }

  /** The buckets still in the window at `at`, the soonest to leave first. */
  private live(use: MethodUse, at: number): Bucket[] {
    return use.buckets.filter((bucket) => bucket.leavesAt > at);
  }

  /** When the next mirrored bucket leaves after `at`, if any is live. */
  private nextLeaving(use: MethodUse, at: number): number | undefined {
    return this.live(use, at)[0]?.leavesAt;
  }

  /**
   * Use charged at `at` (portal clock): into the bucket of its tenth, or one it opens, leaving one window
   * after `at` at the whole second (as the portal opens a bucket with the first use in a tenth).
   */
  private add(use: MethodUse, at: number, sec: number): void {
    const tenth = this.tenthOf(at);
    const bucket = use.buckets.find((candidate) => candidate.tenth === tenth);
    if (bucket) {
      bucket.sec += sec;
      return;
    }
    use.buckets = this.live(use, at);
    use.buckets.push({ tenth, leavesAt: Math.floor(at / 1000) * 1000 + this.settings.windowMs, sec });
    this.order(use);
  }

  /** Keeps the buckets the soonest to leave first. */
  private order(use: MethodUse): void {
    use.buckets.sort((a, b) => a.leavesAt - b.leavesAt || a.tenth - b.tenth);
  }

  private tenthOf(portalMs: number): number {
    return Math.floor(portalMs / this.sliceMs);
  }

  private portalNow(): number {
    return this.now() + (this.offsetMs ?? 0);
  }

  private toLocal(portalMs: number): number {
    return portalMs - (this.offsetMs ?? 0);
  }

  private find(method: string): MethodUse | undefined {
    return this.methods.get(method.toLowerCase());
  }

  private use(method: string): MethodUse {
    const key = method.toLowerCase();
    let use = this.methods.get(key);
    if (!use) {
      use = {
        buckets: [],
        figureAt: -Infinity,
        reservedSec: 0,
        reservedCommands: 0,
        counted: false,
        blockedUntil: 0,
        refusedAt: -Infinity,
      };
      this.methods.set(key, use);
    }
    return use;
  }
}
