import { SettingProblem } from '../tenancy/portal-settings-check';

/** The phone systems the guided setup knows. */
export const SYSTEMS = ['freepbx', 'freeswitch', '3cx', 'yeastar', 'other'] as const;
export type PbxSystem = (typeof SYSTEMS)[number];

export function systemOf(value: unknown): PbxSystem | undefined {
  return SYSTEMS.find((system) => system === value);
}

/** The systems the bridge logs in to (the rest post to it). */
export function followed(system: PbxSystem): system is 'freepbx' | 'freeswitch' {
  return system === 'freepbx' || system === 'freeswitch';
}

/** The manager user the FreePBX snippet names until the administrator types another. */
export const DEFAULT_AMI_USER = 'crm-bridge';
/** The read-only rights of REAL-PBX.md §1.4, and the write right events need (originate: click-to-call). */
export const AMI_READ = ['system', 'call', 'agent', 'cdr', 'dialplan'];
export const AMI_WRITE = ['reporting'];

/** The answers' fields the page shows again after a refused post (never a password). */
export const ANSWERS_SHOWN = ['host', 'port', 'user', 'tls', 'cdrUser', 'cdrName', 'clickToCall'];
/** FreePBX's CDR database. */
export const DEFAULT_CDR_NAME = 'asteriskcdrdb';

/** What the answers make: the portal's `follow` (and `dial`) settings, by SPEC's names, or problems by field. */
export type AnswersOutcome =
  | { patch: { follow: Record<string, string>; dial?: Record<string, string> | null } }
  | { errors: Record<string, string[]> };

const HOST = /^[a-z0-9.-]{1,253}$|^\[?[0-9a-f:.]{2,45}\]?$/i;

/**
 * The answers of the FreePBX or FreeSWITCH questions as the settings the admin API takes: AMI_URL
 * `tcp://user:password@host:5038` (tls:// when encrypted), PBX_EVENTS `ami`, ASTERISK_CDR_URL when a CDR
 * user is given; ESL_URL `tcp://:password@host:8021`, PBX_EVENTS `esl`. A password left empty is the stored
 * one's, when the same kind of address is stored. Click-to-call "yes": the dial settings from the same
 * address and user; "no": none. What the admin API's check says of the result is its own, beside the field.
 */
export function settingsOfAnswers(
  system: 'freepbx' | 'freeswitch',
  form: Record<string, unknown>,
  stored: Record<string, string> | undefined,
): AnswersOutcome {
  const text = (name: string) => (typeof form[name] === 'string' ? (form[name] as string).trim() : '');
  const errors: Record<string, string[]> = {};
  const problem = (field: string, message: string) => (errors[field] ??= []).push(message);
  const host = text('host');
  if (!HOST.test(host)) problem('host', 'host: a host name or an IP address, e.g. pbx.example.com');
  const tls = text('tls') === 'yes';
  const defaultPort = system === 'freepbx' ? (tls ? '5039' : '5038') : '8021';
  const port = text('port') || defaultPort;
  if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
    problem('port', 'port: a whole number from 1 to 65535');
  }
  const storedUrl = system === 'freepbx' ? stored?.AMI_URL : stored?.ESL_URL;
  const user = system === 'freepbx' ? text('user') : '';
  if (system === 'freepbx' && !/^[\w.@-]{1,64}$/.test(user)) {
    problem('user', 'user: the manager user name, 1-64 letters, digits, ".", "_", "-", "@"');
  }
  const password = text('password') || passwordOf(storedUrl);
  if (!password) problem('password', 'password: required (the PBX refuses a login without one)');
  const cdrUser = text('cdrUser');
  const cdrPassword = text('cdrPassword') || (cdrUser ? passwordOf(stored?.ASTERISK_CDR_URL) : '');
  if (system === 'freepbx' && cdrUser && !cdrPassword) {
    problem('cdrPassword', 'cdrPassword: required with a database user');
  }
  const cdrName = text('cdrName') || DEFAULT_CDR_NAME;
  if (!/^[\w$]{1,64}$/.test(cdrName)) {
    problem('cdrName', 'cdrName: the database name, 1-64 letters, digits, "_" or "$"');
  }
  const click = text('clickToCall');
  if (click !== '' && click !== 'yes' && click !== 'no') problem('clickToCall', 'clickToCall: yes or no');
  if (Object.keys(errors).length) return { errors };
  const scheme = tls ? 'tls' : 'tcp';
  const at = `${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
  const secret = encodeURIComponent(password);
  const follow: Record<string, string> =
    system === 'freepbx'
      ? { PBX_EVENTS: 'ami', AMI_URL: `${scheme}://${encodeURIComponent(user)}:${secret}@${at}` }
      : { PBX_EVENTS: 'esl', ESL_URL: `${scheme}://:${secret}@${at}` };
  if (system === 'freepbx' && cdrUser) {
    const hostOnly = at.slice(0, at.lastIndexOf(':'));
    follow.ASTERISK_CDR_URL = `${tls ? 'mysqls' : 'mysql'}://${encodeURIComponent(cdrUser)}:${encodeURIComponent(cdrPassword)}@${hostOnly}:3306/${cdrName}`;
  }
  if (stored?.PBX_TRUNKS) follow.PBX_TRUNKS = stored.PBX_TRUNKS;
  const dial: Record<string, string> | null | undefined =
    click === 'yes'
      ? system === 'freepbx'
        ? { DIAL_MODE: 'ami', AMI_URL: follow.AMI_URL }
        : { DIAL_MODE: 'esl', ESL_URL: follow.ESL_URL }
      : click === 'no'
        ? null
        : undefined;
  return { patch: dial === undefined ? { follow } : { follow, dial } };
}

function passwordOf(url: string | undefined): string {
  if (!url) return '';
  try {
    return decodeURIComponent(new URL(url).password);
  } catch {
    return '';
  }
}

/** What the stored follow settings say of the answers (never a password): to fill the form again. */
export function answersOfStored(stored: Record<string, string> | undefined): Record<string, string> {
  const url = stored?.AMI_URL ?? stored?.ESL_URL;
  if (!url) return {};
  try {
    const parsed = new URL(url);
    const cdr = stored?.ASTERISK_CDR_URL ? new URL(stored.ASTERISK_CDR_URL) : undefined;
    return {
      host: parsed.hostname.replace(/^\[|\]$/g, ''),
      port: parsed.port,
      user: decodeURIComponent(parsed.username),
      tls: parsed.protocol === 'tls:' ? 'yes' : '',
      cdrUser: cdr ? decodeURIComponent(cdr.username) : '',
      cdrName: cdr ? cdr.pathname.slice(1) : '',
    };
  } catch {
    return {};
  }
}

/**
 * Problems the admin API's check named (`follow.AMI_URL: …`, `dial…`), by the answer they concern: an
 * address's beside the PBX's address, the CDR database's beside its user, the rest above the form.
 */
export function answerErrorsOf(problems: SettingProblem[]): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  for (const { field, problems: messages } of problems) {
    for (const message of messages) {
      const key = /ASTERISK_CDR_URL/.test(message)
        ? 'cdrUser'
        : field === 'follow' || field === 'dial'
          ? 'host'
          : 'form';
      (errors[key] ??= []).push(message);
    }
  }
  return errors;
}
