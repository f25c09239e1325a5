import { Logger } from '@nestjs/common';
import { OAuthCredentials } from '../auth/oauth-credentials';
import { LineBook } from '../common/lines';
import { START_UP_LATEST_MS, START_UP_QUIET_MS } from '../portal/budget-idle';
import { PortalClient } from '../portal/portal-client';
import { PortalCredentials } from '../portal/portal-credentials';
import { PortalError } from '../portal/portal-error';
import { LineStore } from '../store/line-store';

/** After a failed add (the portal down, limited, the grant not there yet) the lines are tried again this late. */
const RETRY_MS = 30_000;
/** While another replica is the owner (or the portal is not authorised yet), looked at again this often. */
const OWNER_LOOK_MS = 1000;

/** What a portal's line keeper is built from. */
export interface PortalLinesDeps {
  portalId: string;
  client: PortalClient;
  credentials: PortalCredentials;
  store: LineStore;
  /** The portal's lines: the configured rules, and the default line (B24_LINE_NUMBER, kept by the binder). */
  lines: LineBook;
  /** The line the event binder keeps on the portal (`PortalEventBinder`, B24_LINE_NUMBER): not added twice. */
  boundLine?: string;
}

/**
 * OAuth mode (docs/API.md "Lines"): keeps the portal's own list of lines in step with the lines the bridge configured
 * (LINES, except those kept off the portal with `"report": false`) and those its registered calls were
 * filed under: `telephony.externalLine.add` once per new line, never per call, remembered in the store
 * (`LineStore`) so a restart or another replica does not add it again. One small worker per portal on the
 * replica that delivers it (as the event binder): its adds go through the portal client at background
 * priority, inside the portal's request budget, behind lookups and ringing calls. Webhook mode does nothing
 * (the portal refuses externalLine.* without an application's authorisation).
 */
export class PortalLines {
  private readonly logger: Logger;
  /** Numbers to add, with the name each goes by. */
  private readonly wanted = new Map<string, string>();
  private added?: Set<string>;
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;
  /** The start's wait for an idle budget is over: adds may leave. */
  private started = false;
  private readonly closing = new AbortController();
  /** Whether this replica owns the portal (single mode: the lease holder); unset: this one. */
  owns?: () => boolean;

  constructor(private readonly deps: PortalLinesDeps) {
    this.logger = new Logger(`Lines ${deps.portalId}`);
  }

  private get oauth(): OAuthCredentials | undefined {
    return this.deps.credentials instanceof OAuthCredentials ? this.deps.credentials : undefined;
  }

  /**
   * The configured lines, added once this replica owns the portal and holds tokens, and the budget has room
   * the calls do not need (a call is registered on its line whether the list has it yet or not).
   */
  start(): void {
    if (!this.oauth) return;
    for (const [line, rule] of this.deps.lines.byLine) {
      if (rule.report !== false) this.want(line, rule.name);
    }
    this.deps.client.budget.whenIdle(START_UP_QUIET_MS, START_UP_LATEST_MS, this.closing.signal).then(
      () => {
        this.started = true;
        this.soon(0);
      },
      () => undefined,
    );
  }

  /** A call was registered on `line`: added to the portal's list if it is not there yet. */
  seen(line: string): void {
    if (!this.oauth || this.stopped) return;
    if (this.added?.has(line) || this.wanted.has(line)) return;
    if (this.want(line, this.deps.lines.byLine.get(line)?.name)) this.soon(0);
  }

  /** Lines waiting for their add (for tests and health). */
  get pending(): string[] {
    return [...this.wanted.keys()];
  }

  get busy(): boolean {
    return this.running !== undefined;
  }

  async close(): Promise<void> {
    this.stopped = true;
    this.closing.abort();
    clearTimeout(this.timer);
    await this.running;
  }

  private want(line: string, name: string | undefined): boolean {
    if (line === this.deps.boundLine || line === this.deps.lines.defaultLine) return false;
    this.wanted.set(line, name ?? line);
    return true;
  }

  private soon(delayMs: number): void {
    if (this.stopped || !this.started || this.wanted.size === 0) return;
    // A run under way looks again at its end while anything is still wanted.
    if (this.running) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.running = this.sync()
        .catch((error: unknown) => {
          const reason = (error as Error).message;
          this.logger.warn(`adding lines to the portal failed: ${reason}; again in ${RETRY_MS / 1000} s`);
          return RETRY_MS;
        })
        .then((next) => {
          this.running = undefined;
          this.soon(next ?? 0);
        });
    }, delayMs);
    this.timer.unref();
  }

  /** Adds what is wanted and not added yet; the delay before the next look, or undefined when done. */
  private async sync(): Promise<number | undefined> {
    const owner = this.owns?.() ?? true;
    if (!owner || this.oauth?.authorisation().state !== 'authorised') return OWNER_LOOK_MS;
    this.added ??= new Set(await this.deps.store.added(this.deps.portalId));
    for (const [line, name] of [...this.wanted]) {
      if (this.stopped) return undefined;
      if (!this.added.has(line)) {
        try {
          await this.deps.client.call(
            'telephony.externalLine.add',
            { NUMBER: line, NAME: name },
            { priority: 'background' },
          );
        } catch (error) {
          // Refused for good (not a number the portal takes): not asked again until the bridge restarts.
          if (!(error instanceof PortalError) || error.retryable) throw error;
          this.logger.warn(`the portal refused line ${line}: ${error.message}`);
          this.wanted.delete(line);
          continue;
        }
        await this.deps.store.noteAdded(this.deps.portalId, line, name, Date.now());
        this.added.add(line);
        this.logger.log(`line ${line} added to the portal's lines`);
      }
      this.wanted.delete(line);
    }
    return undefined;
  }
}
