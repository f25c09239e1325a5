import { BlockList, isIP } from 'node:net';
import { AppConfig, ConfigError, loadConfig } from '../config/app-config';
import { FollowSettings, followSettingsOf } from '../config/settings';
import { createFollowers } from '../follow/portal-followers';

/** The variables a portal's own follow settings may set: the environment's "follow the PBX" ones (docs/API.md). */
export const FOLLOW_VARIABLES = [
  'PBX_EVENTS',
  'AMI_URL',
  'PBX_TRUNKS',
  'ESL_URL',
  'ASTERISK_CDR_URL',
] as const;

/**
 * Addresses a plaintext PBX connection may reach in production: loopback, RFC 1918, carrier-grade NAT
 * (where VPNs such as WireGuard or Tailscale put their peers), IPv6 unique-local. Anything else may cross
 * the internet, where the Manager secret and every caller's number would travel in clear.
 */
const PRIVATE = new BlockList();
PRIVATE.addSubnet('127.0.0.0', 8, 'ipv4');
PRIVATE.addSubnet('10.0.0.0', 8, 'ipv4');
PRIVATE.addSubnet('172.16.0.0', 12, 'ipv4');
PRIVATE.addSubnet('192.168.0.0', 16, 'ipv4');
PRIVATE.addSubnet('100.64.0.0', 10, 'ipv4');
PRIVATE.addAddress('::1', 'ipv6');
PRIVATE.addSubnet('fc00::', 7, 'ipv6');

/** Whether `host` (a URL's hostname) is a literal private address; a name may resolve to anything. */
function isPrivateAddress(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  const family = isIP(bare);
  return family !== 0 && PRIVATE.check(bare, family === 4 ? 'ipv4' : 'ipv6');
}

const NO_SINK = { submit: () => undefined, idle: () => Promise.resolve() };

/**
 * A portal's follow settings, checked by the same rules as the environment's (so a 400 names the variable
 * as OPERATIONS.md does), then by building the followers they configure: what is accepted here is what a
 * portal runtime can build. In production (a hosted bridge reaching customers' PBXs) a plaintext `tcp://`
 * connection is accepted only to a literal private address: AMI over TLS (`tls://…:5039`), else a VPN.
 * Returns the problems (names and rules, never a value), or the settings.
 */
export function portalFollowSettings(
  follow: unknown,
  rules: { production: boolean },
): { settings: FollowSettings } | { problems: string[] } {
  if (typeof follow !== 'object' || follow === null || Array.isArray(follow))
    return {
      problems: [
        'follow must be an object of follow settings, e.g. {"PBX_EVENTS": "ami", "AMI_URL": "tls://…"}',
      ],
    };
  const entries = Object.entries(follow);
  const unknown = entries.filter(([name]) => !(FOLLOW_VARIABLES as readonly string[]).includes(name));
  if (unknown.length)
    return {
      problems: unknown.map(
        ([name]) => `follow.${name.slice(0, 40)}: not a follow setting (${FOLLOW_VARIABLES.join(', ')})`,
      ),
    };
  const notText = entries.filter(([, value]) => typeof value !== 'string');
  if (notText.length) return { problems: notText.map(([name]) => `follow.${name}: must be a text`) };
  if (!('PBX_EVENTS' in follow)) return { problems: ['follow.PBX_EVENTS: required (ami)'] };
  // A variable this version does not read would be accepted and silently do nothing.
  const known = Object.keys(new AppConfig());
  const unread = entries.filter(([name]) => !known.includes(name));
  if (unread.length)
    return {
      problems: unread.map(([name]) => `follow.${name}: not supported by this version of the bridge`),
    };
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
  if (rules.production) {
    const plain = (['AMI_URL', 'ESL_URL'] as const).filter((name) => {
      const value = (follow as Record<string, string>)[name];
      if (!value) return false;
      try {
        const url = new URL(value);
        return url.protocol === 'tcp:' && !isPrivateAddress(url.hostname);
      } catch {
        return false;
      }
    });
    if (plain.length)
      return {
        problems: plain.map(
          (name) =>
            `follow.${name}: plaintext tcp:// to an address that is not private is refused in production (use tls://…:5039 with Asterisk's tlsenable, or a private address over a VPN)`,
        ),
      };
  }
  try {
    createFollowers(settings, {
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

/** What an operator sees of a portal's follow settings: the source, the PBX's address, trunks; no secret. */
export function followView(
  follow: Record<string, string> | undefined,
): { PBX_EVENTS: string; target: string; PBX_TRUNKS?: string; ledger?: string } | null {
  if (!follow) return null;
  const url = follow.PBX_EVENTS === 'esl' ? follow.ESL_URL : follow.AMI_URL;
  return {
    PBX_EVENTS: follow.PBX_EVENTS,
    target: addressOf(url),
    ...(follow.PBX_TRUNKS && { PBX_TRUNKS: follow.PBX_TRUNKS }),
    ...(follow.ASTERISK_CDR_URL && { ledger: addressOf(follow.ASTERISK_CDR_URL) }),
  };
}

function addressOf(url: string | undefined): string {
  try {
    const parsed = new URL(url ?? '');
    return `${parsed.protocol}//${parsed.host}`;
  } catch {
    return '';
  }
}
