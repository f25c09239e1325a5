import { ReplicaRegistry } from './coordination-store';

/**
 * The registry of a deployment with one process (SQLite, or specs in memory): the only replica is this one,
 * alive from join to leave.
 */
export class LocalReplicaRegistry extends ReplicaRegistry {
  private replicaId?: string;

  async join(replicaId: string): Promise<void> {
    this.replicaId = replicaId;
  }

  async liveReplicas(): Promise<string[]> {
    return this.replicaId === undefined ? [] : [this.replicaId];
  }

  async leave(): Promise<void> {
    this.replicaId = undefined;
  }

  holdsMark(): boolean {
    return this.replicaId !== undefined;
  }

  onMarkChange(): () => void {
    // One process never loses its mark without leaving.
    return () => undefined;
  }
}
