import { OperatingTime } from './operating-time';

describe('OperatingTime (the portal operating-time limit, per method)', () => {
  let now = 1_000_000;
  const clock = () => now;
  const register = 'telephony.externalcall.register';
  const finish = 'telephony.externalcall.finish';

  beforeEach(() => {
    now = 1_000_000;
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
    // A 2-s limit and commands assumed to take 0.3 s: six fit, fewer than a useful request, but all the
    // limit could ever hold, so they go.
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
    // The real limit leaves room for any start: 480 s at 0.3 s a command.
    const real = new OperatingTime(
      { windowMs: 600_000, limitSec: 480, targetShare: 1, assumedCostSec: 0.3 },
      clock,
    );
    expect(real.allowance(finish, 10)).toBe(1600);
  });

  it('allows what fits under the target from the reported use and the cost per command', () => {
    const operating = tracker();
    operating.observe(register, { usedSec: 40, costSec: 0.04 });
    // 48 − 40 = 8 s left, 0.04 s a command: 200 commands.
    expect(operating.allowance(register)).toBe(200);
    // Another method is counted apart.
    expect(operating.allowance(finish)).toBe(Infinity);
    // The default target keeps 3 % of the limit free.
    const kept = new OperatingTime({ windowMs: 60_000, limitSec: 48 }, clock);
    kept.observe(register, { usedSec: 40, costSec: 0.04 });
    expect(kept.allowance(register)).toBe(Math.floor((48 * 0.97 - 40) / 0.04));
  });

  it('a report of several commands gives the cost per command', () => {
    const operating = tracker();
    operating.observe(register, { usedSec: 2, costSec: 2, commands: 50 });
    // 46 s left at 0.04 s a command.
    expect(operating.allowance(register)).toBe(1150);
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

  it('a figure from a request that overlapped the last one taken never lowers the estimate', () => {
    const operating = tracker();
    // Two batches overlapped: the later-sent one answered first, with the figure after both ran.
    operating.observe(register, { usedSec: 1.94, costSec: 0.02, sentAt: now - 1_000 });
    // The earlier-sent one answers last with the figure from when its own commands ran: the portal ran it
    // before the first figure (which counts it) or after (its figure counts both): the larger stands.
    operating.observe(register, { usedSec: 1.0, costSec: 0.02, sentAt: now - 2_000 });
    expect(operating.usedSec(register)).toBeCloseTo(1.94);
    operating.observe(register, { usedSec: 1.97, costSec: 0.02, sentAt: now - 1_500 });
    expect(operating.usedSec(register)).toBeCloseTo(1.97);
    // A request sent after that figure was taken ran after it: its figure replaces the estimate, lower too.
    now += 1_000;
    operating.observe(register, { usedSec: 1.5, costSec: 0.02, sentAt: now - 500 });
    expect(operating.usedSec(register)).toBeCloseTo(1.5);
  });

  it('counts fewer than minUseful commands as none', () => {
    const operating = tracker();
    operating.observe(register, { usedSec: 47.7, costSec: 0.04 });
    expect(operating.allowance(register)).toBe(7);
    expect(operating.allowance(register, 10)).toBe(0);
  });

  it("frees the bridge's own charges as they leave the window, and says when room comes", () => {
    const operating = tracker();
    // 24 s of the bridge's own work at t0, then 24 s more 30 s later: the method is at its limit.
    for (let i = 0; i < 600; i++) operating.observe(register, { costSec: 0.04, usedSec: (i + 1) * 0.04 });
    now += 30_000;
    for (let i = 0; i < 600; i++)
      operating.observe(register, { costSec: 0.04, usedSec: 24 + (i + 1) * 0.04 });
    expect(operating.allowance(register)).toBe(0);
    // The first 24 s leave the window 60 s after they were charged.
    expect(operating.nextRoomAt(register, 10)).toBe(1_000_000 + 60_000);
    now = 1_000_000 + 60_000;
    expect(operating.usedSec(register)).toBeCloseTo(24);
    expect(operating.allowance(register)).toBe(600);
  });

  it("waits for the portal's reset when the use is not the bridge's own", () => {
    const operating = tracker();
    operating.observe(register, { usedSec: 48, costSec: 0.04, resetAtMs: now + 42_000 });
    expect(operating.allowance(register)).toBe(0);
    expect(operating.nextRoomAt(register, 1)).toBe(now + 42_000);
  });

  it('a block from the portal holds the method until its reset, then lets it go', () => {
    const operating = tracker();
    operating.observe(finish, { usedSec: 1, costSec: 0.04 });
    operating.blocked(finish, now + 5_000);
    expect(operating.allowance(finish)).toBe(0);
    expect(operating.blockedUntil(finish)).toBe(now + 5_000);
    expect(operating.nextRoomAt(finish)).toBe(now + 5_000);
    now += 5_000;
    expect(operating.blockedUntil(finish)).toBeUndefined();
    expect(operating.allowance(finish)).toBeGreaterThan(0);
  });

  it('a block without a reset time of its own is looked at again in ten seconds', () => {
    const operating = tracker();
    // An older reset time says when the window's oldest use leaves it, not when a block ends.
    operating.observe(register, { usedSec: 47, costSec: 0.04, resetAtMs: now + 600_000 });
    operating.blocked(register);
    expect(operating.blockedUntil(register)).toBe(now + 10_000);
  });

  it('method names are case-insensitive, as the portal reads them', () => {
    const operating = tracker();
    operating.observe('Telephony.ExternalCall.Register', { usedSec: 47, costSec: 0.5 });
    expect(operating.allowance(register)).toBe(2);
  });
});
