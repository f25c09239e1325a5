import {
  BadRequestException,
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  NotFoundException,
  Param,
  Patch,
  Post,
  Query,
  UseGuards,
} from '@nestjs/common';
import { AdminTokenGuard } from '../admin/admin-token.guard';
import { PORTAL_ID_PATTERN } from '../config/portal-id';
import { PbxTokenRecord, PortalRecord, PortalStore } from '../store/portal-store';
import { PortalRegistry } from './portal-registry';
import { PortalRuntime } from './portal-runtime';
import { dialView, recordingFetchView } from './portal-dial';
import { followView } from './portal-follow';
import { checkPortalSettings, createPbxToken } from './portal-settings-check';

const MAX_PAGE = 500;

/** What an operator sees of a portal: its record, and where it stands here (never a token). */
export interface PortalView {
  portalId: string;
  domain: string;
  clientEndpoint: string;
  status: PortalRecord['status'];
  installedAt: string;
  uninstalledAt: string | null;
  /** The portal's own settings; `dial` shows only its mode and the PBX's address, `recordingFetch` no secret. */
  settings: Omit<PortalRecord['settings'], 'dial' | 'recordingFetch' | 'follow'> & {
    dial?: ReturnType<typeof dialView>;
    follow?: ReturnType<typeof followView>;
    recordingFetch?: ReturnType<typeof recordingFetchView>;
  };
}

export interface PortalHealth extends PortalView {
  authorisation: { state: string; action?: string } | null;
  /** Whether this replica delivers the portal now (the shard map gave it here and it holds the lease). */
  deliveringHere: boolean;
  delivery: {
    paused: boolean;
    pausedReason?: string;
    lastError?: string;
    batchesInFlight: number;
  } | null;
  queue: { depth: number; failed: number; oldestWaitingSec: number | null };
  /** Portal events (bindings, the line) as the replica delivering the portal saw them; the dialer's PBX. */
  events: Record<string, unknown> | null;
  dialer: Record<string, unknown> | null;
  /** The PBX followers of the portal on this replica (connection state, last error; no secret). */
  follow: ReturnType<PortalRuntime['followStatus']>;
  /**
   * This replica's services for the portal: `serving`, `failed` (never built here: not served), or `stale`
   * (a change could not be applied: the previous services serve); `problems`: own settings not in use.
   */
  runtime: {
    state: 'serving' | 'idle' | 'failed' | 'stale' | 'absent';
    failure?: { reason: string; since: string; attempts: number };
    problems: readonly string[];
  };
}

/**
 * `/v1/admin/portals` (docs/API.md), behind ADMIN_TOKEN: the installed portals, each one's settings and
 * health, and its PBX tokens (shown once, stored as a SHA-256 digest).
 */
@Controller('v1/admin/portals')
@UseGuards(AdminTokenGuard)
export class PortalsController {
  constructor(
    private readonly portals: PortalStore,
    private readonly registry: PortalRegistry,
  ) {}

