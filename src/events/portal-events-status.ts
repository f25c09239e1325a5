/** What the portal-events side reports in /health/ready's details (OAuth mode: bindings and the line). */
export class PortalEventsStatus {
  mode: 'webhook' | 'online' | 'offline' = 'webhook';
  /** Handlers bound at the last successful binding (OAuth mode). */
  boundEvents: string[] = [];
  boundAt: number | null = null;
  line: string | null = null;
  lastError: string | null = null;
  /** Offline mode: events taken from the portal's queue since start. */
  offlineFetched = 0;

  view(): Record<string, unknown> {
    return {
      mode: this.mode,
      boundEvents: this.boundEvents.length,
      boundAt: this.boundAt === null ? null : new Date(this.boundAt).toISOString(),
      line: this.line,
      lineAction:
        this.line === null
          ? null
          : `choose line ${this.line} as the default number for outgoing calls (Telephony > Settings, or each ` +
            "user's own settings): the portal sends click-to-call (ONEXTERNALCALLSTART) only to that application",
      lastError: this.lastError,
      offlineFetched: this.offlineFetched,
    };
  }
}
