import { Body, Controller, Get, Header, HttpCode, Post, Query, Req, Res, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import { OAuthService, Authorised } from './oauth.service';
import { OAuthStartGuard } from './oauth-start.guard';
import { RetryLater, SourceRateLimit } from './portal-post-limits';

/** The cookie binding a `state` to the browser that opened /oauth/start. */
const STATE_COOKIE = 'bridge_oauth_state';

/**
 * OAuth application mode (docs/API.md): `/oauth/start` (behind ADMIN_TOKEN) and `/oauth/callback` for the
 * code flow, `/oauth/install` for the portal's ONAPPINSTALL post, `/oauth/events` for later portal events.
 * Anyone can post to the last two: an install is never refused for its rate (the vendor posts every
 * portal's install from a few addresses and does not retry), its check is queued and deduplicated by the
 * install queue (auth/portal-post-limits.ts); each source address gets a budget of event posts.
 */
@Controller('oauth')
export class OAuthController {
  /** Events cost no portal request; the limit only keeps a flood from one address cheap. */
  private readonly eventPosts = new SourceRateLimit('event', 60, 100);

  constructor(private readonly oauth: OAuthService) {}

  @Get('start')
  @UseGuards(OAuthStartGuard)
  @Header('Cache-Control', 'no-store')
  @Header('Referrer-Policy', 'no-referrer')
  async start(@Res() response: Response): Promise<void> {
    const { url, state, ttlMs } = await this.oauth.start();
    response.cookie(STATE_COOKIE, state, {
      ...this.cookieScope(),
      httpOnly: true,
      sameSite: 'lax',
      maxAge: ttlMs,
    });
    response.redirect(302, url);
  }

  @Get('callback')
  @Header('Cache-Control', 'no-store')
  async callback(
    @Query() query: Record<string, unknown>,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<Authorised & { message: string }> {
    const browserState = cookieOf(request, STATE_COOKIE);
    const authorised = await this.oauth.completeAuthorisation(query, browserState);
    response.clearCookie(STATE_COOKIE, this.cookieScope());
    return { ...authorised, message: 'The bridge is authorised on the portal; delivery resumes.' };
  }

  @Post('install')
  @HttpCode(200)
  async install(
    @Body() body: unknown,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<Authorised & { message: string }> {
    const installed = await withRetryAfter(response, () => this.oauth.install(body, sourceOf(request)));
    const message = installed.unchanged
      ? 'The application is installed with these tokens already.'
      : 'The application is installed; delivery resumes.';
    return { portalId: installed.portalId, domain: installed.domain, message };
  }

  @Post('events')
  @HttpCode(200)
  events(
    @Body() body: unknown,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<{ event: string; handled: boolean }> {
    return withRetryAfter(response, async () => {
      if (this.oauth.enabled) this.eventPosts.admit(sourceOf(request));
      return this.oauth.portalEvent(body);
    });
  }

  /** Sent back only to /oauth/callback, and only over https when the bridge is reached by https. */
  private cookieScope(): { path: string; secure: boolean } {
    const publicUrl = new URL(this.oauth.publicUrl);
    return {
      path: `${publicUrl.pathname.replace(/\/+$/, '')}/oauth/callback`,
      secure: publicUrl.protocol === 'https:',
    };
  }
}

async function withRetryAfter<T>(response: Response, handle: () => Promise<T>): Promise<T> {
  try {
    return await handle();
  } catch (error) {
    if (error instanceof RetryLater) response.setHeader('Retry-After', String(error.retryAfterSec));
    throw error;
  }
}

/** The peer address (a proxy in front of the bridge counts as one source). */
function sourceOf(request: Request): string {
  return request.ip ?? request.socket.remoteAddress ?? 'unknown';
}

/** The state is base64url, so the cookie value needs no decoding. */
function cookieOf(request: Request, name: string): string | undefined {
  for (const pair of (request.headers.cookie ?? '').split(';')) {
    const separator = pair.indexOf('=');
    if (separator > 0 && pair.slice(0, separator).trim() === name) {
      return pair.slice(separator + 1).trim();
    }
  }
  return undefined;
}
