import { Logger } from '@nestjs/common';
import { PortalRecord } from '../store/portal-store';
import { PortalRuntime, RuntimeDeps } from './portal-runtime';
import { DeploymentSettings, resolvePortalSettings } from './portal-scoped-settings';

/** Why a portal's runtime could not be (re)built here; no value of its settings, no secret. */
export interface RuntimeFailure {
  /** The record version that failed (a later sync tries it again). */
  updatedAt: number;
  reason: string;
  since: number;
  attempts: number;
}

/**
 * The runtime lifecycle: one `PortalRuntime` per served portal, replaced as build → open → publish with
 * rollback. A new runtime is built and opened beside the current one; only then is the current one closed
 * and the new one published and started. If building or opening throws, the new runtime is closed, the
 * current one (if any) keeps serving, and the failure becomes that portal's flag until a later attempt
 * works. Nothing here stops another portal.
 */
export class PortalRuntimes {
  private readonly logger = new Logger('Portals');
  private readonly runtimes = new Map<string, PortalRuntime>();
  private readonly failures = new Map<string, RuntimeFailure>();

  constructor(
    private readonly deployment: DeploymentSettings,
    private readonly deps: RuntimeDeps,
  ) {}

  get(portalId: string): PortalRuntime | undefined {
    return this.runtimes.get(portalId);
  }

  all(): PortalRuntime[] {
    return [...this.runtimes.values()];
  }

  ids(): string[] {
    return [...this.runtimes.keys()].sort();
  }

  /** The portal's last failed (re)build, while it lasts. */
  failureOf(portalId: string): RuntimeFailure | undefined {
    return this.failures.get(portalId);
  }

  failed(): number {
    return this.failures.size;
  }

  /** Whether the portal's published runtime is of this record version (nothing to rebuild). */
  current(portalId: string, updatedAt: number): boolean {
    return this.runtimes.get(portalId)?.record.updatedAt === updatedAt;
  }

  /**
   * Builds and opens the record's runtime, then closes the published one and publishes the new one. Returns
   * whether the new one serves; on failure the previous one (if any) still does.
   */
  async replace(record: PortalRecord): Promise<boolean> {
    const { portalId } = record;
    let runtime: PortalRuntime | undefined;
    try {
      runtime = new PortalRuntime(record, resolvePortalSettings(record, this.deployment), this.deps);
      await runtime.open();
    } catch (error) {
      await runtime?.close().catch(() => undefined);
      this.fail(record, error);
      return false;
    }
    const previous = this.runtimes.get(portalId);
    if (previous) {
      await previous
        .close()
        .catch((error: Error) =>
          this.logger.warn(`portal ${portalId}: closing its old services: ${error.message}`),
        );
    }
    this.runtimes.set(portalId, runtime);
    runtime.start();
    const failure = this.failures.get(portalId);
    this.failures.delete(portalId);
    if (failure)
      this.logger.log(`portal ${portalId} is served again (after ${failure.attempts} failed attempts)`);
    else if (!previous) this.logger.log(`serving portal ${portalId} (${record.domain})`);
    return true;
  }

  /** The portal is no longer installed (or was purged): its runtime closes, its calls stay stored. */
  async drop(portalId: string): Promise<void> {
    this.failures.delete(portalId);
    const runtime = this.runtimes.get(portalId);
    if (!runtime) return;
    this.runtimes.delete(portalId);
    this.logger.log(`portal ${portalId} is no longer installed: paused`);
    await runtime.close();
  }

  /** Every portal known here, served or failed: what the sync compares with the store's list. */
  known(): string[] {
    return [...new Set([...this.runtimes.keys(), ...this.failures.keys()])];
  }

  async closeAll(): Promise<void> {
    const runtimes = [...this.runtimes.values()];
    this.runtimes.clear();
    await Promise.all(runtimes.map((runtime) => runtime.close()));
  }

  private fail(record: PortalRecord, error: unknown): void {
    const reason = safeReason(error);
    const earlier = this.failures.get(record.portalId);
    const same = earlier?.updatedAt === record.updatedAt && earlier.reason === reason;
    this.failures.set(record.portalId, {
      updatedAt: record.updatedAt,
      reason,
      since: same ? earlier.since : Date.now(),
      attempts: (same ? earlier.attempts : 0) + 1,
    });
    // Once per distinct failure: the sync retries every few seconds.
    if (!same)
      this.logger.warn(
        `portal ${record.portalId}: its services could not be ${this.runtimes.has(record.portalId) ? 'rebuilt (the previous ones keep serving)' : 'built (not served here yet)'}: ${reason}; retried at the next sync`,
      );
  }
}

/** An error's message fit for logs and health: no URL credentials, bounded. */
export function safeReason(error: unknown): string {
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return message.replace(/\/\/[^/@\s]*@/g, '//***@').slice(0, 300);
}
