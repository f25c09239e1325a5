import {
  BadRequestException,
  Body,
  Controller,
  Get,
  HttpCode,
  Logger,
  Post,
  Query,
  UnauthorizedException,
  UseGuards,
} from '@nestjs/common';
import { AdminTokenGuard } from '../admin/admin-token.guard';
import { BridgeMetrics } from '../metrics/bridge-metrics';
import { PortalEventStore } from '../store/portal-event-store';
import { PortalEventRouting } from './portal-event-routing';
import { bodyOf, dedupeKeyOf, kindOf, UNINSTALL_EVENT } from './portal-event';

/** What `GET /v1/admin/portal-events` shows of an event: never the auth fields (they are not stored). */
export interface PortalEventView {
  id: number;
  event: string;
  state: string;
  attempts: number;
  receivedAt: string;
  settledAt: string | null;
  lastError: string | null;
  data: unknown;
}

/** What `POST /v1/portal/events` answers. */
export interface PortalEventReceipt {
  event: string;
  stored: boolean;
  duplicate?: boolean;
  /** ONAPPUNINSTALL: the portal is paused (nothing more is sent to it) before this answer. */
  paused?: boolean;
}

/**
 * `POST /v1/portal/events`: the portal's event posts (docs/API.md). A post is taken only with the right
 * application token, stored durably, then answered 200; the processor handles it in the background.
 * ONAPPUNINSTALL (docs/API.md) is not stored: it pauses the portal on every replica before the answer.
 */
@Controller()
export class PortalEventsController {
  private readonly logger = new Logger(PortalEventsController.name);

  constructor(
    private readonly store: PortalEventStore,
    private readonly routing: PortalEventRouting,
    private readonly metrics: BridgeMetrics,
  ) {}

  @Post('v1/portal/events')
  @HttpCode(200)
  async receive(@Body() form: unknown): Promise<PortalEventReceipt> {
    const portalId = await this.routing.portalOf(form);
    if (portalId === undefined) {
      this.metrics.portalEvents.inc({ event: 'any', outcome: 'refused' });
      this.logger.warn('a portal event post without the expected application token was refused');
      throw new UnauthorizedException('the application token of the post is not the expected one');
    }
    const body = bodyOf(form);
    if (!body) throw new BadRequestException('the post names no event');
    if (body.event === UNINSTALL_EVENT) {
      const paused = await this.routing.uninstall(portalId);
      this.metrics.portalEvents.inc({ event: body.event, outcome: paused ? 'paused' : 'unknown' });
      return { event: body.event, stored: false, paused };
    }
    if (!kindOf(body.event)) {
      this.metrics.portalEvents.inc({ event: 'other', outcome: 'unknown' });
      return { event: body.event, stored: false };
    }
    const receivedAt = Date.now();
    const { duplicate } = await this.store.add({
      portalId,
      dedupeKey: dedupeKeyOf(body),
      event: body.event,
      payload: JSON.stringify({ data: body.data, ts: body.ts }),
      receivedAt,
    });
    this.metrics.portalEvents.inc({ event: body.event, outcome: duplicate ? 'duplicate' : 'stored' });
    if (!duplicate) this.routing.stored(portalId);
    return { event: body.event, stored: true, ...(duplicate ? { duplicate } : {}) };
  }

  /** The newest portal events and how they were handled, for operators (ADMIN_TOKEN). */
  @Get('v1/admin/portal-events')
  @UseGuards(AdminTokenGuard)
  async list(
    @Query('limit') limit = '100',
    @Query('portal') portal?: string,
  ): Promise<{ events: PortalEventView[] }> {
    const portalId = this.routing.listed(portal);
    const size = Number(limit);
    if (!Number.isInteger(size) || size < 1 || size > 1000) {
      throw new BadRequestException('limit must be 1 to 1000');
    }
    const events = await this.store.list(portalId, size);
    return {
      events: events.map((event) => ({
        id: event.id,
        event: event.event,
        state: event.state,
        attempts: event.attempts,
        receivedAt: new Date(event.receivedAt).toISOString(),
        settledAt: event.settledAt === undefined ? null : new Date(event.settledAt).toISOString(),
        lastError: event.lastError ?? null,
        data: (JSON.parse(event.payload) as { data?: unknown }).data ?? null,
      })),
    };
  }
}
