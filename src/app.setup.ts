import { INestApplication, UnauthorizedException } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import { Logger } from 'nestjs-pino';
import { NestFactory } from '@nestjs/core';
import { AdminTokenGuard } from './admin/admin-token.guard';
import { favicon } from './app-page/favicon';
import { AppModule } from './app.module';
import { AppConfig } from './config/app-config';
import { Lifecycle } from './health/lifecycle';
import { FrameworkQuietLogger } from './logging/framework-quiet-logger';
import { RequestLog } from './logging/logging.module';
import { RouteNotFoundFilter } from './logging/route-not-found.filter';

/** Where the API documentation is served: the UI and its assets, the document as JSON and as YAML. */
const DOCS_PATHS = ['/docs', '/docs-json', '/docs-yaml'];

/**
 * Builds the bridge for a validated configuration; main.ts and the end-to-end tests share it. Nest's global
 * body parser is off: each route parses its own body with the limits and answers the API contract (docs/API.md) asks for.
 */
export async function createBridge(config: AppConfig): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), {
    bodyParser: false,
    bufferLogs: true,
  });
  app.useLogger(new FrameworkQuietLogger(app.get(Logger)));
  // Naming the framework on every answer only helps whoever probes the bridge for known weaknesses.
  app.disable('x-powered-by');
  // No answer is served from a cache (the API's are per request, the pages' per session): an ETag would
  // only hash every body on the way out.
  app.set('etag', false);
  app.use(app.get(Lifecycle).closeConnectionsWhenStopping);
  // A browser's icon request on every page load: answered (and cached) before the request log sees it.
  app.use('/favicon.ico', favicon);
  // Every request's id and (probes, scrapes and the icon aside) its one log line, ahead of every route.
  app.use(app.get(RequestLog).middleware);
  app.useGlobalFilters(new RouteNotFoundFilter());
  app.enableShutdownHooks();
  if (config.NODE_ENV === 'production') app.use(DOCS_PATHS, docsForAdminsOnly(app.get(AdminTokenGuard)));
  publishApiDocs(app);
  return app;
}

/**
 * In production the API documentation maps the whole surface for an attacker: it takes ADMIN_TOKEN, as
 * /v1/admin does. Browsers are asked for Basic credentials (any user name, the token as password).
 */
function docsForAdminsOnly(adminToken: AdminTokenGuard) {
  return (request: Request, response: Response, next: NextFunction): void => {
    if (adminToken.admits(request)) return next();
    const refusal = new UnauthorizedException('the API documentation needs the admin token (ADMIN_TOKEN)');
    response.setHeader('WWW-Authenticate', 'Basic realm="bridge API documentation"');
    response.status(refusal.getStatus()).json(refusal.getResponse());
  };
}

/** OpenAPI from the DTOs: the UI at /docs, the document at /docs-json. */
function publishApiDocs(app: INestApplication): void {
  const document = new DocumentBuilder()
    .setTitle('PBX → CRM telephony bridge')
    .setDescription(
      'PBXs post call events; the bridge stores them durably and delivers them to the CRM portal.',
    )
    .setVersion('1')
    .addBearerAuth()
    .addBasicAuth()
    .build();
  SwaggerModule.setup('docs', app, () => SwaggerModule.createDocument(app, document), {
    jsonDocumentUrl: 'docs-json',
  });
}
