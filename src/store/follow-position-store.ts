/**
 * Where a follower's reader keeps its durable position in a PBX's ledger (the CDR table of the API contract (docs/API.md)), so
 * a restart, a kill -9 or a takeover by another replica goes on from there. One opaque text per portal and
 * source; written after the calls read up to it are stored.
 */
export abstract class FollowPositionStore {
  abstract get(portalId: string, source: string): Promise<string | undefined>;
  abstract put(portalId: string, source: string, position: string, now: number): Promise<void>;
}
