import { SECRET_SETTING_NAMES, SettingValues, SINGLE_PORTAL_ONLY } from './setting-names';

/** What the checks read: the variables, and the auth mode they imply. */
type Checked = SettingValues & { readonly authMode: 'webhook' | 'oauth' };

/** Shorter PBX tokens are refused in production: they can be guessed. */
const MIN_PRODUCTION_TOKEN_LENGTH = 16;

/** The checks between variables, after each was checked alone; each problem starts with the variable's name. */
export function crossFieldProblems(config: Checked): string[] {
  if (config.B24_APP_MODE === 'multi') return multiPortalProblems(config);
  const problems: string[] = [];
  const production = config.NODE_ENV === 'production';
  const hasPortal = Boolean(config.B24_WEBHOOK_URL || config.B24_PORTAL_URL);
  // The sandbox is a fake portal: calls delivered to it never reach the CRM, so it must never run by mistake.
  if (config.SANDBOX && production) {
    problems.push('SANDBOX: the sandbox portal is a fake and cannot run with NODE_ENV=production');
  }
  if (config.SANDBOX && hasPortal) {
    problems.push(
      'SANDBOX: set either SANDBOX or a portal (B24_WEBHOOK_URL, B24_PORTAL_URL), not both: the sandbox would take the calls',
    );
  }
  if (production && !hasPortal && !config.SANDBOX) {
    problems.push(
      'B24_WEBHOOK_URL: no portal configured (set B24_WEBHOOK_URL or B24_PORTAL_URL) in production',
    );
  }
  if (config.DIAL_MODE === 'ami' && !config.AMI_URL) problems.push('AMI_URL: required when DIAL_MODE=ami');
  if (config.PBX_EVENTS === 'ami' && !config.AMI_URL) problems.push('AMI_URL: required when PBX_EVENTS=ami');
  if (config.DIAL_MODE === 'esl' && !config.ESL_URL) problems.push('ESL_URL: required when DIAL_MODE=esl');
  if (config.PBX_EVENTS === 'esl' && !config.ESL_URL) problems.push('ESL_URL: required when PBX_EVENTS=esl');
  if (config.DIAL_MODE === 'http' && !config.DIAL_URL) {
    problems.push('DIAL_URL: required when DIAL_MODE=http');
  }
  if (production) problems.push(...productionProblems(config));
  if (config.B24_AUTH_MODE === 'webhook' && !config.B24_WEBHOOK_URL && !config.SANDBOX) {
    problems.push('B24_WEBHOOK_URL: required when B24_AUTH_MODE=webhook');
  }
  if (config.authMode === 'oauth' && !config.SANDBOX && hasPortal) {
    for (const name of ['B24_PORTAL_URL', 'B24_CLIENT_ID', 'B24_CLIENT_SECRET'] as const) {
      if (!config[name]) problems.push(`${name}: required when B24_AUTH_MODE=oauth`);
    }
  }
  return problems;
}

/**
 * Multi mode: a published application. Its tokens come from the vendor's OAuth server (B24_OAUTH_URL), its
 * portals from their installs, its PBX credentials from /v1/admin/portals/:portalId/pbx-tokens.
 */
function multiPortalProblems(config: Checked): string[] {
  const problems: string[] = [];
  for (const name of ['B24_CLIENT_ID', 'B24_CLIENT_SECRET', 'B24_OAUTH_URL'] as const) {
    if (!config[name]) problems.push(`${name}: required when B24_APP_MODE=multi`);
  }
  for (const [name, why] of Object.entries(SINGLE_PORTAL_ONLY) as [keyof Checked, string][]) {
    const value = config[name];
    if (value && (!Array.isArray(value) || value.length > 0)) {
      problems.push(`${name}: not used with B24_APP_MODE=multi (${why})`);
    }
  }
  if (config.B24_AUTH_MODE === 'webhook') {
    problems.push('B24_AUTH_MODE: B24_APP_MODE=multi is an OAuth application');
  }
  if (config.NODE_ENV === 'production') {
    for (const name of ['B24_OAUTH_URL', 'PUBLIC_URL'] as const) {
      const url = config[name];
      if (url && !/^https:\/\//i.test(url)) problems.push(`${name}: must be an https:// URL in production`);
    }
    if (!config.ADMIN_TOKEN) problems.push('ADMIN_TOKEN: required with B24_APP_MODE=multi in production');
    problems.push(...placeholderProblems(config));
  }
  return problems;
}

/** Secrets cross the network in production: portal URLs only over TLS, PBX tokens too long to guess. */
function productionProblems(config: Checked): string[] {
  const problems: string[] = [];
  for (const name of ['B24_WEBHOOK_URL', 'B24_PORTAL_URL', 'B24_OAUTH_URL'] as const) {
    const url = config[name];
    if (url && !/^https:\/\//i.test(url)) problems.push(`${name}: must be an https:// URL in production`);
  }
  if (config.PBX_TOKENS.length === 0) {
    problems.push('PBX_TOKENS: at least one PBX token is required in production');
  }
  // Positions only: the message never shows a token.
  const short = config.PBX_TOKENS.flatMap((token, index) =>
    token.length < MIN_PRODUCTION_TOKEN_LENGTH ? [index + 1] : [],
  );
  if (short.length) {
    problems.push(
      `PBX_TOKENS: every token must be at least ${MIN_PRODUCTION_TOKEN_LENGTH} characters in production ` +
        `(too short: token ${short.join(', ')} of ${config.PBX_TOKENS.length})`,
    );
  }
  return [...problems, ...placeholderProblems(config)];
}

/**
 * The repository's example secrets (k8s/base/secrets.env.example, k8s/overlays/ha/database.env.example,
 * deploy/bridge.env.example, deploy/postgres.env.example) are long enough to pass every other check, and
 * public: an overlay or env file used unchanged would accept them. Every secret setting is checked.
 */
const PLACEHOLDER = /replace-with/i;

/** In production, the secrets still holding a published placeholder, by variable (never the value). */
function placeholderProblems(config: Checked): string[] {
  return SECRET_SETTING_NAMES.filter((name) =>
    [config[name] ?? []].flat().some((one) => PLACEHOLDER.test(String(one))),
  ).map(
    (name) =>
      `${name}: still the repository's placeholder ("replace-with-…"); set your own secret (docs/OPERATIONS.md, "Secrets")`,
  );
}
