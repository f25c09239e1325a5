import { Injectable } from '@nestjs/common';
import { PortalBudget } from '../portal/budget-waiters';
import { PortalRegistry } from '../tenancy/portal-registry';
import { checkPortalSettingsShape, createPbxToken } from '../tenancy/portal-settings-check';
import { PortalStore } from '../store/portal-store';
import { ConnectionLine, PageEmployee, PagePortal, PageSettings, PageSource, PageToken } from './page-source';
import { readEmployees } from './employees';
import { dialPageView, followLine, followPageView } from './page-views';
import { storedTokens, storeSettings } from './stored-settings';

/** The page with many portals: each portal's record, runtime and PBX tokens, as `/v1/admin/portals` has them. */
@Injectable()
export class RegistryPageSource extends PageSource {
  constructor(
    private readonly portals: PortalStore,
    private readonly registry: PortalRegistry,
  ) {
    super();
  }

  async portal(portalId: string): Promise<PagePortal | undefined> {
    const record = await this.portals.findPortal(portalId);
    return (
      record && {
        portalId: record.portalId,
        domain: record.domain,
        clientEndpoint: record.clientEndpoint,
        active: record.status === 'active',
        installation: `installed ${record.installedAt}`,
      }
    );
  }

  async budget(portalId: string): Promise<PortalBudget | undefined> {
    return (await this.registry.use(portalId))?.client.budget;
  }

  async connection(portalId: string): Promise<ConnectionLine[]> {
    const record = await this.portals.findPortal(portalId);
    // The check tests the portal's services: an idle portal's are built for it.
    const runtime = record?.status === 'active' ? await this.registry.use(portalId) : undefined;
    const failure = this.registry.failureOf(portalId);
    if (!record || record.status !== 'active') {
      return [{ key: 'portalState', ok: false, detail: 'uninstalled' }];
    }
    const authorisation = runtime?.credentials.authorisation();
    const lines: ConnectionLine[] = [
      {
        key: 'portalState',
        ok: authorisation?.state === 'authorised',
        detail: authorisation
          ? [authorisation.state, authorisation.action].filter(Boolean).join(': ')
          : (failure?.reason ?? 'not served yet'),
      },
    ];
    const status = runtime?.status();
    lines.push({
      key: 'delivery',
      ok: status ? !status.paused && !failure : null,
      detail: status
        ? [status.paused ? `paused: ${status.pausedReason ?? ''}` : 'running', status.lastError]
            .filter(Boolean)
            .join('; ')
        : (failure?.reason ?? 'another instance of the bridge delivers to this portal'),
    });
    if (runtime) {
      const events = runtime.eventsStatus;
      lines.push({
        key: 'events',
        ok: events.lastError ? false : events.boundAt !== null ? true : null,
        detail: events.lastError ?? '',
        events: events.lastError
          ? undefined
          : {
              mode: events.mode,
              line: events.line ?? runtime.scoped.events.lineNumber,
              bound: events.boundEvents.length,
            },
      });
    }
    const follow = runtime?.followStatus();
    if (follow) lines.push(followLine(follow));
    else if (record.settings.follow) {
      lines.push({ key: 'pbxFollow', ok: null, detail: failure?.reason ?? 'not served yet' });
    }
    const dialer = runtime?.dialer?.dialerStatus;
    lines.push({
      key: 'dialer',
      ok: dialer ? dialer.pbxReachable !== false : null,
      detail: dialer ? `${dialer.mode} ${dialer.target ?? ''} ${dialer.lastError ?? ''}`.trim() : '',
    });
    return lines;
  }

  async employees(portalId: string): Promise<PageEmployee[] | undefined> {
    const runtime = await this.registry.use(portalId);
    return runtime ? readEmployees(runtime.client) : undefined;
  }

  async settings(portalId: string): Promise<PageSettings> {
    const settings = (await this.portals.findPortal(portalId))?.settings ?? {};
    return {
      editable: true,
      defaultUserId: settings.defaultUserId,
      defaultCountry: settings.defaultCountry,
      missedCallTask: settings.missedCallTask,
      transcribe: settings.transcribe,
      lineNumber: settings.lineNumber,
      lines: settings.lines,
      dial: dialPageView(settings.dial),
      follow: followPageView(settings.follow),
    };
  }

  checkSettings(body: Record<string, unknown>) {
    // A test, storing nothing: the shape checks only; the test's connections go through the egress gate.
    const checked = checkPortalSettingsShape(
      body,
      { production: this.registry.production },
      this.registry.egress,
    );
    return 'errors' in checked ? checked : { patch: { ...checked.patch } };
  }

  updateSettings(portalId: string, body: Record<string, unknown>) {
    return storeSettings(this.portals, this.registry, portalId, body);
  }

  tokens(portalId: string): Promise<PageToken[]> {
    return storedTokens(this.portals, portalId);
  }

  async createToken(
    portalId: string,
    label: string | undefined,
  ): Promise<{ id: string; token: string } | undefined> {
    const created = await createPbxToken(this.portals, portalId, label);
    return created && { id: created.record.id, token: created.token };
  }

  revokeToken(portalId: string, id: string): Promise<boolean> {
    return this.portals.revokePbxToken(portalId, id);
  }

  async storedDial(portalId: string): Promise<Record<string, string> | undefined> {
    return (await this.portals.findPortal(portalId))?.settings.dial;
  }

  async storedFollow(portalId: string): Promise<Record<string, string> | undefined> {
    return (await this.portals.findPortal(portalId))?.settings.follow;
  }
}
