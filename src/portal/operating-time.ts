/**
 * The portal's second limit (how real portals behave "Errors"): the server time each method uses is summed over a
 * sliding window (10 minutes); a method over the limit (480 s) is blocked, HTTP 429 `OPERATION_TIME_LIMIT`,
 * until `time.operating_reset_at`. Every answer says how much its method has used (`time.operating`; inside
 * a batch, `result_time[label].operating` for each command's own method).
 *
 * This keeps, per method, the portal's last word on its use, the bridge's own charges since (each command's
 * server time, stamped when its answer arrived, so it leaves the window no earlier than it does on the
 * portal), and what requests in flight are expected to cost. From them it says how many more commands of a
 * method fit under `targetShare` of the limit: the bridge slows down before the limit instead of running
 * into it, and admits new server time only as fast as old time leaves the window.
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

/** What one answer said about one method. */
export interface OperatingReport {
  /** `operating`: seconds the method has used in the window, as the portal counts (all applications). */
  usedSec?: number;
  /** `operating_reset_at`, ms epoch: when part of the method's use leaves the window. */
  resetAtMs?: number;
  /** The server time of the report's commands (`duration`/`processing`), when the answer says. */
  costSec?: number;
  /** How many commands `costSec` covers (default 1). */
  commands?: number;
  /**
   * When the request carrying the report was sent (ms). Sent after the last figure was taken, the request
   * ran after the one that gave it, so its figure includes everything that one had: it replaces the
   * estimate (lower too: other applications' use left the window). Sent before (requests overlapped), the
   * portal ran it before the last figure (which then counts it) or after (its own figure counts both): the
   * estimate becomes the larger of the two.
   */
  sentAt?: number;
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

interface Charge {
  /** When the request was sent: the portal counted the charge no earlier. */
  from: number;
  /** When its answer came: the portal counted it no later, so it leaves the window by at + window. */
  at: number;
  sec: number;
}

interface MethodUse {
  /** The portal's last word, as the estimate stood after it, and when it came. */
  reportedSec: number;
  reportedAt: number;
  resetAt?: number;
  /** The bridge's own charges still in the window, oldest first. */
  charges: Charge[];
  reservedSec: number;
  /** Commands in flight (whatever their cost was taken to be). */
  reservedCommands: number;
  /** Server seconds one command of this method takes (moving average); undefined until answered once. */
  costSec?: number;
  blockedUntil: number;
}

/** The default share of the limit kept to: 97 %, so the bridge runs within 3 % of what the limit allows. */
export const DEFAULT_TARGET_SHARE = 0.97;

/** A method blocked without a reset time from the portal is tried again after this long. */
const UNKNOWN_BLOCK_MS = 10_000;

export class OperatingTime {
  private readonly methods = new Map<string, MethodUse>();
  private readonly targetSec: number;

  constructor(
    private readonly settings: OperatingSettings,
    private readonly now: () => number = Date.now,
  ) {
    this.targetSec = settings.limitSec * (settings.targetShare ?? DEFAULT_TARGET_SHARE);
  }

  /** What an answer said of `method`: the portal's count replaces the estimate; the cost is charged. */
  observe(method: string, report: OperatingReport): void {
    const use = this.use(method);
    const now = this.now();
    this.expire(use, now);
    if (report.costSec !== undefined && report.costSec >= 0) {
      // Charges within 100 ms share an entry, stamped with the latest of them so none leaves the window
      // early: the list stays short at any rate (6 000 per 10 minutes).
      const from = Math.min(now, report.sentAt ?? now);
      const last = use.charges[use.charges.length - 1];
      if (last && now - last.at < 100) {
        last.sec += report.costSec;
        last.at = now;
        last.from = Math.min(last.from, from);
      } else use.charges.push({ from, at: now, sec: report.costSec });
      const perCommand = report.costSec / Math.max(1, report.commands ?? 1);
      use.costSec = use.costSec === undefined ? perCommand : use.costSec * 0.7 + perCommand * 0.3;
    }
    const cost = report.costSec ?? 0;
    if (report.usedSec !== undefined && report.usedSec >= 0) {
      const ranAfterLast = report.sentAt === undefined || report.sentAt >= use.reportedAt;
      use.reportedSec = ranAfterLast ? report.usedSec : Math.max(report.usedSec, this.reportedNow(use, now));
      use.reportedAt = now;
    } else if (cost > 0) {
      // A portal that does not report: the bridge's own charges are the estimate.
      use.reportedSec = this.reportedNow(use, now) + cost;
      use.reportedAt = now;
    }
    if (report.resetAtMs !== undefined) use.resetAt = report.resetAtMs;
  }

