import { LocalReplicaRegistry } from '../store/local-replica-registry';
import { assignPortals, ShardMap } from './shard-map';

const portalsOf = (count: number) => Array.from({ length: count }, (_, i) => `portal-${i}.example.test`);
const replicasOf = (count: number) => Array.from({ length: count }, (_, i) => `host-${i}:${1000 + i}:r${i}`);

function loads(assignment: Map<string, string>, replicas: readonly string[]): number[] {
  const counts = new Map(replicas.map((replica) => [replica, 0]));
  for (const replica of assignment.values()) counts.set(replica, counts.get(replica)! + 1);
  return [...counts.values()];
}

/**
 * The fewest portals that must change replica from `before` to `after`: at best a replica in both keeps
 * min(its old load, the largest new load ⌈P/n⌉), and a new replica must get at least ⌊P/n⌋.
 */
function fewestMoves(before: Map<string, string>, afterReplicas: readonly string[]): number {
  const cap = Math.ceil(before.size / afterReplicas.length);
  const old = new Map<string, number>();
  for (const replica of before.values()) old.set(replica, (old.get(replica) ?? 0) + 1);
  let kept = 0;
  let newcomers = 0;
  for (const replica of afterReplicas) {
    kept += Math.min(old.get(replica) ?? 0, cap);
    if (!old.has(replica)) newcomers += 1;
  }
  return Math.max(before.size - kept, newcomers * Math.floor(before.size / afterReplicas.length));
}

function moved(before: Map<string, string>, after: Map<string, string>): number {
  return [...before].filter(([portal, replica]) => after.get(portal) !== replica).length;
}

describe('assignPortals (bounded-load rendezvous hashing)', () => {
  it.each([
    [50, 2],
    [50, 3],
    [50, 4],
    [1000, 3],
    [1000, 7],
    [7, 3],
    [2, 5],
  ])('gives each of %i portals to one of %i replicas, loads within one of each other', (p, n) => {
    const portals = portalsOf(p);
    const replicas = replicasOf(n);
    const assignment = assignPortals(portals, replicas);
    expect([...assignment.keys()].sort()).toEqual([...portals].sort());
    for (const replica of assignment.values()) expect(replicas).toContain(replica);
    const counts = loads(assignment, replicas);
    expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
    if (p >= 10 * n) {
      // Within 20 % of the mean whenever there are enough portals for a percentage to mean anything.
      for (const count of counts) expect(Math.abs(count - p / n)).toBeLessThanOrEqual(0.2 * (p / n));
    }
  });

  it('is the same answer whatever the order of the inputs (every replica computes it alike)', () => {
    const portals = portalsOf(200);
    const replicas = replicasOf(4);
    const first = assignPortals(portals, replicas);
    const shuffled = assignPortals([...portals].reverse(), [
      replicas[2],
      replicas[0],
      replicas[3],
      replicas[1],
    ]);
    expect([...shuffled].sort()).toEqual([...first].sort());
    // Repeats in the inputs change nothing either.
    expect([...assignPortals([...portals, portals[0]], [...replicas, replicas[1]])].sort()).toEqual(
      [...first].sort(),
    );
  });

  it('does not depend on the process: a fixed input keeps a fixed answer', () => {
    const assignment = assignPortals(['a', 'b', 'c', 'd'], ['r1', 'r2']);
    // Recorded once; SHA-1 is the same everywhere, so this must never change between runs or machines.
    expect(Object.fromEntries(assignment)).toEqual(
      Object.fromEntries(assignPortals(['d', 'c', 'b', 'a'], ['r2', 'r1'])),
    );
    expect(Object.fromEntries(assignment)).toEqual(RECORDED);
  });

  it('nobody alive: nobody gets anything; no portals: an empty assignment', () => {
    expect(assignPortals(portalsOf(5), []).size).toBe(0);
    expect(assignPortals([], replicasOf(3)).size).toBe(0);
  });

  it.each([
    [50, 3, 4],
    [50, 3, 2],
    [1000, 3, 4],
    [1000, 3, 2],
  ])('moves few of %i portals when %i replicas become %i', (p, from, to) => {
    const portals = portalsOf(p);
    const before = assignPortals(portals, replicasOf(from));
    // Scaling up adds host-3; scaling down drops host-1 (a middle one, not simply the last).
    const afterReplicas = to > from ? replicasOf(to) : replicasOf(from).filter((_, i) => i !== 1);
    const after = assignPortals(portals, afterReplicas);
    const moves = moved(before, after);
    const fewest = fewestMoves(before, afterReplicas);
    process.stdout.write(
      `assignPortals ${p} portals, ${from} -> ${to} replicas: ${moves} moved (fewest possible ${fewest})\n`,
    );
    expect(moves).toBeGreaterThanOrEqual(fewest);
    expect(moves).toBeLessThanOrEqual(MOVE_FACTOR * fewest);
  });
});

describe('ShardMap on a one-process registry', () => {
  it('owns every portal once started, tells what it gained and lost, and owns nothing once stopped', async () => {
    const portals = ['p1', 'p2', 'p3'];
    const map = new ShardMap(new LocalReplicaRegistry(), 'only', async () => portals, {
      livenessMs: 20,
      portalsMs: 20,
    });
    const changes: [string[], string[]][] = [];
    map.onChange((gained, lost) => changes.push([gained, lost]));
    await map.start();
    expect(map.replicas).toEqual(['only']);
    expect(portals.every((portal) => map.owns(portal) && map.ownerOf(portal) === 'only')).toBe(true);
    expect(changes).toEqual([[['p1', 'p2', 'p3'], []]]);

    // A portal added to the list is picked up at the next look.
    portals.push('p4');
    await waitFor(() => map.owns('p4'));
    expect(changes[1]).toEqual([['p4'], []]);

    await map.stop();
    expect(map.owns('p1')).toBe(false);
    expect(changes[2]).toEqual([[], ['p1', 'p2', 'p3', 'p4']]);
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met within 5 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Measured: 14 vs 12, 18 vs 17, 263 vs 250, 335 vs 334 (see the printed lines); a third more is the bound. */
const MOVE_FACTOR = 1.34;
const RECORDED: Record<string, string> = { a: 'r2', b: 'r2', c: 'r1', d: 'r1' };
