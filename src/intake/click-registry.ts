import { ClickBus, PortalClick } from '../clicks/click';
import { CallStore } from '../store/call-store';

/**
 * Click-to-call (docs/API.md): keeps every click the portal published, so the PBX's later report of the call
 * (without a CRM_CALL_ID) can be matched to it at intake (click-match.ts). Idempotent by CALL_ID: the
 * publisher may hand the same click again after a crash. Each portal's runtime has its own bus and registry:
 * a click is stored under its portal.
 */
export class ClickRegistry {
  constructor(
    private readonly bus: ClickBus,
    private readonly store: CallStore,
    private readonly portalId: string,
  ) {}

  /** Subscribes to the bus: from now on every click published is kept. */
  open(): void {
    this.bus.subscribe('click-registry', (click) => this.keep(click), 'record');
  }

  async keep(click: PortalClick): Promise<void> {
    await this.store.saveClick(click.portalId || this.portalId, {
      portalCallId: click.portalCallId,
      userId: click.userId,
      phoneNumber: click.phoneNumber,
      clickedAt: click.clickedAt,
    });
  }
}
