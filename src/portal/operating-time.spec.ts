import { OperatingTime } from './operating-time';

describe('OperatingTime (the portal operating-time limit, per method)', () => {
  // A tenth's boundary of the 60-s window (6-s tenths), so the arithmetic is plain.
  const START = 1_800_000_000_000;
  let now = START;
  const clock = () => now;
  const register = 'telephony.externalcall.register';
  const finish = 'telephony.externalcall.finish';

  beforeEach(() => {
    now = START;
  });

  /** A 60-s window with a 48-s limit, kept to 100 % so the arithmetic is plain. */
  function tracker(targetShare = 1) {
    return new OperatingTime({ windowMs: 60_000, limitSec: 48, targetShare }, clock);
  }

  it('knows nothing at first: no limit on a method it has not heard of or whose cost is unknown', () => {
    const operating = tracker();
    expect(operating.allowance(register)).toBe(Infinity);
    operating.observe(register, { usedSec: 10 });
    expect(operating.allowance(register)).toBe(Infinity);
  });

  it('until a method is measured: its assumed cost bounds it, and one request may go to measure it', () => {
    const operating = new OperatingTime(
      { windowMs: 60_000, limitSec: 2, targetShare: 1, assumedCostSec: 0.3 },
      clock,
    );
    expect(operating.allowance(register, 10)).toBe(6);
    const first = operating.reserve(new Map([[register, 50]]));
    // While it is in flight, nothing more of the method goes: 50 commands could be 15 s.
    expect(operating.allowance(register, 10)).toBe(0);
    expect(operating.nextRoomAt(register, 10)).toBeUndefined();
    operating.release(first);
    operating.observe(register, { usedSec: 1, costSec: 0.02 });
    expect(operating.allowance(register, 10)).toBe(50);
  });

  it('allows what fits under the target from the portal figure and the cost per command', () => {
    const operating = tracker();
    operating.observe(register, { usedSec: 40, costSec: 0.04 });
    expect(operating.allowance(register)).toBe(200);
    expect(operating.allowance(finish)).toBe(Infinity);
    const kept = new OperatingTime({ windowMs: 60_000, limitSec: 48 }, clock);
    kept.observe(register, { usedSec: 40, costSec: 0.04 });
    expect(kept.allowance(register)).toBe(Math.floor((48 * 0.97 - 40) / 0.04));
    // A report of several commands gives the cost per command.
    const several = tracker();
    several.observe(register, { usedSec: 2, costSec: 2, commands: 50 });
    expect(several.allowance(register)).toBe(1150);
  });

  it('sets aside what requests in flight will cost, and gives it back on release', () => {
    const operating = tracker();
    operating.observe(register, { usedSec: 46, costSec: 0.04 });
    expect(operating.allowance(register)).toBe(50);
    const reservation = operating.reserve(new Map([[register, 30]]));
    expect(operating.allowance(register)).toBe(20);
    expect(operating.usedSec(register)).toBeCloseTo(47.2);
    operating.release(reservation);
    expect(operating.allowance(register)).toBe(50);
  });

  it("the portal's newest figure is the count, lower or higher, whatever the bridge sent meanwhile", () => {
    const operating = tracker();
    operating.observe(register, { usedSec: 40, costSec: 0.04, figureAtMs: START + 1000 });
    expect(operating.usedSec(register)).toBeCloseTo(40);
    // Requests overlapped: a later figure says less (other use left, or the books differ): it is the count.
    operating.observe(register, { usedSec: 10, figureAtMs: START + 2000 });
    expect(operating.usedSec(register)).toBeCloseTo(10);
    // A figure taken before the last one is stale, whatever it says.
    operating.observe(register, { usedSec: 45, figureAtMs: START + 1500 });
    expect(operating.usedSec(register)).toBeCloseTo(10);
    // Higher: another application uses the method too.
    operating.observe(register, { usedSec: 47, figureAtMs: START + 2500 });
    expect(operating.usedSec(register)).toBeCloseTo(47);
    expect(operating.allowance(register, 10)).toBe(25);
  });

  it('frees time as the portal does: each bucket whole, a window after its first use, at the whole second', () => {
    const operating = tracker();
    // 20 s charged from START + 3.4 s on (that tenth's bucket opens then and leaves at START + 63 s), 20 s
    // in the next tenth from START + 9.7 s (leaves at START + 69 s), 8 s at START + 20 s: the limit.
    operating.observe(register, {
      usedSec: 20,
      costSec: 0.04,
      figureAtMs: START + 3400,
      resetAtMs: START + 63_000,
    });
    operating.observe(register, { usedSec: 40, figureAtMs: START + 9700, resetAtMs: START + 63_000 });
    now = START + 20_000;
    operating.observe(register, { usedSec: 48, figureAtMs: START + 20_000, resetAtMs: START + 63_000 });
    expect(operating.allowance(register, 10)).toBe(0);
    // Room for ten commands comes when the first bucket leaves: not at its tenth's boundary plus a window
    // (START + 60 s), nor 60 s after each charge.
    expect(operating.nextRoomAt(register, 10)).toBeGreaterThanOrEqual(START + 63_000);
    expect(operating.nextRoomAt(register, 10)).toBeLessThan(START + 63_100);
    now = START + 62_900;
    expect(operating.usedSec(register)).toBeCloseTo(48);
    now = START + 63_000;
    expect(operating.usedSec(register)).toBeCloseTo(28);
    expect(operating.allowance(register, 10)).toBe(500);
    now = START + 68_900;
    expect(operating.usedSec(register)).toBeCloseTo(28);
    now = START + 69_000;
    expect(operating.usedSec(register)).toBeCloseTo(8);
  });

  it('the reset the portal names places its oldest bucket: earlier when its first use came unseen, never before', () => {
    const operating = tracker();
    // The mirror first hears of the tenth's use at START + 5.5 s; the portal says its bucket leaves at
    // START + 62 s (its first use came at START + 2.x s, before any figure showed it).
    operating.observe(register, {
      usedSec: 30,
      costSec: 0.04,
      figureAtMs: START + 5500,
      resetAtMs: START + 62_000,
    });
    now = START + 20_000;
    operating.observe(register, { usedSec: 48, figureAtMs: START + 20_000, resetAtMs: START + 62_000 });
    expect(operating.nextRoomAt(register, 10)).toBeGreaterThanOrEqual(START + 62_000);
    expect(operating.nextRoomAt(register, 10)).toBeLessThan(START + 62_100);
    now = START + 62_000;
    expect(operating.usedSec(register)).toBeCloseTo(18);
    // A bucket the mirror would free before the portal's named reset is not freed before it.
    const late = tracker();
    late.observe(register, { usedSec: 10, costSec: 0.04, figureAtMs: START + 1500 });
    now = START + 30_000;
    late.observe(register, { usedSec: 48, figureAtMs: START + 30_000, resetAtMs: START + 65_000 });
    now = START + 61_000;
    expect(late.usedSec(register)).toBeCloseTo(48);
    now = START + 65_000;
    expect(late.usedSec(register)).toBeCloseTo(38);
  });

  it('follows batch as a method once the portal counts it (a portal that charges batches whole)', () => {
    const operating = tracker();
    operating.observe('batch', { usedSec: 0, figureAtMs: START + 1000, resetAtMs: START + 61_000 });
    expect(operating.counted('batch')).toBe(false);
    operating.observe('batch', {
      usedSec: 46,
      costSec: 2,
      commands: 50,
      figureAtMs: START + 2000,
      resetAtMs: START + 62_000,
    });
    expect(operating.counted('batch')).toBe(true);
    expect(operating.allowance('batch', 10)).toBe(50);
  });

  it('never waits past the reset the portal named: a count it cannot place is asked again then', () => {
    const operating = tracker();
    // The portal's first word: 47.9 s used (other applications, or books that differ from the answers'
    // durations); the oldest of it leaves in 5 s. Where the rest sits is unknown: kept to the newest bucket.
    operating.observe(register, {
      usedSec: 47.9,
      costSec: 0.04,
      figureAtMs: START + 1000,
      resetAtMs: START + 6000,
    });
    now = START + 1000;
    expect(operating.allowance(register, 10)).toBe(0);
    const wake = operating.nextRoomAt(register, 10)!;
    expect(wake).toBeGreaterThanOrEqual(START + 6000);
    expect(wake).toBeLessThan(START + 6100);
    now = wake;
    // The reset has passed with no figure since: a small request goes to ask, no bigger than what the
    // estimate leaves under the limit (0.1 s: 2 commands of 0.04 s).
    expect(operating.allowance(register, 10)).toBe(2);
    const ask = operating.reserve(new Map([[register, 2]]));
    // While it is in flight no second one goes; its answer tells.
    expect(operating.allowance(register, 10)).toBe(0);
    operating.observe(register, { usedSec: 0.4, figureAtMs: now + 400, resetAtMs: now + 60_000 });
    operating.release(ask);
    expect(operating.usedSec(register)).toBeCloseTo(0.4);
    expect(operating.allowance(register, 10)).toBe(1190);
  });

  it('an ask at the named reset is never refused when the figures were right: it sends what the limit leaves', () => {
    // Kept to 97 % (46.56 s of 48). The portal's figures place everything: 0.1 s in the first bucket,
    // 47.7 s in the second; the first leaves at START + 60 s, which the portal names.
    const operating = new OperatingTime({ windowMs: 60_000, limitSec: 48 }, clock);
    operating.observe(register, {
      usedSec: 0.1,
      costSec: 0.04,
      figureAtMs: START + 100,
      resetAtMs: START + 60_000,
    });
    now = START + 6100;
    operating.observe(register, { usedSec: 47.8, figureAtMs: START + 6100, resetAtMs: START + 60_000 });
    expect(operating.allowance(register, 10)).toBe(0);
    const wake = operating.nextRoomAt(register, 10)!;
    expect(wake).toBeGreaterThanOrEqual(START + 60_000);
    now = wake;
    // The reset freed 0.1 s: 47.7 s remain, over the target, 0.3 s under the limit. The ask sends 7
    // commands (0.28 s), not 10 (0.4 s, of which the portal would refuse the last ones).
    expect(operating.usedSec(register)).toBeCloseTo(47.7);
    expect(operating.allowance(register, 10)).toBe(7);
    // At the limit itself the ask is one command.
    const full = new OperatingTime({ windowMs: 60_000, limitSec: 48 }, clock);
    now = START + 6100;
    full.observe(register, {
      usedSec: 48,
      costSec: 0.04,
      figureAtMs: START + 6100,
      resetAtMs: START + 60_000,
    });
    now = full.nextRoomAt(register, 10)!;
    expect(full.allowance(register, 10)).toBe(1);
  });

  it('a refusal blocks the method until the reset the portal named, then asks small until a figure', () => {
    const operating = tracker();
    operating.observe(register, { usedSec: 47, costSec: 0.04, figureAtMs: START, resetAtMs: START + 60_000 });
    // Refused inside a batch, no reset given, the count near the limit: the reset last named for the method.
    operating.blocked(register);
    expect(operating.blockedUntil(register)).toBeGreaterThanOrEqual(START + 60_000);
    // The count had room: the refusal disagrees with it, so it holds a short while at most (10 s), or until
    // the oldest bucket leaves if that is sooner.
    const odd = tracker();
    odd.observe(register, { usedSec: 3, costSec: 0.04, figureAtMs: START, resetAtMs: START + 60_000 });
    odd.blocked(register);
    expect(odd.blockedUntil(register)).toBeLessThanOrEqual(START + 10_000 + 25);
    // Refused with a reset of its own (a direct call's 429).
    const refused = tracker();
    refused.observe(register, { usedSec: 30, costSec: 0.04, figureAtMs: START });
    refused.blocked(register, START + 12_000);
    expect(refused.allowance(register, 10)).toBe(0);
    expect(refused.nextRoomAt(register, 10)).toBeGreaterThanOrEqual(START + 12_000);
    now = START + 12_100;
    // Past the reset: not more than a small request until the portal's count is heard again.
    expect(refused.allowance(register, 10)).toBe(10);
    refused.observe(register, { usedSec: 20, figureAtMs: now, resetAtMs: now + 30_000 });
    expect(refused.allowance(register, 10)).toBe(700);
    // A figure after a refusal saying there is room lifts the block at once.
    now = START;
    const lifted = tracker();
    lifted.observe(register, { usedSec: 30, costSec: 0.04, figureAtMs: START });
    lifted.blocked(register, START + 60_000);
    now = START + 1000;
    lifted.observe(register, { usedSec: 5, figureAtMs: START + 1000 });
    expect(lifted.blockedUntil(register)).toBeUndefined();
  });

  it("reads the portal's moments on the portal's clock: a portal 30 s ahead resets 30 s earlier here", () => {
    const operating = tracker();
    const ahead = 30_000;
    // Sent at START, answered 100 ms later; the portal's clock said START + 30 s + 50 ms.
    operating.observeClock(START, START + 100, START + ahead + 20, START + ahead + 80);
    now = START + 100;
    operating.observe(register, {
      usedSec: 48,
      costSec: 0.04,
      figureAtMs: START + ahead + 80,
      resetAtMs: START + ahead + 12_000,
    });
    operating.blocked(register, START + ahead + 12_000);
    const until = operating.blockedUntil(register)!;
    expect(until).toBeGreaterThanOrEqual(START + 12_000 - 100);
    expect(until).toBeLessThan(START + 12_200);
  });

  it('a portal that reports no figure: its own charges are the count', () => {
    const operating = tracker();
    operating.observe(register, { costSec: 47, commands: 1000 });
    expect(operating.usedSec(register)).toBeCloseTo(47);
    expect(operating.allowance(register)).toBe(21);
  });

  it('the snapshot shows each method against the limit, and a block', () => {
    const operating = tracker();
    operating.observe(register, { usedSec: 12, costSec: 0.04 });
    operating.blocked(finish, START + 5000);
    expect(operating.snapshot()).toEqual([
      { method: register, usedSec: 12, limitSec: 48 },
      { method: finish, usedSec: 0, limitSec: 48, blockedUntil: START + 5000 + 25 },
    ]);
  });
});