  @Get()
  async list(
    @Query('after') after?: string,
    @Query('limit') limit = '100',
  ): Promise<{ portals: PortalView[]; next: string | null }> {
    const size = Number(limit);
    if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE) {
      throw new BadRequestException(`limit must be 1 to ${MAX_PAGE}`);
    }
    if (after !== undefined && !PORTAL_ID_PATTERN.test(after)) {
      throw new BadRequestException('after must be a portal id');
    }
    const page = await this.portals.listPortals({ after, limit: size });
    return {
      portals: page.map(viewOf),
      next: page.length === size ? page[page.length - 1].portalId : null,
    };
  }

  @Get(':portalId')
  async get(@Param('portalId') portalId: string): Promise<PortalHealth> {
    const record = await this.find(portalId);
    const runtime = this.registry.get(record.portalId);
    const stats = await this.registry.queueStats(record.portalId);
    const status = runtime?.status();
    return {
      ...viewOf(record),
      authorisation: runtime ? runtime.credentials.authorisation() : null,
      deliveringHere: status?.deliveringHere ?? false,
      delivery: status
        ? {
            paused: status.paused,
            pausedReason: status.pausedReason,
            lastError: status.lastError,
            batchesInFlight: status.batchesInFlight,
          }
        : null,
      events: runtime ? runtime.eventsStatus.view() : null,
      dialer: runtime?.dialer?.dialerStatus ?? null,
      follow: runtime?.followStatus() ?? null,
      runtime: this.runtimeView(record.portalId),
      queue: {
        depth: stats.depth,
        failed: stats.failed,
        oldestWaitingSec: stats.oldestCreatedAt
          ? Math.max(0, Math.round((Date.now() - stats.oldestCreatedAt) / 1000))
          : null,
      },
    };
  }

  private runtimeView(portalId: string): PortalHealth['runtime'] {
    const runtime = this.registry.get(portalId);
    const failure = this.registry.failureOf(portalId);
    return {
      // idle: served, with no services built now (no work for PORTAL_IDLE_SEC); its next work builds them.
      state: failure
        ? runtime
          ? 'stale'
          : 'failed'
        : runtime
          ? 'serving'
          : this.registry.record(portalId)
            ? 'idle'
            : 'absent',
      failure: failure && {
        reason: failure.reason,
        since: new Date(failure.since).toISOString(),
        attempts: failure.attempts,
      },
      problems: runtime?.scoped.problems ?? [],
    };
  }

  @Patch(':portalId')
  async patch(@Param('portalId') portalId: string, @Body() body: unknown): Promise<PortalView> {
    await this.find(portalId);
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new BadRequestException('the body must be a JSON object of settings');
    }
    // The seeded portal's request budget is the environment's (its client outlives its runtimes).
    const plan = ['rateLimitRps', 'rateBurst'].find((name) => name in body);
    if (this.registry.seeded && plan) {
      throw new BadRequestException({
        message: 'invalid portal settings',
        errors: [
          { field: plan, problems: [`${plan}: with one portal, set B24_RATE_LIMIT_RPS/B24_RATE_BURST`] },
        ],
      });
    }
    const checked = await checkPortalSettings(
      body,
      { production: this.registry.production },
      this.registry.egress,
    );
    if ('errors' in checked) {
      throw new BadRequestException({ message: 'invalid portal settings', errors: checked.errors });
    }
    const patch = checked.patch;
    const updated = await this.portals.updateSettings(portalId, { ...patch }, Date.now());
    if (!updated) throw notFound(portalId);
    await this.registry.sync();
    return viewOf(updated);
  }

  @Post(':portalId/pbx-tokens')
  @HttpCode(201)
  async addToken(
    @Param('portalId') portalId: string,
    @Body() body: unknown,
  ): Promise<PbxTokenView & { token: string }> {
    await this.find(portalId);
    const label = labelOf(body);
    const created = await createPbxToken(this.portals, portalId, label);
    if (!created) throw notFound(portalId);
    return { ...tokenView(created.record), token: created.token };
  }

  @Get(':portalId/pbx-tokens')
  async listTokens(@Param('portalId') portalId: string): Promise<{ tokens: PbxTokenView[] }> {
    await this.find(portalId);
    return { tokens: (await this.portals.listPbxTokens(portalId)).map(tokenView) };
  }

  @Delete(':portalId/pbx-tokens/:id')
  @HttpCode(204)
  async revokeToken(@Param('portalId') portalId: string, @Param('id') id: string): Promise<void> {
    await this.find(portalId);
    if (!(await this.portals.revokePbxToken(portalId, id))) {
      throw new NotFoundException(`portal ${portalId} has no PBX token ${JSON.stringify(id.slice(0, 64))}`);
    }
  }

  private async find(portalId: string): Promise<PortalRecord> {
    if (!PORTAL_ID_PATTERN.test(portalId)) {
      throw new BadRequestException('portalId must be a portal id (its member_id)');
    }
    const record = await this.portals.findPortal(portalId);
    if (!record) throw notFound(portalId);
    return record;
  }
}

export interface PbxTokenView {
  id: string;
  label: string | null;
  createdAt: string;
}

export function tokenView(token: PbxTokenRecord): PbxTokenView {
  return { id: token.id, label: token.label ?? null, createdAt: new Date(token.createdAt).toISOString() };
}

export function viewOf(record: PortalRecord): PortalView {
  return {
    portalId: record.portalId,
    domain: record.domain,
    clientEndpoint: record.clientEndpoint,
    status: record.status,
    installedAt: new Date(record.installedAt).toISOString(),
    uninstalledAt: record.uninstalledAt ? new Date(record.uninstalledAt).toISOString() : null,
    settings: settingsView(record.settings),
  };
}

function settingsView(settings: PortalRecord['settings']): PortalView['settings'] {
  const { dial, recordingFetch, follow, ...rest } = settings;
  return {
    ...rest,
    ...(dial && { dial: dialView(dial) }),
    ...(follow && { follow: followView(follow) }),
    ...(recordingFetch && { recordingFetch: recordingFetchView(recordingFetch) }),
  };
}

function labelOf(body: unknown): string | undefined {
  if (body === undefined || body === null || (typeof body === 'object' && Object.keys(body).length === 0)) {
    return undefined;
  }
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new BadRequestException('the body must be {"label": "…"} or empty');
  }
  const { label, ...rest } = body as Record<string, unknown>;
  if (Object.keys(rest).length) {
    throw new BadRequestException(`unknown field ${Object.keys(rest)[0]}: only label`);
  }
  if (label === undefined) return undefined;
  if (typeof label !== 'string' || label.length > 100) {
    throw new BadRequestException('label must be a text of at most 100 characters');
  }
  return label;
}

function notFound(portalId: string): NotFoundException {
  return new NotFoundException(
    `no portal ${JSON.stringify(portalId.slice(0, 100))} installed the application`,
  );
}
