import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { createBridge } from './app.setup';
import { ConfigError, withSandboxPortal } from './config/app-config';
import { loadEnvironment } from './config/environment';
import { startSandboxPortal } from './sandbox-mode';

/**
 * The operator's configuration (environment over `.env`) is validated first; in sandbox mode the sandbox
 * portal starts next and the bridge runs on a new configuration naming it. Neither is changed afterwards.
 */
async function bootstrap(): Promise<void> {
  const operator = await loadEnvironment();
  // No portal configured outside production (or SANDBOX=1): the sandbox portal runs in this process and
  // takes the calls. Nest's shutdown hooks end the process on SIGTERM/SIGINT, the sandbox with it.
  const sandbox = operator.sandboxMode ? await startSandboxPortal(operator.SANDBOX_PORT) : undefined;
  const config = sandbox ? withSandboxPortal(operator, sandbox.webhookUrl) : operator;
  const app = await createBridge(config);
  if (sandbox) announceSandbox(sandbox.url);
  await app.listen(config.PORT);
  new Logger('Bridge').log(`listening on port ${config.PORT}`);
}

function announceSandbox(url: string): void {
  const logger = new Logger('Sandbox');
  logger.warn('==================================================================');
  logger.warn('SANDBOX MODE: no portal configured; calls go to a built-in fake portal');
  logger.warn(`sandbox portal at ${url} (inspect: ${url}/_sandbox/calls)`);
  logger.warn('set B24_WEBHOOK_URL (or B24_PORTAL_URL + OAuth settings) to use a real portal');
  logger.warn('==================================================================');
}

bootstrap().catch((error: unknown) => {
  const message =
    error instanceof ConfigError ? error.message : `start-up failed: ${(error as Error).message}`;
  console.error(message);
  process.exit(1);
});
