import {
  BadRequestException,
  ConflictException,
  Controller,
  Get,
  HttpCode,
  Inject,
  NotFoundException,
  Param,
  Post,
  Query,
  UseGuards,
} from '@nestjs/common';
import { CallState } from '../calls/call';
import { CallStatusView, toStatusView } from '../calls/call-status';
import { WorkSignal } from '../common/work-signal';
import { AppConfig } from '../config/app-config';
import { PORTAL_ID, PORTAL_ID_PATTERN } from '../config/portal-id';
import { DeliverySettings } from '../config/settings';
import { CallStore } from '../store/call-store';
import { AdminTokenGuard } from './admin-token.guard';
import { requeueAllFailed, requeueCalls, RequeueDeps } from './requeue';

const STATES: CallState[] = ['queued', 'registered', 'finished', 'failed', 'ignored'];

/**
 * Operators list calls (failed ones above all) and send failed ones back to delivery, which hears of them
 * through WorkSignal.
 */
@Controller('v1/admin')
@UseGuards(AdminTokenGuard)
export class AdminController {
  constructor(
    private readonly store: CallStore,
    private readonly signal: WorkSignal,
    private readonly delivery: DeliverySettings,
    @Inject(PORTAL_ID) private readonly portalId: string,
    private readonly config: AppConfig,
  ) {}

  /** `?portal=`: which portal's calls; required with many portals, else PORTAL_ID's. */
  private portalOf(portal: string | undefined): string {
    if (portal !== undefined && !PORTAL_ID_PATTERN.test(portal)) {
      throw new BadRequestException('portal must be a portal id');
    }
    if (this.config.B24_APP_MODE !== 'multi') return portal ?? this.portalId;
    if (!portal) {
      throw new BadRequestException('portal is required with B24_APP_MODE=multi (?portal=<member_id>)');
    }
    return portal;
  }

  @Get('calls')
  async listCalls(
    @Query('state') state = 'failed',
    @Query('limit') limit = '100',
    @Query('portal') portal?: string,
  ): Promise<{ calls: CallStatusView[] }> {
    const portalId = this.portalOf(portal);
    if (!STATES.includes(state as CallState)) {
      throw new BadRequestException(`state must be one of ${STATES.join(', ')}`);
    }
    const size = Number(limit);
    if (!Number.isInteger(size) || size < 1 || size > 1000) {
      throw new BadRequestException('limit must be 1 to 1000');
    }
    const calls = await this.store.listCalls(portalId, state as CallState, size);
    return { calls: calls.map(toStatusView) };
  }

  @Post('calls/:callId/requeue')
  @HttpCode(200)
  async requeueCall(
    @Param('callId') callId: string,
    @Query('portal') portal?: string,
  ): Promise<CallStatusView> {
    const portalId = this.portalOf(portal);
    const existing = await this.store.findCall(portalId, callId);
    if (!existing) {
      throw new NotFoundException(`the bridge never heard of call ${JSON.stringify(callId.slice(0, 128))}`);
    }
    if (existing.delivery.state !== 'failed') {
      throw new ConflictException(`call is ${existing.delivery.state}, only failed calls are re-queued`);
    }
    const { calls } = await requeueCalls(this.requeueDeps(), portalId, [callId]);
    return toStatusView(calls[0]);
  }

  @Post('calls/requeue-failed')
  @HttpCode(200)
  async requeueFailed(@Query('portal') portal?: string): Promise<{ requeued: number }> {
    return { requeued: await requeueAllFailed(this.requeueDeps(), this.portalOf(portal)) };
  }

  private requeueDeps(): RequeueDeps {
    const { store: calls, signal, delivery } = this;
    return { calls, signal, holdEndedWithoutStartMs: delivery.holdEndedWithoutStartMs };
  }
}
