import { RecordUrlDownload } from './record-url-download';
import { CallRegistry } from './call-registry';
import { EventHub } from './event-hub';
import { SandboxClock } from './clock';
import { CredentialStore } from './credentials';
import { CrmStore } from './crm-store';
import { FaultInjector } from './faults';
import { OperatingCharge, OperatingTimeLedger } from './operating-time';
import { SandboxRateLimiter } from './rate-limiter';
import { RequestLog } from './request-log';
import { SandboxSeed } from './seed';
import { TaskStore } from './task-store';
import { TranscriptStore } from './transcript-store';
import { SandboxUserDirectory } from './user-directory';

export interface PortalStateOptions {
  seed: SandboxSeed;
  rateLimitRps: number;
  rateBurst: number;
  accessTokenTtlSec: number;
  expiredTokenError: string;
  requestLogLimit: number;
  /** Server time per command (ms) and the operating-time limit (how real portals behave "Errors"). */
  commandMs: number;
  operatingWindowSec: number;
  operatingLimitSec: number;
  /** How server time is charged (`run`, `batch-whole`, or the `batch-upfront` faults). */
  operatingCharge?: OperatingCharge;
}

/** Where the portal is reachable; known once the server listens. */
export interface PortalIdentity {
  url: string;
  domain: string;
  memberId: string;
}

/**
 * Everything one sandbox portal knows: its data (employees, CRM, tasks, calls), its credentials, and the
 * test machinery (clock, budget, faults, request log). The HTTP layers and in-process tests share it.
 */
export class PortalState {
  readonly clock = new SandboxClock();
  readonly now = () => this.clock.now();
  readonly budget: SandboxRateLimiter;
  readonly faults = new FaultInjector(this.now);
  readonly requestLog: RequestLog;
  readonly operating: OperatingTimeLedger;
  readonly credentials: CredentialStore;
  readonly calls = new CallRegistry();
  /** Transcripts attached to finished calls (telephony.call.attachTranscription). */
  readonly transcripts = new TranscriptStore();
  /** Bound handlers, the offline queue, the outbound webhook and the applications' lines. */
  readonly events: EventHub = new EventHub(this);
  employees: SandboxUserDirectory;
  crm: CrmStore;
  tasks: TaskStore;
  identity: PortalIdentity = { url: '', domain: '', memberId: '' };

  /**
   * Off by default (tests of other things attach made-up URLs): when on, attachRecord tries its RECORD_URL
   * once while answering and fails the command when the download fails, as portals do.
   */
  downloadRecordUrls = false;
  /** RECORD_URL → what trying it gave, filled right before a request's commands run. */
  readonly recordUrlDownloads = new Map<string, RecordUrlDownload>();

  constructor(private readonly options: PortalStateOptions) {
    this.budget = new SandboxRateLimiter(options.rateLimitRps, options.rateBurst, this.now);
    this.requestLog = new RequestLog(options.requestLogLimit);
    this.operating = new OperatingTimeLedger({
      commandMs: options.commandMs,
      windowSec: options.operatingWindowSec,
      limitSec: options.operatingLimitSec,
      charge: options.operatingCharge ?? 'run',
    });
    this.credentials = new CredentialStore({
      accessTokenTtlMs: options.accessTokenTtlSec * 1000,
      expiredTokenError: options.expiredTokenError,
    });
    this.employees = new SandboxUserDirectory([]);
    this.crm = new CrmStore({ LEAD: [], CONTACT: [], COMPANY: [], DEAL: [] });
    this.tasks = new TaskStore();
    this.restoreSeed();
  }

  setAddress(url: string): void {
    this.identity = { url, domain: new URL(url).host, memberId: this.options.seed.memberId };
  }

  /** A tenant portal's address: its own URL (a path under the sandbox) and a domain that is only a name. */
  setIdentity(identity: PortalIdentity): void {
    this.identity = { ...identity };
  }

  /**
   * Back to the seeded data with no calls, log, faults, budget or operating-time use (the performance
   * settings stay). Issued OAuth tokens stay valid.
   */
  reset(): void {
    this.calls.clear();
    this.transcripts.clear();
    this.events.clear();
    this.requestLog.reset();
    this.faults.clear();
    this.budget.reset();
    this.operating.reset();
    this.restoreSeed();
  }

  private restoreSeed(): void {
    const seed = structuredClone(this.options.seed);
    this.employees = new SandboxUserDirectory(seed.employees);
    this.crm = new CrmStore({
      LEAD: seed.leads,
      CONTACT: seed.contacts,
      COMPANY: seed.companies,
      DEAL: seed.deals,
    });
    this.tasks = new TaskStore();
    this.credentials.load(seed.webhooks, seed.apps);
  }
}