  /** The portal refused the method for its operating time until `untilMs` (unknown: ten seconds from now). */
  blocked(method: string, untilMs?: number): void {
    const use = this.use(method);
    const now = this.now();
    // Without the block's own reset time, a later look is cheaper than trusting an older `operating_reset_at`
    // (a method barely used reports its whole window there).
    use.blockedUntil = Math.max(
      use.blockedUntil,
      untilMs && untilMs > now ? untilMs : now + UNKNOWN_BLOCK_MS,
    );
  }

  /** When the method may be called again, if it is blocked now. */
  blockedUntil(method: string): number | undefined {
    const until = this.find(method)?.blockedUntil ?? 0;
    return until > this.now() ? until : undefined;
  }

  /** The method's use now as the bridge estimates it: reported, less what has left the window, plus in flight. */
  usedSec(method: string): number {
    const use = this.find(method);
    if (!use) return 0;
    this.expire(use, this.now());
    return this.reportedNow(use, this.now()) + use.reservedSec;
  }

  /**
   * How many commands of `method` may still go now under the target. Fewer than `minUseful` counts as none,
   * so a method at its limit goes in requests worth sending rather than a command at a time. Until the
   * method's cost is measured it is taken as `assumedCostSec`, and one request may always go while none of
   * the method is in flight, to measure it; `Infinity` when nothing bounds it.
   */
  allowance(method: string, minUseful = 1): number {
    const use = this.find(method);
    const now = this.now();
    if (use && use.blockedUntil > now) return 0;
    const cost = use?.costSec || this.settings.assumedCostSec;
    if (!cost) return Infinity;
    let used = 0;
    if (use) {
      this.expire(use, now);
      used = this.reportedNow(use, now) + use.reservedSec;
    }
    const commands = Math.floor((this.targetSec - used) / cost + 1e-9);
    // A limit too small for minUseful commands at all: fewer are still worth sending.
    if (commands >= Math.min(minUseful, Math.floor(this.targetSec / cost))) return Math.max(0, commands);
    return !use?.costSec && !use?.reservedCommands ? Infinity : 0;
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
   * When `minUseful` commands of a method without allowance will fit again: its block's end, or the moment
   * enough of the bridge's own charges leave the window, or the portal's reset time when that comes first
   * or they are not enough (other applications use the method too). Undefined when nothing is known.
   */
  nextRoomAt(method: string, minUseful = 1): number | undefined {
    const use = this.find(method);
    if (!use) return undefined;
    const now = this.now();
    if (use.blockedUntil > now) return use.blockedUntil;
    // Not measured yet: the answer of the request in flight tells (and wakes the loop).
    if (!use.costSec) return undefined;
    this.expire(use, now);
    let excess = this.reportedNow(use, now) + use.reservedSec + minUseful * use.costSec - this.targetSec;
    if (excess <= 0) return now;
    const portalReset = use.resetAt && use.resetAt > now ? use.resetAt : undefined;
    for (const charge of use.charges) {
      const leaves = charge.at + this.settings.windowMs;
      if (leaves <= now || charge.from <= use.reportedAt - this.settings.windowMs) continue;
      excess -= charge.sec;
      if (excess <= 0) return Math.min(leaves, portalReset ?? Infinity);
    }
    return portalReset ?? now + UNKNOWN_BLOCK_MS;
  }

  snapshot(): OperatingSnapshot[] {
    const now = this.now();
    return [...this.methods.entries()].map(([method, use]) => {
      this.expire(use, now);
      return {
        method,
        usedSec: this.reportedNow(use, now) + use.reservedSec,
        limitSec: this.settings.limitSec,
        ...(use.blockedUntil > now ? { blockedUntil: use.blockedUntil } : {}),
      };
    });
  }

  /** The last report less the bridge's charges it counted that have left the window since. */
  private reportedNow(use: MethodUse, now: number): number {
    const window = this.settings.windowMs;
    let used = use.reportedSec;
    for (const charge of use.charges) {
      // Surely counted in the report (sent after its window began) and surely gone from the window by now.
      if (charge.from > use.reportedAt - window && charge.at <= now - window) used -= charge.sec;
    }
    return Math.max(0, used);
  }

  /** Forgets charges that can no longer matter: out of the window both now and at the last report. */
  private expire(use: MethodUse, now: number): void {
    const horizon = Math.min(now, use.reportedAt) - this.settings.windowMs;
    let drop = 0;
    while (drop < use.charges.length && use.charges[drop].at <= horizon) drop += 1;
    if (drop > 0) use.charges.splice(0, drop);
  }

  private find(method: string): MethodUse | undefined {
    return this.methods.get(method.toLowerCase());
  }

  private use(method: string): MethodUse {
    const key = method.toLowerCase();
    let use = this.methods.get(key);
    if (!use) {
      use = {
        reportedSec: 0,
        reportedAt: 0,
        charges: [],
        reservedSec: 0,
        reservedCommands: 0,
        blockedUntil: 0,
      };
      this.methods.set(key, use);
    }
    return use;
  }
}
