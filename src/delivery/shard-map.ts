import { Logger } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { ReplicaRegistry } from '../store/coordination-store';

/** A stable 48-bit hash of a string (SHA-1's first six bytes): the same on every process and platform. */
function hash48(text: string): number {
  return createHash('sha1').update(text, 'utf8').digest().readUIntBE(0, 6);
}

/**
 * Which live replica serves which portal (docs/decisions/sharding.md): bounded-load rendezvous
 * hashing. Each portal ranks the replicas by a hash of (replica, portal) and goes to the highest-ranked one
 * that still has room; a replica's room is ⌊P/n⌋ portals, or one more for the first P mod n replicas to
 * reach ⌊P/n⌋, so loads differ by at most one. Portals are placed in the order of their own hash, so every
 * replica computing it from the same inputs (in any order) gets the same answer; a replica joining or
 * leaving moves mostly the portals it takes or gives up, since the others keep their first choice as long
 * as it has room.
 */
export function assignPortals(
  portalIds: readonly string[],
  replicas: readonly string[],
): Map<string, string> {
  const assignment = new Map<string, string>();
  const nodes = [...new Set(replicas)].sort();
  if (nodes.length === 0) return assignment;
  const portals = [...new Set(portalIds)]
    .map((id) => ({ id, rank: hash48(id) }))
    .sort((a, b) => a.rank - b.rank || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const base = Math.floor(portals.length / nodes.length);
  let extraLeft = portals.length % nodes.length;
  const load = new Map(nodes.map((node) => [node, 0]));
  for (const portal of portals) {
    const ranked = nodes
      .map((node) => ({ node, score: hash48(`${node}\n${portal.id}`) }))
      .sort((a, b) => b.score - a.score || (a.node < b.node ? -1 : 1));
    for (const { node } of ranked) {
      const count = load.get(node)!;
      if (count < base || (count === base && extraLeft > 0)) {
        if (count === base) extraLeft -= 1;
        load.set(node, count + 1);
        assignment.set(portal.id, node);
        break;
      }
    }
  }
  return assignment;
}

export interface ShardMapOptions {
  /** How often the live replicas are read (ms). */
  livenessMs?: number;
  /** How often the portal list is read (ms). */
  portalsMs?: number;
}

/**
 * This replica's view of the sharding: polls the live replicas and the portal list, computes the
 * assignment (`assignPortals`, the same on every replica) and says which portals are this replica's.
 * While the registry says this replica's liveness mark is lost (its connection to the database dropped),
 * it owns nothing: the others may take its portals over, and it must not start new work for them.
 */
export class ShardMap {
  private readonly logger = new Logger('ShardMap');
  private readonly livenessMs: number;
  private readonly portalsMs: number;
  private readonly listeners = new Set<(gained: string[], lost: string[]) => void>();
  private liveIds: string[] = [];
  private portals: string[] = [];
  private assignment = new Map<string, string>();
  /** The portals owns() says yes to, as last told to the listeners. */
  private owned = new Set<string>();
  private livenessTimer?: NodeJS.Timeout;
  private portalsTimer?: NodeJS.Timeout;
  private polling?: Promise<void>;
  private stopMarkWatch?: () => void;
  private running = false;
  private lastErrorLoggedAt = 0;

  constructor(
    private readonly registry: ReplicaRegistry,
    private readonly replicaId: string,
    private readonly portalIds: () => Promise<string[]>,
    options: ShardMapOptions = {},
  ) {
    this.livenessMs = options.livenessMs ?? 250;
    this.portalsMs = options.portalsMs ?? 2000;
  }

  /** Joins the registry and computes the first assignment; then keeps it current until stop(). */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.stopMarkWatch = this.registry.onMarkChange(() => {
      // Lost: owns() is false at once. Back: the next look at the live replicas counts this one again.
      this.publish();
      if (this.registry.holdsMark()) void this.pollLiveness();
    });
    try {
      await this.registry.join(this.replicaId);
    } catch (error) {
      this.running = false;
      this.stopMarkWatch();
      throw error;
    }
    // A failed first read is logged and tried again at the next poll.
    await this.guard(() => this.readPortals());
    await this.pollLiveness();
    this.scheduleLiveness();
    this.schedulePortals();
  }

  /** Stops polling and leaves the registry: the others take this replica's portals at their next look. */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.livenessTimer);
    clearTimeout(this.portalsTimer);
    this.stopMarkWatch?.();
    await this.polling;
    await this.registry.leave();
    this.publish();
  }

  /** Whether this replica serves the portal now. */
  owns(portalId: string): boolean {
    return this.owned.has(portalId);
  }

  /** The replica the assignment gives the portal to (undefined: not a known portal, or no replica alive). */
  ownerOf(portalId: string): string | undefined {
    return this.assignment.get(portalId);
  }

  /** The live replicas the assignment was computed over, sorted. */
  get replicas(): readonly string[] {
    return this.liveIds;
  }

  /** Calls `listener` with the portals this replica gained and lost after each change. Returns its stop. */
  onChange(listener: (gained: string[], lost: string[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Reads the portal list now (a portal was installed or uninstalled here), not at the next poll. */
  refreshPortals(): Promise<void> {
    return this.guard(() => this.readPortals());
  }

  private scheduleLiveness(): void {
    if (!this.running) return;
    this.livenessTimer = setTimeout(() => {
      void this.pollLiveness().finally(() => this.scheduleLiveness());
    }, this.livenessMs);
    this.livenessTimer.unref();
  }

  private schedulePortals(): void {
    if (!this.running) return;
    this.portalsTimer = setTimeout(() => {
      void this.guard(() => this.readPortals()).finally(() => this.schedulePortals());
    }, this.portalsMs);
    this.portalsTimer.unref();
  }

  private pollLiveness(): Promise<void> {
    return this.guard(() => this.readReplicas());
  }

  /** One read at a time; a failed read keeps the last assignment (logged at most every 10 s). */
  private guard(read: () => Promise<void>): Promise<void> {
    const run = (this.polling ?? Promise.resolve()).then(async () => {
      if (!this.running) return;
      try {
        await read();
        this.publish();
      } catch (error) {
        if (Date.now() - this.lastErrorLoggedAt > 10_000) {
          this.lastErrorLoggedAt = Date.now();
          this.logger.warn(
            `cannot read the replicas or portals, keeping the last assignment: ${(error as Error).message}`,
          );
        }
      }
    });
    this.polling = run;
    return run;
  }

  private async readReplicas(): Promise<void> {
    const live = await this.registry.liveReplicas();
    if (!sameList(live, this.liveIds)) {
      this.liveIds = live;
      this.assignment = assignPortals(this.portals, this.liveIds);
    }
  }

  private async readPortals(): Promise<void> {
    const portals = [...new Set(await this.portalIds())].sort();
    if (!sameList(portals, this.portals)) {
      this.portals = portals;
      this.assignment = assignPortals(this.portals, this.liveIds);
    }
  }

  /** Works out what owns() says now and tells the listeners what changed. */
  private publish(): void {
    const owned = new Set<string>();
    if (this.running && this.registry.holdsMark()) {
      for (const [portal, replica] of this.assignment) if (replica === this.replicaId) owned.add(portal);
    }
    const gained = [...owned].filter((portal) => !this.owned.has(portal)).sort();
    const lost = [...this.owned].filter((portal) => !owned.has(portal)).sort();
    this.owned = owned;
    if (gained.length === 0 && lost.length === 0) return;
    for (const listener of this.listeners) {
      try {
        listener(gained, lost);
      } catch (error) {
        this.logger.warn(`a shard change listener failed: ${(error as Error).message}`);
      }
    }
  }
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((value, i) => value === b[i]);
}
