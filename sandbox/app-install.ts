import * as http from 'node:http';
import * as https from 'node:https';
import * as qs from 'qs';
import { tokenAnswer } from './oauth-server';
import { PortalState } from './portal-state';

export interface InstallOutcome {
  /** The form fields posted, flat as they travel (`auth[access_token]` …). */
  posted: Record<string, string>;
  /** The handler's HTTP status, or null when it could not be reached. */
  status: number | null;
  responseBody: string;
  error: string | null;
}

/** How long the portal waits for an application's handler. */
const HANDLER_TIMEOUT_MS = 10000;

/**
 * Installs the application as an administrator would: issues a token pair and posts the form-encoded
 * ONAPPINSTALL event to the application's handler.
 */
export async function installApp(
  state: PortalState,
  clientId: string,
  handlerUrl: string,
): Promise<InstallOutcome | undefined> {
  const app = state.credentials.app(clientId);
  if (!app) return undefined;
  // A (re)installed application's handlers vanish, as on the portal: it binds them again.
  state.events.forgetApp(app.clientId);
  const tokens = tokenAnswer(state, state.credentials.issuePair(app, 1, state.now()));
  const posted: Record<string, string> = {
    event: 'ONAPPINSTALL',
    'data[VERSION]': '1',
    'data[ACTIVE]': 'Y',
    'data[INSTALLED]': 'Y',
    'data[LANGUAGE_ID]': 'en',
    ts: String(Math.floor(state.now() / 1000)),
    'auth[access_token]': tokens.access_token,
    'auth[expires]': String(tokens.expires),
    'auth[expires_in]': String(tokens.expires_in),
    'auth[scope]': tokens.scope,
    'auth[domain]': tokens.domain,
    'auth[server_endpoint]': tokens.server_endpoint,
    'auth[status]': tokens.status,
    'auth[client_endpoint]': tokens.client_endpoint,
    'auth[member_id]': tokens.member_id,
    'auth[user_id]': String(tokens.user_id),
    'auth[refresh_token]': tokens.refresh_token,
    'auth[application_token]': app.applicationToken,
  };
  try {
    const { status, body } = await postForm(handlerUrl, qs.stringify(posted));
    return { posted, status, responseBody: body, error: null };
  } catch (error) {
    return { posted, status: null, responseBody: '', error: (error as Error).message };
  }
}

/**
 * Removes the application as an administrator would: its tokens and codes die, its handlers vanish, and
 * the form-encoded ONAPPUNINSTALL goes to every handler it bound for that event (event.bind), as on the
 * portal; `handlerUrl`, when given and not bound, gets it too (an application that never bound one). Like
 * the portal's, that post carries no tokens, only the portal and the application token that proves it
 * came from the portal. The outcome is the first post's; `handlers` names every address posted to.
 */
export async function uninstallApp(
  state: PortalState,
  clientId: string,
  handlerUrl?: string,
): Promise<(InstallOutcome & { revokedTokenPairs: number; handlers: string[] }) | undefined> {
  const app = state.credentials.app(clientId);
  if (!app) return undefined;
  const bound = state.events.bindings
    .filter(
      (binding) =>
        binding.clientId === app.clientId &&
        binding.event === 'ONAPPUNINSTALL' &&
        binding.eventType === 'online',
    )
    .map((binding) => binding.handler);
  const handlers = [...new Set(handlerUrl ? [...bound, handlerUrl] : bound)];
  const revokedTokenPairs = state.credentials.revokeApp(app.clientId);
  state.events.forgetApp(app.clientId);
  const { url, domain, memberId } = state.identity;
  const posted: Record<string, string> = {
    event: 'ONAPPUNINSTALL',
    'data[LANGUAGE_ID]': 'en',
    'data[CLEAN]': '0',
    ts: String(Math.floor(state.now() / 1000)),
    'auth[domain]': domain,
    'auth[server_endpoint]': `${url}/rest/`,
    'auth[status]': 'L',
    'auth[client_endpoint]': `${url}/rest/`,
    'auth[member_id]': memberId,
    'auth[application_token]': app.applicationToken,
  };
  const outcomes = await Promise.all(
    handlers.map(async (handler): Promise<InstallOutcome> => {
      try {
        const { status, body } = await postForm(handler, qs.stringify(posted));
        return { posted, status, responseBody: body, error: null };
      } catch (error) {
        return { posted, status: null, responseBody: '', error: (error as Error).message };
      }
    }),
  );
  const first = outcomes[0] ?? {
    posted,
    status: null,
    responseBody: '',
    error: 'the application bound no ONAPPUNINSTALL handler',
  };
  return { ...first, revokedTokenPairs, handlers };
}

/** One form POST without keep-alive, so a closing sandbox leaves no sockets behind. */
export function postForm(target: string, form: string): Promise<{ status: number; body: string }> {
  const url = new URL(target);
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = transport.request(
      url,
      {
        method: 'POST',
        agent: false,
        timeout: HANDLER_TIMEOUT_MS,
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          'Content-Length': String(Buffer.byteLength(form)),
          Connection: 'close',
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8').slice(0, 4000),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () =>
      req.destroy(new Error(`the handler did not answer within ${HANDLER_TIMEOUT_MS} ms`)),
    );
    req.on('error', reject);
    req.end(form);
  });
}
