import { Logger } from '@nestjs/common';
import { OAuthCredentials } from '../auth/oauth-credentials';
import { LookupSettings } from '../config/settings';
import { START_UP_LATEST_MS, START_UP_QUIET_MS } from '../portal/budget-idle';
import { PortalClient } from '../portal/portal-client';
import { PortalCredentials } from '../portal/portal-credentials';

/** Rows per page of `user.get` (how real portals behave "Success envelope"). */
const PAGE_SIZE = 50;
/** Until the first copy arrives, try again this often rather than only every EMPLOYEE_REFRESH_SEC. */
const FIRST_LOAD_RETRY_MS = 30_000;

interface PortalUser {
  ID?: unknown;
  ACTIVE?: unknown;
  UF_PHONE_INNER?: unknown;
}

/**
 * Internal numbers (extensions) ↔ portal users, for active employees: read from the portal with `user.get`
 * (every page), held in memory and read again every EMPLOYEE_REFRESH_SEC at background priority. A
 * refresh replaces the copy only when every page arrived, so a failed one keeps the last good copy.
 *
 * The first read buys the calls waiting nothing (a register names its employee by USER_PHONE_INNER, and
 * an unknown one is re-routed on its answer), so it waits until the portal's budget has room they would
 * not use, or until something needs the copy (`loadNow`: a lookup's match, a ring group's card, a click,
 * a followed PBX), or a minute after start (EMPLOYEE_REFRESH_SEC if sooner) at the latest.
 */
export class EmployeeDirectory {
  private readonly logger = new Logger('EmployeeDirectory');
  private readonly refreshMs: number;
  private userByExtension = new Map<string, number>();
  private extensionByUser = new Map<number, string>();
  private loadedAt?: number;
  private readonly firstLoad: Promise<void>;
  private markLoaded: () => void = () => undefined;
  private timer?: NodeJS.Timeout;
  private loading = false;
  private readonly stopping = new AbortController();
  private stopListening?: () => void;

  constructor(
    private readonly client: PortalClient,
    settings: LookupSettings,
    private readonly credentials: PortalCredentials,
  ) {
    this.refreshMs = settings.employeeRefreshMs;
    this.firstLoad = new Promise((resolve) => (this.markLoaded = resolve));
  }

  /** Reads the directory once the budget is idle or the copy is needed, then every EMPLOYEE_REFRESH_SEC. */
  start(): void {
    // OAuth: the read at start has no tokens until the application is installed; read as soon as it is,
    // rather than at the next retry.
    if (this.credentials instanceof OAuthCredentials) {
      this.stopListening = this.credentials.onGrant(() => this.loadNow());
    }
    this.client.budget.whenIdle(START_UP_QUIET_MS, START_UP_LATEST_MS, this.stopping.signal).then(
      () => this.loadNow(),
      () => undefined,
    );
    this.timer = setTimeout(() => this.loadNow(), this.refreshMs);
    this.timer.unref();
  }

  close(): void {
    clearTimeout(this.timer);
    this.stopping.abort();
    this.stopListening?.();
  }

  /** Whether a copy has been read from the portal yet. */
  get loaded(): boolean {
    return this.loadedAt !== undefined;
  }

  /**
   * The directory is needed before its first copy (the application was just installed, a click waits for
   * its employee's extension, a card names internal numbers): read now instead of when the budget is idle
   * or at the next retry, unless a read is under way.
   */
  loadNow(): void {
    if (this.loaded || this.loading || this.stopping.signal.aborted) return;
    clearTimeout(this.timer);
    void this.refreshAndReschedule();
  }

  /** Resolves once the first copy has been read. */
  whenLoaded(): Promise<void> {
    return this.firstLoad;
  }

  /** The active employee with this internal number (the lowest user id when several share it). */
  userIdFor(extension: string): number | undefined {
    return this.userByExtension.get(extension.trim());
  }

  /** The internal number of an active employee; undefined for inactive or unknown users. */
  extensionOf(userId: number | null | undefined): string | undefined {
    return userId === null || userId === undefined ? undefined : this.extensionByUser.get(userId);
  }

  /** Reads every page; the copy in memory changes only when all of them arrived. */
  async refresh(): Promise<void> {
    const users = await this.readActiveUsers();
    const userByExtension = new Map<string, number>();
    const extensionByUser = new Map<number, string>();
    for (const user of users.sort((a, b) => a.id - b.id)) {
      extensionByUser.set(user.id, user.extension);
      if (!userByExtension.has(user.extension)) userByExtension.set(user.extension, user.id);
    }
    this.userByExtension = userByExtension;
    this.extensionByUser = extensionByUser;
    this.loadedAt = Date.now();
    this.markLoaded();
  }

  private async refreshAndReschedule(): Promise<void> {
    let nextInMs = this.refreshMs;
    this.loading = true;
    try {
      await this.refresh();
    } catch (error) {
      if (this.stopping.signal.aborted) return;
      const kept = this.loaded ? 'keeping the last copy' : 'no copy yet, so lookups name no extensions';
      if (!this.loaded) nextInMs = Math.min(this.refreshMs, FIRST_LOAD_RETRY_MS);
      this.logger.warn(
        `reading employees from the portal failed (${(error as Error).message}); ${kept}; ` +
          `trying again in ${Math.round(nextInMs / 1000)} s`,
      );
    }
    this.loading = false;
    if (this.stopping.signal.aborted) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.refreshAndReschedule(), nextInMs);
    this.timer.unref();
  }

  private async readActiveUsers(): Promise<{ id: number; extension: string }[]> {
    const users = new Map<number, string>();
    const seen = new Set<number>();
    for (let start = 0; ; start += PAGE_SIZE) {
      const page = await this.client.call<PortalUser[]>(
        'user.get',
        { FILTER: { ACTIVE: true }, sort: 'ID', order: 'ASC', start },
        { priority: 'background', signal: this.stopping.signal },
      );
      const rows = Array.isArray(page) ? page : [];
      let added = 0;
      for (const row of rows) {
        const id = Number(row.ID);
        const inner = row.UF_PHONE_INNER;
        const extension = typeof inner === 'string' || typeof inner === 'number' ? String(inner).trim() : '';
        const active = row.ACTIVE === true || row.ACTIVE === 'Y';
        if (!Number.isInteger(id) || seen.has(id)) continue;
        seen.add(id);
        added += 1;
        if (active && extension !== '') users.set(id, extension);
      }
      // A short page is the last; a page with nothing new means the portal ignored `start`.
      if (rows.length < PAGE_SIZE || added === 0) break;
    }
    return [...users].map(([id, extension]) => ({ id, extension }));
  }
}
