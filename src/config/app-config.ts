import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { crossFieldProblems } from './cross-checks';
import { SETTING_DECLARATIONS, SettingValues } from './setting-names';

export { LOG_LEVELS } from './deployment';
export type { LogLevel } from './deployment';
export { TRUNK_PATTERN_MAX_LENGTH, TRUNK_PATTERNS_MAX } from './portal-settings-schema';
export { dialUrlProblem } from './value-rules';

/**
 * The whole environment of the bridge (docs/API.md), validated once at start-up and injected as a provider,
 * so tests hand in their own instance. Property names are the variable names, declared in deployment.ts and
 * portal-settings-schema.ts; a bad value stops start-up with a message naming the variable.
 */
// The properties come from the declarations (the interface below); the class adds the derived getters.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class AppConfig {
  constructor() {
    for (const [name, { default: value }] of Object.entries(SETTING_DECLARATIONS)) {
      (this as Record<string, unknown>)[name] = Array.isArray(value) ? [...value] : value;
    }
  }

  /** The address to listen on: HOST, else every interface in production and this machine only elsewhere. */
  get listenHost(): string {
    return this.HOST ?? (this.NODE_ENV === 'production' ? '0.0.0.0' : '127.0.0.1');
  }

  get sandboxMode(): boolean {
    return sandboxModeOf(this);
  }

  get authMode(): 'webhook' | 'oauth' {
    if (this.B24_APP_MODE === 'multi') return 'oauth';
    if (this.B24_AUTH_MODE) return this.B24_AUTH_MODE;
    return this.B24_PORTAL_URL && !this.B24_WEBHOOK_URL ? 'oauth' : 'webhook';
  }
}
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type
export interface AppConfig extends SettingValues {}

// Each declaration's checks, applied as the decorators written above a property would be (bottom first).
for (const [name, { rules }] of Object.entries(SETTING_DECLARATIONS)) {
  for (const rule of [...rules].reverse()) rule(AppConfig.prototype, name);
}

export class ConfigError extends Error {}

/** Environment variables as the process (or a test) has them: names to strings. */
export type Environment = Record<string, string | undefined>;

/**
 * Sandbox mode: asked for (SANDBOX), or outside production with no portal configured. `main.ts` decides
 * with it whether to start the sandbox portal before the bridge.
 */
export function sandboxModeOf(
  config: Pick<AppConfig, 'SANDBOX' | 'NODE_ENV' | 'B24_WEBHOOK_URL' | 'B24_PORTAL_URL'> &
    Partial<Pick<AppConfig, 'B24_APP_MODE'>>,
): boolean {
  // Multi mode names no portal by design: the portals come by installing the application.
  if (config.B24_APP_MODE === 'multi') return false;
  return (
    config.SANDBOX || (config.NODE_ENV !== 'production' && !config.B24_WEBHOOK_URL && !config.B24_PORTAL_URL)
  );
}

/**
 * Builds the validated configuration from an environment; throws one ConfigError naming every bad variable.
 * The result is frozen (its lists too): nothing changes it after validation.
 */
export function loadConfig(env: Environment): AppConfig {
  const given = Object.fromEntries(
    Object.entries(env).filter(([key]) => Object.hasOwn(SETTING_DECLARATIONS, key)),
  );
  return settled(plainToInstance(AppConfig, given, { exposeDefaultValues: true }), crossFieldProblems);
}

/**
 * Sandbox mode's effective configuration: the operator's (already validated by `loadConfig`), delivering by
 * webhook to the sandbox portal started for it, under PORTAL_ID "sandbox" unless one was set. The
 * cross-checks concern what the operator set and ran there (SANDBOX beside a portal is refused there, not
 * here, where the sandbox is the portal); the values added are checked field by field again.
 */
export function withSandboxPortal(operator: AppConfig, webhookUrl: string): AppConfig {
  if (!operator.sandboxMode) {
    throw new ConfigError('SANDBOX: a portal is configured, the sandbox cannot take its place');
  }
  const config = Object.assign(new AppConfig(), operator, {
    SANDBOX: true,
    B24_WEBHOOK_URL: webhookUrl,
    B24_AUTH_MODE: 'webhook',
    PORTAL_ID: operator.PORTAL_ID ?? 'sandbox',
  } satisfies Partial<AppConfig>);
  return settled(config, () => []);
}

/** Field checks, then `crossChecks`; one ConfigError naming every problem, else the configuration frozen. */
function settled(config: AppConfig, crossChecks: (config: AppConfig) => string[]): AppConfig {
  const problems = validateSync(config, { forbidUnknownValues: false }).map(
    (error) => `${error.property}: ${Object.values(error.constraints ?? {}).join('; ')}`,
  );
  problems.push(...crossChecks(config));
  if (problems.length) throw new ConfigError(`Invalid configuration: ${problems.join(' | ')}`);
  for (const value of Object.values(config)) if (Array.isArray(value)) Object.freeze(value);
  return Object.freeze(config);
}
