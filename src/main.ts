import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { createBridge } from './app.setup';
import { AppConfig, ConfigError, withSandboxPortal } from './config/app-config';
import { loadEnvironment } from './config/environment';
import { RunningSandbox, startSandboxPortal } from './sandbox-mode';

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
  await app.listen(config.PORT, config.listenHost);
  announce(config, sandbox);
}

/** A few lines on where the bridge and (in sandbox mode) the fake portal listen, and what to do next. */
function announce(config: AppConfig, sandbox: RunningSandbox | undefined): void {
  const logger = new Logger('Bridge');
  const shown = ['0.0.0.0', '::'].includes(config.listenHost) ? '127.0.0.1' : config.listenHost;
  const where = `http://${shown.includes(':') ? `[${shown}]` : shown}:${config.PORT}`;
  logger.log(
    `listening on ${where} (PBX events: POST ${where}/v1/calls/events; API reference: ${where}/docs)`,
  );
  if (config.listenHost === '127.0.0.1') {
    logger.log('reachable from this machine only: set HOST=0.0.0.0 for a PBX on another host');
  }
  if (!sandbox) return;
  const sandboxLog = new Logger('Sandbox');
  sandboxLog.warn(`no portal configured: calls go to the built-in sandbox portal at ${sandbox.url}`);
  sandboxLog.warn(`its webhook: ${sandbox.webhookUrl}; what it received: curl ${sandbox.url}/_sandbox/calls`);
  sandboxLog.warn('set B24_WEBHOOK_URL (or B24_PORTAL_URL with the OAuth settings) to use a real portal');
}

bootstrap().catch((error: unknown) => {
  const message =
    error instanceof ConfigError ? error.message : `start-up failed: ${(error as Error).message}`;
  console.error(message);
  process.exit(1);
});
