/**
 * The seam between the portal's events and the PBX side of click-to-call (docs/API.md). The portal-events
 * processor turns a stored `ONEXTERNALCALLSTART` or `ONEXTERNALCALLBACKSTART` into a `PortalClick` and
 * publishes it on the `ClickBus`; the dialer (asks the PBX to ring and dial) and the click registry (matches
 * the PBX's later report of that call to the portal's CALL_ID) subscribe. Pure data and an in-process bus:
 * durability is the publisher's (the event stays stored until every handler has taken the click), and every
 * handler must be idempotent by `portalCallId` (a click may be published again after a crash).
 */

/** A click on a number in the CRM (`click`), or a visitor's callback request (`callback`). */
export interface PortalClick {
  portalId: string;
  kind: 'click' | 'callback';
  /** The portal's CALL_ID: the portal registered the call already; the bridge only finishes it. */
  portalCallId: string;
  /** The employee who clicked (`click`); for a callback the portal names none (the responsible is looked up). */
  userId?: number;
  /** The number to dial, E.164 when it parses, else as the portal sent it. */
  phoneNumber: string;
  crmEntityType?: string;
  crmEntityId?: number;
  lineNumber?: string;
  /**
   * When the employee clicked, ms epoch: when the bridge received the event, kept within the second of the
   * portal's whole-second `ts` (else the receipt alone).
   */
  clickedAt: number;
}

export type ClickHandler = (click: PortalClick) => Promise<void>;

/** When a handler runs within one publish: every `record` handler first, then every `act` handler. */
export type ClickPhase = 'record' | 'act';
const PHASES: readonly ClickPhase[] = ['record', 'act'];

/** In-process publish/subscribe for clicks; provided once, globally (`ClicksModule`). */
export class ClickBus {
  private readonly handlers: { name: string; handle: ClickHandler; phase: ClickPhase }[] = [];

  /**
   * Registers a handler under a name (for logs and the events' `lastError`); call from onModuleInit.
   * `record` handlers (the click registry) run before `act` handlers (the dialer), whatever the modules'
   * start order: a click is kept for matching before anything can make the PBX report its call.
   */
  subscribe(name: string, handle: ClickHandler, phase: ClickPhase = 'act'): void {
    this.handlers.push({ name, handle, phase });
    this.handlers.sort((a, b) => PHASES.indexOf(a.phase) - PHASES.indexOf(b.phase));
  }

  /** The handlers' names; none means click-to-call is off (the event is acknowledged and counted). */
  get subscribers(): string[] {
    return this.handlers.map((handler) => handler.name);
  }

  /**
   * Whether anything acts on a click (the dialer, with DIAL_MODE). Without, clicks are only recorded (a
   * number the employee then dials by hand still finishes the portal's call), and click-to-call is off.
   */
  get acting(): boolean {
    return this.handlers.some((handler) => handler.phase === 'act');
  }

  /** Hands the click to every handler; rejects (naming the handler) if any does, so the event is retried. */
  async publish(click: PortalClick): Promise<void> {
    for (const { name, handle } of this.handlers) {
      try {
        await handle(click);
      } catch (error) {
        throw new Error(`${name}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }
}
