import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { AppConfig } from './config/app-config';

/**
 * Builds the bridge for a validated configuration; main.ts and the end-to-end tests share it. Nest's global
 * body parser is off: each route parses its own body with the limits and answers the SPEC asks for.
 */
export async function createBridge(config: AppConfig): Promise<INestApplication> {
  const app = await NestFactory.create(AppModule.forRoot(config), {
    bodyParser: false,
    logger: levelsFrom(config.LOG_LEVEL),
  });
  app.enableShutdownHooks();
  return app;
}

const LEVELS = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'] as const;

function levelsFrom(level: AppConfig['LOG_LEVEL']) {
  return LEVELS.slice(0, LEVELS.indexOf(level) + 1);
}
