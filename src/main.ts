import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { createBridge } from './app.setup';
import { AppConfig, ConfigError, loadConfig } from './config/app-config';
import { SandboxPortal } from './sandbox';

async function bootstrap(): Promise<void> {
  const config = loadConfig(process.env);
  const sandbox = config.sandboxMode ? await startSandbox(config) : undefined;
  const app = await createBridge(config);
  if (sandbox) announceSandbox(sandbox);
  await app.listen(config.PORT);
  new Logger('Bridge').log(`listening on port ${config.PORT}`);
}

/**
 * No portal configured outside production: run the sandbox portal in this process and deliver to it.
 * Nest's shutdown hooks end the process on SIGTERM/SIGINT, the sandbox with it.
 */
async function startSandbox(config: AppConfig): Promise<SandboxPortal> {
  const portal = await SandboxPortal.start({ port: config.SANDBOX_PORT });
  config.B24_WEBHOOK_URL = portal.webhookUrl;
  config.B24_AUTH_MODE = 'webhook';
  config.PORTAL_ID ??= 'sandbox';
  return portal;
}

function announceSandbox(portal: SandboxPortal): void {
  const logger = new Logger('Sandbox');
  logger.warn('==================================================================');
  logger.warn('SANDBOX MODE: no portal configured; calls go to a built-in fake portal');
  logger.warn(`sandbox portal at ${portal.url} (inspect: ${portal.url}/_sandbox/calls)`);
  logger.warn('set B24_WEBHOOK_URL (or B24_PORTAL_URL + OAuth settings) to use a real portal');
  logger.warn('==================================================================');
}

bootstrap().catch((error: unknown) => {
  const message =
    error instanceof ConfigError ? error.message : `start-up failed: ${(error as Error).message}`;
  console.error(message);
  process.exit(1);
});
