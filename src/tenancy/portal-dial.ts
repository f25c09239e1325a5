import { ConfigError, loadConfig } from '../config/app-config';
import { DialSettings, dialSettingsOf } from '../config/settings';
import { createDialer } from '../dialer/dialer-factory';

/** The variables a portal's own dial settings may set: the environment's click-to-call ones (docs/API.md). */
export const DIAL_VARIABLES = [
  'DIAL_MODE',
  'AMI_URL',
  'AMI_CHANNEL',
  'AMI_CONTEXT',
  'ESL_URL',
  'ESL_ORIGINATE',
  'DIAL_URL',
  'DIAL_METHOD',
  'DIAL_AUTH',
  'DIAL_TIMEOUT_SEC',
  'DIAL_MATCH_SEC',
] as const;

/**
 * A portal's dial settings, checked by the same class-validator rules as the environment's (so a 400 names
 * the variable as OPERATIONS.md does), then by building the dialer they configure: what is accepted here is
 * what a portal runtime can build. Returns the problems, or the settings (defaultUserId: the portal's).
 */
export function portalDialSettings(
  dial: unknown,
  defaultUserId: number | undefined,
): { settings: DialSettings } | { problems: string[] } {
  if (typeof dial !== 'object' || dial === null || Array.isArray(dial))
    return {
      problems: ['dial must be an object of dial settings, e.g. {"DIAL_MODE": "ami", "AMI_URL": "…"}'],
    };
  const entries = Object.entries(dial);
  const unknown = entries.filter(([name]) => !(DIAL_VARIABLES as readonly string[]).includes(name));
  if (unknown.length)
    return {
      problems: unknown.map(
        ([name]) => `dial.${name.slice(0, 40)}: not a dial setting (${DIAL_VARIABLES.join(', ')})`,
      ),
    };
  const notText = entries.filter(([, value]) => typeof value !== 'string' && typeof value !== 'number');
  if (notText.length) return { problems: notText.map(([name]) => `dial.${name}: must be a text`) };
  if (!('DIAL_MODE' in dial)) return { problems: ['dial.DIAL_MODE: required (ami, esl or http)'] };
  try {
    const config = loadConfig(Object.fromEntries(entries.map(([name, value]) => [name, String(value)])));
    const settings = { ...dialSettingsOf(config), defaultUserId };
    const built = dialerProblem(settings);
    return built ? { problems: [built] } : { settings };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    // Names and rules only: the messages of these checks never repeat a value (AMI_URL holds a secret).
    const problems = error.message
      .replace(/^Invalid configuration: /, '')
      .split(' | ')
      .map((problem) => `dial.${problem}`);
    return { problems };
  }
}

/** Builds the dialer the settings configure; a problem names the variable, never its value (it may hold a secret). */
function dialerProblem(settings: DialSettings): string | undefined {
  try {
    createDialer(settings);
    return undefined;
  } catch {
    const name = settings.mode === 'ami' ? 'AMI_URL' : settings.mode === 'esl' ? 'ESL_URL' : 'DIAL_URL';
    return `dial.${name}: the dialer cannot be built from it (not a usable address)`;
  }
}

/** What an operator sees of a portal's dial settings: the mode and the PBX's address, never a secret. */
export function dialView(
  dial: Record<string, string> | undefined,
): { DIAL_MODE: string; target: string } | null {
  if (!dial) return null;
  const url =
    dial.DIAL_MODE === 'ami' ? dial.AMI_URL : dial.DIAL_MODE === 'esl' ? dial.ESL_URL : dial.DIAL_URL;
  let target = '';
  try {
    const parsed = new URL(url ?? '');
    target = `${parsed.protocol}//${parsed.host}`;
  } catch {
    target = '';
  }
  return { DIAL_MODE: dial.DIAL_MODE, target };
}

/**
 * A portal's recording download settings, checked by the environment's rules for RECORDING_FETCH_HOSTS and
 * RECORDING_FETCH_AUTH (the problems name the field, never the credential).
 */
export function portalRecordingFetch(
  value: unknown,
): { settings: { hosts: string[]; auth?: string } } | { problems: string[] } {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return {
      problems: ['recordingFetch must be {"hosts": ["pbx.example.com"], "auth": "basic:user:password"}'],
    };
  const { hosts, auth, ...rest } = value as Record<string, unknown>;
  if (Object.keys(rest).length)
    return {
      problems: Object.keys(rest).map(
        (name) => `recordingFetch.${name.slice(0, 40)}: not a setting (hosts, auth)`,
      ),
    };
  if (!Array.isArray(hosts) || hosts.length === 0 || !hosts.every((host) => typeof host === 'string'))
    return {
      problems: [
        'recordingFetch.hosts: a non-empty list of hosts (pbx.local, 10.0.0.5:8080, *.pbx.example.com)',
      ],
    };
  if (auth !== undefined && typeof auth !== 'string')
    return { problems: ['recordingFetch.auth: must be a text'] };
  try {
    loadConfig({ RECORDING_FETCH_HOSTS: hosts.join(','), RECORDING_FETCH_AUTH: auth });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const problems = error.message
      .replace(/^Invalid configuration: /, '')
      .split(' | ')
      .map(
        (problem) =>
          `recordingFetch.${problem.replace(/^RECORDING_FETCH_HOSTS/, 'hosts').replace(/^RECORDING_FETCH_AUTH/, 'auth')}`,
      );
    return { problems };
  }
  return { settings: auth === undefined ? { hosts: [...hosts] } : { hosts: [...hosts], auth } };
}

/** What an operator sees of a portal's recording download settings: the hosts, and whether auth is set. */
export function recordingFetchView(
  fetch: { hosts: string[]; auth?: string } | undefined,
): { hosts: string[]; authSet: boolean } | null {
  return fetch ? { hosts: fetch.hosts, authSet: Boolean(fetch.auth) } : null;
}
