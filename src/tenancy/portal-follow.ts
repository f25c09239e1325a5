import { credentialUrlAddress } from '../common/credential-url';
import { Destination, EgressPolicy } from '../common/egress';
import { AppConfig, ConfigError, loadConfig } from '../config/app-config';
import { FollowSettings, followSettingsOf } from '../config/settings';
import { destinationsOf, followTargetsOf } from '../follow/follow-targets';
import { createFollowers } from '../follow/portal-followers';

/** The variables a portal's own follow settings may set: the environment's "follow the PBX" ones (docs/API.md). */
export const FOLLOW_VARIABLES = [
  'PBX_EVENTS',
  'AMI_URL',
  'PBX_TRUNKS',
  'ESL_URL',
  'ASTERISK_CDR_URL',
] as const;

const NO_SINK = { submit: () => undefined, idle: () => Promise.resolve() };

/**
 * A portal's follow settings, checked by the same rules as the environment's (so a 400 names the variable
 * as OPERATIONS.md does), then under the deployment's egress rule (SPEC §8: every AMI_URL, ESL_URL and
 * ASTERISK_CDR_URL becomes a Destination of `rules.egress`, which refuses a literal address of this
 * deployment's network unless TENANT_ALLOWED_NETWORKS allows it, and credentials in clear to anything but
 * such an allowed address: `tls://`, mysql `?ssl=true`), then by building the followers they configure:
 * what is accepted here is what a portal runtime can build. A name is not resolved here (synchronous):
 * the save path resolves `followDestinations` with `EgressPolicy.checkNow`, and every connection checks it
 * again. Returns the problems (names and rules, never a value), or the settings.
 */
export function portalFollowSettings(
  follow: unknown,
  rules: { production: boolean; egress: EgressPolicy },
): { settings: FollowSettings } | { problems: string[] } {
  if (typeof follow !== 'object' || follow === null || Array.isArray(follow)) {
    return {
      problems: [
        'follow must be an object of follow settings, e.g. {"PBX_EVENTS": "ami", "AMI_URL": "tls://…"}',
      ],
    };
  }
  const entries = Object.entries(follow);
  const unknown = entries.filter(([name]) => !(FOLLOW_VARIABLES as readonly string[]).includes(name));
  if (unknown.length) {
    return {
      problems: unknown.map(
        ([name]) => `follow.${name.slice(0, 40)}: not a follow setting (${FOLLOW_VARIABLES.join(', ')})`,
      ),
    };
  }
  const notText = entries.filter(([, value]) => typeof value !== 'string');
  if (notText.length) return { problems: notText.map(([name]) => `follow.${name}: must be a text`) };
  if (!('PBX_EVENTS' in follow)) return { problems: ['follow.PBX_EVENTS: required (ami)'] };
  // A variable this version does not read would be accepted and silently do nothing.
  const known = Object.keys(new AppConfig());
  const unread = entries.filter(([name]) => !known.includes(name));
  if (unread.length) {
    return {
      problems: unread.map(([name]) => `follow.${name}: not supported by this version of the bridge`),
    };
  }
  let settings: FollowSettings;
  try {
    settings = followSettingsOf(loadConfig(Object.fromEntries(entries as [string, string][])));
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    // Names and rules only: the messages of these checks never repeat a value (AMI_URL holds a secret).
    return {
      problems: error.message
        .replace(/^Invalid configuration: /, '')
        .split(' | ')
        .map((problem) => `follow.${problem}`),
    };
  }
  const targets = followTargetsOf(settings, rules.egress);
  if ('problems' in targets) return { problems: targets.problems.map((problem) => `follow.${problem}`) };
  try {
    createFollowers(settings, {
      egress: rules.egress,
      sink: NO_SINK,
      isEmployee: () => false,
      internalMaxDigits: 0,
      followHere: () => false,
    });
  } catch (error) {
    // Builders name the setting in their message and never its value.
    return { problems: [`follow.${(error as Error).message}`] };
  }
  return { settings };
}

/**
 * The destinations a checked FollowSettings connects to under `egress`, for the save path to resolve their
 * names now (`EgressPolicy.checkNow`: a name that resolves into this deployment's network is refused when
 * saved, not only at each connection). Throws when the settings do not build under `egress` (check them
 * with portalFollowSettings first); the message names the setting, never its value.
 */
export function followDestinations(settings: FollowSettings, egress: EgressPolicy): Destination[] {
  const targets = followTargetsOf(settings, egress);
  if ('problems' in targets) throw new Error(targets.problems.join('; '));
  return destinationsOf(targets.targets);
}

/** What an operator sees of a portal's follow settings: the source, the PBX's address, trunks; no secret. */
export function followView(
  follow: Record<string, string> | undefined,
): { PBX_EVENTS: string; target: string; PBX_TRUNKS?: string; ledger?: string } | null {
  if (!follow) return null;
  const url = follow.PBX_EVENTS === 'esl' ? follow.ESL_URL : follow.AMI_URL;
  return {
    PBX_EVENTS: follow.PBX_EVENTS,
    target: credentialUrlAddress(url, follow.PBX_EVENTS === 'esl' ? 'ESL_URL' : 'AMI_URL'),
    ...(follow.PBX_TRUNKS && { PBX_TRUNKS: follow.PBX_TRUNKS }),
    ...(follow.ASTERISK_CDR_URL && {
      ledger: credentialUrlAddress(follow.ASTERISK_CDR_URL, 'ASTERISK_CDR_URL'),
    }),
  };
}
