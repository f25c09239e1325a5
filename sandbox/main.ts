import { OPERATING_CHARGES, OperatingCharge } from './operating-time';
import { SandboxPortal } from './sandbox-portal';

/** Reads a number from the environment; a bad value stops start-up naming the variable. */
function numberFromEnv(name: string, fallback: number, zeroAllowed = false): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || (value === 0 && !zeroAllowed)) {
    console.error(`${name} must be a ${zeroAllowed ? 'non-negative' : 'positive'} number, got "${raw}"`);
    process.exit(1);
  }
  return value;
}

/** SANDBOX_OPERATING_CHARGE: `run` (default), `batch-whole`, or the `batch-upfront` or `batch-upfront-no-reset` fault. */
function chargeFromEnv(): OperatingCharge {
  const raw = process.env.SANDBOX_OPERATING_CHARGE?.trim() || 'run';
  if (!OPERATING_CHARGES.includes(raw as OperatingCharge)) {
    console.error(`SANDBOX_OPERATING_CHARGE must be one of ${OPERATING_CHARGES.join(', ')}, got "${raw}"`);
    process.exit(1);
  }
  return raw as OperatingCharge;
}

async function main(): Promise<void> {
  const portal = await SandboxPortal.start({
    port: numberFromEnv('SANDBOX_PORT', 8099, true),
    host: process.env.SANDBOX_HOST ?? '127.0.0.1',
    rateLimitRps: numberFromEnv('SANDBOX_RATE_LIMIT_RPS', 2),
    rateBurst: numberFromEnv('SANDBOX_RATE_BURST', 50),
    accessTokenTtlSec: numberFromEnv('SANDBOX_TOKEN_TTL_SEC', 3600),
    commandMs: numberFromEnv('SANDBOX_COMMAND_MS', 0, true),
    operatingWindowSec: numberFromEnv('SANDBOX_OPERATING_WINDOW_SEC', 600),
    operatingLimitSec: numberFromEnv('SANDBOX_OPERATING_LIMIT_SEC', 480),
    operatingCharge: chargeFromEnv(),
    portals: Math.floor(numberFromEnv('SANDBOX_PORTALS', 0, true)),
  });
  console.log(`Sandbox portal:      ${portal.url}`);
  console.log(`Webhook URL:         ${portal.webhookUrl}`);
  console.log(`OAuth client id:     ${portal.oauthApp.clientId}`);
  console.log(`OAuth client secret: ${portal.oauthApp.clientSecret}`);
  const tenants = portal.portals();
  if (tenants.length > 0) {
    console.log(
      `Tenant portals:      ${tenants.length} (${portal.url}/p/<memberId>/, GET ${portal.url}/_sandbox/portals)`,
    );
  }
  console.log(`Control API:         ${portal.url}/_sandbox/`);
  const stop = () => {
    portal.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  console.error('sandbox portal failed to start:', error);
  process.exit(1);
});
