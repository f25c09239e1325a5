import { INestApplication } from '@nestjs/common';
import axios from 'axios';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { createBridge } from '../../src/app.setup';
import { AppConfig, loadConfig } from '../../src/config/app-config';
import { SandboxPortal } from '../../sandbox';
import { PortalTokens, TokenStore } from '../../src/store/token-store';
import { ADMIN_TOKEN, eventually, PBX_TOKEN, testEnv } from '../support/bridge-harness';
import { freePort } from '../support/bridge-process';

export const PORTAL_ID = 'sandbox-oauth';

/** The bridge in OAuth application mode against a sandbox portal, on a real SQLite file. */
export interface OAuthBridge {
  app: INestApplication;
  config: AppConfig;
  /** Also its PUBLIC_URL: the portal redirects and posts here. */
  url: string;
  http: ReturnType<typeof request>;
  storedTokens(): Promise<PortalTokens | undefined>;
  portalHealth(): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

export function oauthEnv(sandbox: SandboxPortal, env: Record<string, string> = {}): Record<string, string> {
  return {
    B24_WEBHOOK_URL: '',
    B24_AUTH_MODE: 'oauth',
    B24_PORTAL_URL: sandbox.url,
    B24_CLIENT_ID: sandbox.oauthApp.clientId,
    B24_CLIENT_SECRET: sandbox.oauthApp.clientSecret,
    PORTAL_ID,
    ...env,
  };
}

/** A fresh temp folder for the SQLite file, removed by the returned function. */
export function tempDir(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'bridge-oauth-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Listens on a port chosen first, so PUBLIC_URL (the OAuth redirect_uri) names the bridge itself. */
export async function startOAuthBridge(
  sandbox: SandboxPortal,
  dir: string,
  env: Record<string, string> = {},
): Promise<OAuthBridge> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const config = loadConfig(testEnv(sandbox, dir, oauthEnv(sandbox, { PUBLIC_URL: url, ...env })));
  const app = await createBridge(config);
  await app.listen(port, '127.0.0.1');
  const http = request(url);
  return {
    app,
    config,
    url,
    http,
    storedTokens: () => app.get(TokenStore).findTokens(PORTAL_ID),
    portalHealth: async () => (await http.get('/health/ready')).body.details.portal,
    close: () => app.close(),
  };
}

/** The sandbox installs the application: a real form-encoded ONAPPINSTALL post to the bridge. */
export async function installApp(
  sandbox: SandboxPortal,
  bridge: OAuthBridge,
  clientId = sandbox.oauthApp.clientId,
): Promise<{ status: number | null; posted: Record<string, string> }> {
  const { data } = await axios.post(`${sandbox.url}/_sandbox/apps/${encodeURIComponent(clientId)}/install`, {
    handlerUrl: `${bridge.url}/oauth/install`,
  });
  return data;
}

export async function postCalls(bridge: OAuthBridge, body: unknown[]): Promise<void> {
  const response = await bridge.http
    .post('/v1/calls/events')
    .set('Authorization', `Bearer ${PBX_TOKEN}`)
    .send(body);
  if (response.status !== 202) throw new Error(`intake answered ${response.status}`);
}

export async function callState(
  bridge: OAuthBridge,
  callId: string,
): Promise<{ state: string; lastError: unknown }> {
  return (
    await bridge.http
      .get(`/v1/calls/${encodeURIComponent(callId)}`)
      .set('Authorization', `Bearer ${PBX_TOKEN}`)
  ).body;
}

/** Waits until every call of `prefix` is finished on the portal; returns how many the portal holds. */
export async function untilAllFinished(
  sandbox: SandboxPortal,
  prefix: string,
  count: number,
  timeoutMs = 60000,
) {
  return eventually(async () => {
    const mine = sandbox.calls().filter((call) => call.EXTERNAL_CALL_ID?.startsWith(`${prefix}-`));
    return mine.length === count && mine.every((call) => call.finished) ? mine : undefined;
  }, timeoutMs);
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The portal's health details once the bridge's queue is empty: the portal holds a call a moment before
 * the bridge has written its answer back, so the bridge's own view is read when it has settled.
 */
export function settledPortalHealth(bridge: OAuthBridge): Promise<Record<string, unknown>> {
  return eventually(async () => {
    const details = await bridge.portalHealth();
    return details.queueDepth === 0 ? details : undefined;
  });
}

/** One GET as a browser sends it, without following redirects: status, Location, cookies set, body. */
export async function browserGet(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; location: string; cookies: string; body: unknown }> {
  const response = await axios.get(url, { headers, maxRedirects: 0, validateStatus: () => true });
  const setCookie = response.headers['set-cookie'] ?? [];
  return {
    status: response.status,
    location: String(response.headers.location ?? ''),
    // What the browser sends back: each cookie's name=value, without its attributes.
    cookies: setCookie.map((cookie) => cookie.split(';', 1)[0]).join('; '),
    body: response.data,
  };
}

/**
 * The code flow as an administrator's browser runs it: /oauth/start with the admin token (a bookmark's
 * `?token=`), the portal's authorize page (as `portalUser`, the sandbox's login session), and back to
 * the bridge's /oauth/callback, which is returned unvisited with the bridge's state cookie.
 */
export async function authorizeInBrowser(
  bridge: OAuthBridge,
  portalUser = 1,
): Promise<{ callbackUrl: string; state: string; cookie: string }> {
  const start = await browserGet(`${bridge.url}/oauth/start?token=${ADMIN_TOKEN}`);
  if (start.status !== 302) throw new Error(`/oauth/start answered ${start.status}`);
  const authorize = await browserGet(start.location, { Cookie: `sandbox_user_id=${portalUser}` });
  if (authorize.status !== 302) throw new Error(`the portal's authorize answered ${authorize.status}`);
  const callbackUrl = authorize.location;
  return {
    callbackUrl,
    state: new URL(callbackUrl).searchParams.get('state') ?? '',
    cookie: start.cookies,
  };
}

/** Completes an authorization in the browser that started it. */
export function completeInBrowser(flow: { callbackUrl: string; cookie: string }) {
  return browserGet(flow.callbackUrl, { Cookie: flow.cookie });
}
