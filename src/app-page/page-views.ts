import { FollowHealthView } from '../follow/pbx-follower';
import { ConnectionLine, PageDial, PageFollow } from './page-source';

/** Dial settings holding a password or a token: never shown, an empty field keeps the stored one. */
export const DIAL_SECRETS = ['AMI_URL', 'ESL_URL', 'DIAL_URL', 'DIAL_AUTH'] as const;
/** Dial settings shown as they are (empty: the deployment's default). */
export const DIAL_PLAIN = [
  'AMI_CHANNEL',
  'AMI_CONTEXT',
  'ESL_ORIGINATE',
  'DIAL_METHOD',
  'DIAL_TIMEOUT_SEC',
  'DIAL_MATCH_SEC',
] as const;
/** The PBX-events addresses: each holds a password. */
export const FOLLOW_SECRETS = ['AMI_URL', 'ESL_URL', 'ASTERISK_CDR_URL'] as const;

/** What the page shows of dial settings: their plain values, and which secrets are set (never their values). */
export function dialPageView(dial: Record<string, string | undefined> | undefined): PageDial | null {
  if (!dial?.DIAL_MODE) return null;
  const values: Record<string, string> = {};
  for (const name of DIAL_PLAIN) if (dial[name]) values[name] = String(dial[name]);
  const set: Record<string, string> = {};
  for (const name of DIAL_SECRETS) {
    if (dial[name]) set[name] = name === 'DIAL_AUTH' ? '' : addressOf(String(dial[name]));
  }
  return { DIAL_MODE: dial.DIAL_MODE, values, set };
}

/**
 * The page's PBX-events mode of follow settings: `ami`, `esl`, with `+cdr` when the CDR ledger reads beside
 * it, `cdr` for the ledger alone (PBX_EVENTS unset); empty: not followed.
 */
export function followModeOf(follow: Record<string, string | undefined> | undefined): string {
  if (!follow) return '';
  const events = follow.PBX_EVENTS ?? '';
  const ledger = follow.ASTERISK_CDR_URL ? 'cdr' : '';
  return [events, ledger].filter(Boolean).join('+');
}

/** What the page shows of follow settings: the mode, the trunks, each address without its credentials. */
export function followPageView(follow: Record<string, string | undefined> | undefined): PageFollow | null {
  if (!follow) return null;
  const set: Record<string, string> = {};
  for (const name of FOLLOW_SECRETS) if (follow[name]) set[name] = addressOf(String(follow[name]));
  return { mode: followModeOf(follow), PBX_TRUNKS: follow.PBX_TRUNKS ?? '', set };
}

/** `tcp://host:5038`, `mysql://host:3306/asteriskcdrdb`: the address without user, password or query. */
function addressOf(url: string): string {
  try {
    const parsed = new URL(url);
    const path = parsed.protocol === 'mysql:' ? parsed.pathname : '';
    return `${parsed.protocol}//${parsed.host}${path}`;
  } catch {
    return '';
  }
}

/** The connection line of a portal's PBX followers (one line for AMI/ESL and the ledger together). */
export function followLine(views: FollowHealthView[]): ConnectionLine {
  const parts = views.flatMap((health) =>
    'ledger' in health && health.source === 'ledger'
      ? [
          {
            here: health.ledger.readingHere,
            connected: health.ledger.connected,
            target: health.ledger.target,
            lastError: health.ledger.lastError,
          },
        ]
      : [
          {
            here: health.followingHere,
            connected: health.connected,
            target: health.target,
            lastError: health.lastError,
            calls: `${health.callsFollowed} calls followed, ${health.callsLive} live`,
          },
        ],
  );
  if (!parts.length) return { key: 'pbxFollow', ok: false, detail: 'the settings could not be built' };
  if (!parts.some((part) => part.here)) {
    return { key: 'pbxFollow', ok: null, detail: 'another instance of the bridge follows the PBX' };
  }
  return {
    key: 'pbxFollow',
    ok: parts.every((part) => part.connected),
    detail: parts
      .map((part) =>
        [part.target, part.lastError, 'calls' in part ? part.calls : undefined].filter(Boolean).join(': '),
      )
      .join('; '),
  };
}
