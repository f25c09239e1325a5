import { Body, Controller, Get, Header, HttpCode, Post, Query, Redirect } from '@nestjs/common';
import { Authorised, OAuthService } from './oauth.service';

/**
 * OAuth application mode (SPEC.md §2): `/oauth/start` and `/oauth/callback` for the code flow,
 * `/oauth/install` for the portal's ONAPPINSTALL post, `/oauth/events` for later portal events.
 */
@Controller('oauth')
export class OAuthController {
  constructor(private readonly oauth: OAuthService) {}

  @Get('start')
  @Redirect()
  @Header('Cache-Control', 'no-store')
  async start(): Promise<{ url: string; statusCode: number }> {
    return { url: await this.oauth.startUrl(), statusCode: 302 };
  }

  @Get('callback')
  @Header('Cache-Control', 'no-store')
  async callback(@Query() query: Record<string, unknown>): Promise<Authorised & { message: string }> {
    const authorised = await this.oauth.completeAuthorisation(query);
    return { ...authorised, message: 'The bridge is authorised on the portal; delivery resumes.' };
  }

  @Post('install')
  @HttpCode(200)
  async install(@Body() body: unknown): Promise<Authorised & { message: string }> {
    const installed = await this.oauth.install(body);
    return { ...installed, message: 'The application is installed; delivery resumes.' };
  }

  @Post('events')
  @HttpCode(200)
  events(@Body() body: unknown): Promise<{ event: string; handled: boolean }> {
    return this.oauth.portalEvent(body);
  }
}
