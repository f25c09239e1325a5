import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { AppConfig } from './config/app-config';
import { Lifecycle } from './health/lifecycle';

/**
 * Builds the bridge for a validated configuration; main.ts and the end-to-end tests share it. Nest's global
 * body parser is off: each route parses its own body with the limits and answers the SPEC asks for.
 */
export async function createBridge(config: AppConfig): Promise<INestApplication> {
  const app = await NestFactory.create(AppModule.forRoot(config), { bodyParser: false, bufferLogs: true });
  app.useLogger(app.get(Logger));
  app.use(app.get(Lifecycle).closeConnectionsWhenStopping);
  app.enableShutdownHooks();
  publishApiDocs(app);
  return app;
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
