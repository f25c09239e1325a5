import { credentialUrlAddress } from '../common/credential-url';
import { Destination, EgressPolicy } from '../common/egress';
import { ConfigError, loadConfig } from '../config/app-config';
import { DialSettings, dialSettingsOf } from '../config/settings';
import { dialDestinationOf } from '../dialer/dial-destination';
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
 * A portal's dial settings as the admin API, the page and a portal runtime take them: checked by the same
 * class-validator rules as the environment's (so a 400 names the variable as OPERATIONS.md does), then by
 * building the dialer they configure (what is accepted here is what a portal runtime can build), then its
 * destination under `egress` (SPEC §8). Returns the problems of shape, or the settings (defaultUserId: the
 * portal's) with the destinations to check at save (`egress.checkNow`) and what the rule refuses now
 * (`refusals`: a literal address in a refused range, credentials in clear, a `{placeholder}` in DIAL_URL's
 * host). A save refuses both; a runtime built from a record stored before the rule keeps its settings and
 * fails each click at once with the refusal (its card is finished, never left open). Problems name the
 * variable, never its value.
 */
export function portalDialSettings(
  dial: unknown,
  defaultUserId: number | undefined,
  egress: EgressPolicy,
): { settings: DialSettings; destinations: Destination[]; refusals: string[] } | { problems: string[] } {
  if (typeof dial !== 'object' || dial === null || Array.isArray(dial)) {
    return {
      problems: ['dial must be an object of dial settings, e.g. {"DIAL_MODE": "ami", "AMI_URL": "…"}'],
    };
  }
  const entries = Object.entries(dial);
  const unknown = entries.filter(([name]) => !(DIAL_VARIABLES as readonly string[]).includes(name));
  if (unknown.length) {
    return {
      problems: unknown.map(
        ([name]) => `dial.${name.slice(0, 40)}: not a dial setting (${DIAL_VARIABLES.join(', ')})`,
      ),
    };
  }
  const notText = entries.filter(([, value]) => typeof value !== 'string' && typeof value !== 'number');
  if (notText.length) return { problems: notText.map(([name]) => `dial.${name}: must be a text`) };
  if (!('DIAL_MODE' in dial)) return { problems: ['dial.DIAL_MODE: required (ami, esl or http)'] };
  try {
    const config = loadConfig(Object.fromEntries(entries.map(([name, value]) => [name, String(value)])));
    const settings = { ...dialSettingsOf(config), defaultUserId };
    const built = dialerProblem(settings, egress);
    if (built) return { problems: [built] };
    const destination = dialDestinationOf(settings, egress);
    if (!destination) return { settings, destinations: [], refusals: [] };
    return 'problem' in destination
      ? { settings, destinations: [], refusals: [`dial.${destination.problem}`] }
      : { settings, destinations: [destination], refusals: [] };
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
function dialerProblem(settings: DialSettings, egress: EgressPolicy): string | undefined {
  try {
    createDialer(settings, egress);
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
  return { DIAL_MODE: dial.DIAL_MODE, target: dialTarget(dial.DIAL_MODE, url ?? '') };
}

/** `scheme://host:port` of a dial address, read as the dialer reads it (any character in a password). */
function dialTarget(mode: string, url: string): string {
  if (mode === 'ami' || mode === 'esl') {
    return credentialUrlAddress(url, mode === 'ami' ? 'AMI_URL' : 'ESL_URL');
  }
  try {
    const parsed = new URL(url.replace(/\{\w+\}/g, 'x'));
    return `${parsed.protocol}//${parsed.host}`;
  } catch {
    return '';
  }
}

/**
 * A portal's recording download settings, checked by the environment's rules for RECORDING_FETCH_HOSTS and
 * RECORDING_FETCH_AUTH (the problems name the field, never the credential), then by `egress` (SPEC §8): an
 * entry that is a literal address in a refused range, or this deployment's own name, is refused; a named
 * entry is returned as a destination to resolve at save (`egress.checkNow`); a wildcard (`*.pbx.example.com`)
 * names no host to check at save: every download's connection is checked (RecordingFetcher).
 */
export function portalRecordingFetch(
  value: unknown,
  egress: EgressPolicy,
): { settings: { hosts: string[]; auth?: string }; destinations: Destination[] } | { problems: string[] } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return {
      problems: ['recordingFetch must be {"hosts": ["pbx.example.com"], "auth": "basic:user:password"}'],
    };
  }
  const { hosts, auth, ...rest } = value as Record<string, unknown>;
  if (Object.keys(rest).length) {
    return {
      problems: Object.keys(rest).map(
        (name) => `recordingFetch.${name.slice(0, 40)}: not a setting (hosts, auth)`,
      ),
    };
  }
  if (!Array.isArray(hosts) || hosts.length === 0 || !hosts.every((host) => typeof host === 'string')) {
    return {
      problems: [
        'recordingFetch.hosts: a non-empty list of hosts (pbx.local, 10.0.0.5:8080, *.pbx.example.com)',
      ],
    };
  }
  if (auth !== undefined && typeof auth !== 'string') {
    return { problems: ['recordingFetch.auth: must be a text'] };
  }
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
  const problems: string[] = [];
  const destinations: Destination[] = [];
  for (const [index, entry] of hosts.entries()) {
    const pattern = entry.trim().toLowerCase();
    if (pattern.startsWith('*.')) continue;
    const colon = pattern.lastIndexOf(':');
    const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(pattern);
    const host = bracketed
      ? bracketed[1]
      : colon > 0 && !pattern.slice(0, colon).includes(':')
        ? pattern.slice(0, colon)
        : pattern;
    const port = Number(
      bracketed ? (bracketed[2] ?? 443) : host === pattern ? 443 : pattern.slice(colon + 1),
    );
    const refusal = egress.hostRefusal(host);
    if (refusal) {
      problems.push(
        `recordingFetch.hosts: entry ${index + 1}: ${refusal} (loopback, link-local, private and shared ranges are refused unless TENANT_ALLOWED_NETWORKS allows them)`,
      );
      continue;
    }
    const destination = egress.destination({
      variable: `recordingFetch.hosts (entry ${index + 1})`,
      host,
      port: Number.isInteger(port) && port > 0 ? port : 443,
      tls: true,
      credentials: false,
    });
    if ('problem' in destination) problems.push(`recordingFetch.hosts: ${destination.problem}`);
    else if (egress.restricted) destinations.push(destination);
  }
  if (problems.length) return { problems };
  return {
    settings: auth === undefined ? { hosts: [...hosts] } : { hosts: [...hosts], auth },
    destinations,
  };
}

/** What an operator sees of a portal's recording download settings: the hosts, and whether auth is set. */
export function recordingFetchView(
  fetch: { hosts: string[]; auth?: string } | undefined,
): { hosts: string[]; authSet: boolean } | null {
  return fetch ? { hosts: fetch.hosts, authSet: Boolean(fetch.auth) } : null;
}
