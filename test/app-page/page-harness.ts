import { Browser, BrowserContext, Frame, Page } from 'playwright-core';
import { SandboxPortal, SandboxTenant } from '../../sandbox';
import { ADMIN_TOKEN } from '../support/bridge-harness';
import { install, MultiBridge, startMultiBridge, tempDir } from '../support/multi-harness';
import { launchChromium, PortalFrameHost } from './portal-frame';

/** A portal's record from the admin API, as far as the specs read it. */
export interface PortalRecord {
  settings: Record<string, unknown>;
  follow?: { connected?: boolean; [field: string]: unknown }[];
  [field: string]: unknown;
}

type TenantOptions = NonNullable<Parameters<SandboxPortal['addPortal']>[0]>;

export interface PortalPagesOptions {
  /** The portals that install the application, by name; their domain is the frame host's origin. */
  portals: (Omit<TenantOptions, 'domain'> & { name: string })[];
  /** The prefix of the bridge's temporary folder. */
  temp: string;
  /** More of the bridge's environment. */
  env?: Record<string, string>;
  viewport?: { width: number; height: number };
  /**
   * One browser page for the whole describe (its tests are the steps of one way through); otherwise a
   * fresh context and page for each test.
   */
  onePage?: boolean;
}

/**
 * The application's page as a portal opens it, for the browser specs of many portals (multi mode): the
 * portal's frame host (another site than the bridge), the sandbox portal, the bridge, the portals installed,
 * and headless Chromium, started before the describe's tests and stopped after them. A spec's own doubles
 * (a PBX, a database) start in its own `beforeAll`, which runs after this one.
 */
export class PortalPages {
  sandbox!: SandboxPortal;
  bridge!: MultiBridge;
  host!: PortalFrameHost;
  browser!: Browser;
  context!: BrowserContext;
  page!: Page;
  private readonly tenants = new Map<string, SandboxTenant>();

  private constructor(private readonly options: PortalPagesOptions) {}

  /** Registers the describe's hooks; the fields are set once its `beforeAll` has run. */
  static use(options: PortalPagesOptions): PortalPages {
    const pages = new PortalPages(options);
    let temp: { remove(): void } | undefined;
    beforeAll(async () => {
      pages.host = await PortalFrameHost.start();
      pages.sandbox = await SandboxPortal.start();
      for (const portal of options.portals) {
        pages.tenants.set(
          portal.name,
          pages.sandbox.addPortal({ ...portal, domain: `localhost:${pages.host.port}` }),
        );
      }
      const folder = tempDir(options.temp);
      temp = folder;
      pages.bridge = await startMultiBridge(pages.sandbox, folder.dir, {
        DELIVERY_MAX_BACKOFF_SEC: '1',
        LOG_LEVEL: process.env.DEBUG_LOG ?? 'error',
        ...options.env,
      });
      for (const tenant of pages.tenants.values()) expect(await install(tenant, pages.bridge.url)).toBe(200);
      pages.browser = await launchChromium();
      if (options.onePage) await pages.newPage();
    }, 60_000);
    if (!options.onePage) {
      beforeEach(() => pages.newPage());
      afterEach(() => pages.context?.close());
    }
    afterAll(async () => {
      await pages.context?.close();
      await pages.browser?.close();
      await pages.bridge?.close();
      await pages.sandbox?.close();
      await pages.host?.close();
      temp?.remove();
    });
    return pages;
  }

  /** The portal named so in `portals`. */
  tenant(name: string): SandboxTenant {
    const tenant = this.tenants.get(name);
    if (!tenant) throw new Error(`no portal ${name} in this spec`);
    return tenant;
  }

  /** Opens the application in the portal's frame as sandbox user `user` (1 is the administrator). */
  open(tenant: SandboxTenant, { user = 1, lang = 'en' }: { user?: number; lang?: string } = {}) {
    return this.host.open(this.page, {
      bridgeUrl: this.bridge.url,
      authId: tenant.issueTokens(undefined, user)?.access_token ?? '',
      memberId: tenant.memberId,
      domain: tenant.domain,
      lang,
    });
  }

  /** The portal's record as the admin API shows it (settings, follow state…). */
  async portal(tenant: SandboxTenant): Promise<PortalRecord> {
    const response = await this.bridge.http
      .get(`/v1/admin/portals/${tenant.memberId}`)
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`);
    return response.body;
  }

  /** What the page's HTML holds: the frame's document as the bridge sent it. */
  html(frame: Frame): Promise<string> {
    return frame.content();
  }

  private async newPage(): Promise<void> {
    this.context = await this.browser.newContext({
      viewport: this.options.viewport ?? { width: 1280, height: 900 },
    });
    this.page = await this.context.newPage();
  }
}
