/** One /rest request as the inspection API shows it. */
export interface RequestLogEntry {
  /** Arrival, ms since the epoch (sandbox clock). */
  at: number;
  path: string;
  /** The REST method called (lower case), or `batch`. */
  method: string;
  /** 1, or the number of commands of a batch. */
  commands: number;
  status: number;
  error: string | null;
  auth: 'webhook' | 'oauth' | null;
}

export interface RequestStats {
  requests: number;
  byStatus: Record<string, number>;
  queryLimitExceeded: number;
  /** The most /rest requests that arrived within one wall-clock second (whatever their outcome). */
  maxRequestsInAnySecond: number;
  /** Commands of requests that passed the budget and authentication (a batch of 50 counts 50). */
  commands: number;
  codeExchanges: number;
  tokenRefreshes: number;
  /** Refresh attempts with a refresh token that had already been used or revoked. */
  refreshTokenReuse: number;
  /** Calls and batch commands refused with OPERATION_TIME_LIMIT (their method over its operating time). */
  operationTimeLimited: number;
}

/**
 * The request log, bounded to the newest `limit` entries so long benchmarks keep memory flat;
 * the counters cover every request since the last reset.
 */
export class RequestLog {
  private entries: RequestLogEntry[] = [];
  private stats = RequestLog.emptyStats();
  private currentSecond = -1;
  private requestsThisSecond = 0;

  constructor(private readonly limit: number) {}

  record(entry: RequestLogEntry, executedCommands: number): void {
    this.entries.push(entry);
    if (this.entries.length > this.limit) this.entries.splice(0, this.entries.length - this.limit);
    this.stats.requests += 1;
    this.stats.byStatus[entry.status] = (this.stats.byStatus[entry.status] ?? 0) + 1;
    if (entry.error === 'QUERY_LIMIT_EXCEEDED') this.stats.queryLimitExceeded += 1;
    this.stats.commands += executedCommands;
    this.countArrival(entry.at);
  }

  countOperatingLimited(): void {
    this.stats.operationTimeLimited += 1;
  }

  countOAuth(kind: 'codeExchanges' | 'tokenRefreshes' | 'refreshTokenReuse'): void {
    this.stats[kind] += 1;
  }

  list(sinceMs?: number): RequestLogEntry[] {
    return sinceMs === undefined ? [...this.entries] : this.entries.filter((entry) => entry.at >= sinceMs);
  }

  snapshot(): RequestStats {
    return { ...this.stats, byStatus: { ...this.stats.byStatus } };
  }

  reset(): void {
    this.entries = [];
    this.stats = RequestLog.emptyStats();
    this.currentSecond = -1;
    this.requestsThisSecond = 0;
  }

  private countArrival(at: number): void {
    const second = Math.floor(at / 1000);
    if (second !== this.currentSecond) {
      this.currentSecond = second;
      this.requestsThisSecond = 0;
    }
    this.requestsThisSecond += 1;
    this.stats.maxRequestsInAnySecond = Math.max(this.stats.maxRequestsInAnySecond, this.requestsThisSecond);
  }

  private static emptyStats(): RequestStats {
    return {
      requests: 0,
      byStatus: {},
      queryLimitExceeded: 0,
      maxRequestsInAnySecond: 0,
      commands: 0,
      codeExchanges: 0,
      tokenRefreshes: 0,
      refreshTokenReuse: 0,
      operationTimeLimited: 0,
    };
  }
}
