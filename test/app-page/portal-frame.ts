import { mkdirSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Browser, chromium, Frame, Page } from 'playwright-core';

/** Debian's Chromium (scripts/ensure-chromium.sh installs it); playwright-core downloads no browser. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    // Root in a container has no user namespace for Chromium's sandbox.
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
}

/**
 * Where the screenshots go: a temporary folder, so a test run leaves the clone unchanged; refresh the
 * committed ones with
 * `APP_PAGE_SCREENSHOTS=docs/app-page npx jest --selectProjects e2e --testPathPattern 'app-page/app-(page|follow)\.e2e'`.
 */
export const SHOTS = process.env.APP_PAGE_SCREENSHOTS ?? join(tmpdir(), 'bridge-app-page-screenshots');

/** The path of screenshot `name`, its folder made. */
export function shot(name: string): string {
  mkdirSync(SHOTS, { recursive: true });
  return join(SHOTS, name);
}

/** What the portal posts to the application's page (form fields, and DOMAIN/LANG… in the address). */
export interface PortalPost {
  bridgeUrl: string;
  authId: string;
  memberId: string;
  domain: string;
  lang?: string;
}

/**
 * The portal's side of the application's page: a page on its own origin (http://localhost:<port>, another
 * site than the bridge's 127.0.0.1) with a frame, into which a form posts AUTH_ID, REFRESH_ID, member_id…
 * to the bridge's /app, as the portal opens an application. The test clicks the form's button.
 */
export class PortalFrameHost {
  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(): Promise<PortalFrameHost> {
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (url.pathname !== '/portal') {
        res.statusCode = 404;
        return void res.end();
      }
      const post = JSON.parse(url.searchParams.get('post') ?? '{}') as PortalPost;
      const query = new URLSearchParams({
        DOMAIN: post.domain,
        PROTOCOL: '0',
        LANG: post.lang ?? 'en',
        APP_SID: 'sid-0123456789',
      });
      const fields: Record<string, string> = {
        AUTH_ID: post.authId,
        AUTH_EXPIRES: '3600',
        REFRESH_ID: 'refresh-not-used-by-the-page',
        member_id: post.memberId,
        status: 'L',
        PLACEMENT: 'DEFAULT',
        PLACEMENT_OPTIONS: '{}',
      };
      const inputs = Object.entries(fields)
        .map(([name, value]) => `<input type="hidden" name="${name}" value="${escapeAttr(value)}">`)
        .join('');
      res.setHeader('Content-Type', 'text/html; charset=utf-8');
      res.end(`<!doctype html><html><head><title>Portal</title><style>body{margin:0}iframe{border:0;width:100%;height:calc(100vh - 3rem);display:block}</style></head><body>
<form id="open" method="post" target="app" action="${escapeAttr(`${post.bridgeUrl}/app?${query}`)}">${inputs}<button id="open-app" type="submit">Open the application</button></form>
<iframe name="app" id="app-frame" title="application"></iframe>
</body></html>`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new PortalFrameHost(server, (server.address() as AddressInfo).port);
  }

  /** The portal's origin: `localhost`, another site than the bridge on 127.0.0.1. */
  get origin(): string {
    return `http://localhost:${this.port}`;
  }

  /**
   * Opens the portal page and the application in its frame; resolves with the frame once the bridge's page
   * (or its refusal) has loaded, and the status of the frame's last document.
   */
  async open(page: Page, post: PortalPost): Promise<{ frame: Frame; status: number }> {
    await page.goto(`${this.origin}/portal?post=${encodeURIComponent(JSON.stringify(post))}`);
    const statuses: number[] = [];
    const listener = (response: import('playwright-core').Response) => {
      if (response.frame().name() === 'app' && response.request().isNavigationRequest()) {
        statuses.push(response.status());
      }
    };
    page.on('response', listener);
    await Promise.all([
      page.waitForEvent('framenavigated', {
        predicate: (frame) => frame.name() === 'app' && frame.url().includes('/app'),
      }),
      page.click('#open-app'),
    ]);
    const frame = page.frame({ name: 'app' });
    if (!frame) throw new Error('no application frame');
    await frame.waitForLoadState('load');
    page.off('response', listener);
    return { frame, status: statuses[statuses.length - 1] ?? 0 };
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** Presses the page's own "read again" button (a form posting the session, which no address carries). */
export async function readAgain(frame: Frame): Promise<void> {
  await submitIn(frame, '#refresh');
}

/** The session the page's forms carry (a hidden field), for a post made by hand. */
export async function sessionOf(frame: Frame): Promise<string> {
  const session = await frame.getAttribute('input[name="session"]', 'value');
  if (!session) throw new Error('the page carries no session');
  return session;
}

/**
 * Presses a form's button from the keyboard, as a keyboard user does (and since a mouse click into a frame
 * of another site does not reach Debian's Chromium through this playwright-core), then waits for the answer.
 * Enter goes down on the button (its keypress submits the form) and comes up once the answer has loaded:
 * a key-up sent while the frame swaps its document may never be acknowledged to the driver, which then
 * waits out its whole timeout (seen once in a loaded CI run: `frame.press` stuck after the element resolved).
 */
export async function submitIn(frame: Frame, selector: string): Promise<void> {
  await frame.focus(selector);
  const keyboard = frame.page().keyboard;
  await Promise.all([frame.waitForNavigation(), keyboard.down('Enter')]);
  await frame.waitForLoadState('load');
  await keyboard.up('Enter');
}

function escapeAttr(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}
