import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The bridge's icon: a 16×16 PNG in an ICO container (121 bytes), inline so nothing on disk can go missing.
 * A browser showing the application's page (or /docs) asks for /favicon.ico on every load; without it each
 * load left a 404 in the request log, read by operators as something broken.
 */
const ICON = Buffer.from(
  'AAABAAEAEBAAAAEAIABjAAAAFgAAAIlQTkcNChoKAAAADUlIRFIAAAAQAAAAEAgGAAAAH/P/YQAAACpJREFUeNpjYKAGUE1+/Z8cPEgNAAFcGtDlBqEBxALaGTAMAnEIJ2VKAADaFBCnbGOoWgAAAABJRU5ErkJggg==',
  'base64',
);

/** A day in every cache: the icon only changes with a release. */
export const FAVICON_CACHE_CONTROL = 'public, max-age=86400, immutable';

/**
 * Express middleware mounted at /favicon.ico ahead of the request log (src/app.setup.ts): GET and HEAD get
 * the icon with a cache header and no log line, as probes have none; any other method falls through to the
 * routes, which answer it 404 as before.
 */
export function favicon(request: IncomingMessage, response: ServerResponse, next: () => void): void {
  const path = (request.url ?? '').split('?', 1)[0];
  if ((request.method !== 'GET' && request.method !== 'HEAD') || (path !== '/' && path !== '')) {
    return next();
  }
  response.statusCode = 200;
  response.setHeader('Content-Type', 'image/x-icon');
  response.setHeader('Content-Length', ICON.length);
  response.setHeader('Cache-Control', FAVICON_CACHE_CONTROL);
  response.end(request.method === 'HEAD' ? undefined : ICON);
}
