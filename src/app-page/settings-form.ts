import { SettingProblem } from '../tenancy/portal-settings-check';
import { PageSource } from './page-source';
import { DIAL_PLAIN, DIAL_SECRETS, FOLLOW_SECRETS, followModeOf } from './page-views';

/** The fields of the settings form shown back after a refused post (never one holding a secret). */
export const SETTINGS_ENTERED = [
  'defaultUserId',
  'defaultCountry',
  'missedCallTask',
  'transcribe',
  'lineNumber',
  'DIAL_MODE',
  ...DIAL_PLAIN,
];
/** The fields of the PBX-events form shown back likewise (its addresses hold passwords: never). */
export const FOLLOW_ENTERED = ['PBX_EVENTS', 'PBX_TRUNKS'];
/** The PBX-events modes the form offers: AMI, AMI with the CDR ledger, the event socket, the ledger alone. */
const FOLLOW_MODES = ['ami', 'ami+cdr', 'esl', 'cdr'];

/** The PBX-events form as the admin API's `follow` setting, or the form's own problems. */
export type FollowForm = { follow: Record<string, string> | null } | { problems: SettingProblem[] };

function textOf(form: Record<string, unknown>) {
  return (name: string) => (typeof form[name] === 'string' ? (form[name] as string).trim() : '');
}

/**
 * The settings form as the admin API's patch: an empty choice is `null` (back to the deployment's), a
 * number stays a text when it is not one (so the same validation names it); a dial address left empty keeps
 * the stored one of the same mode (addresses hold passwords and are never shown back).
 */
export async function settingsPatchOf(
  source: PageSource,
  portalId: string,
  form: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const text = textOf(form);
  const userId = text('defaultUserId');
  const task = text('missedCallTask');
  const mode = text('DIAL_MODE');
  const patch: Record<string, unknown> = {
    defaultUserId: userId === '' ? null : /^\d{1,9}$/.test(userId) ? Number(userId) : userId,
    defaultCountry: text('defaultCountry') === '' ? null : text('defaultCountry'),
    missedCallTask: task === '' ? null : task === 'on' ? true : task === 'off' ? false : task,
  };
  // A form of an older page has no transcripts field: it leaves them as they are.
  if ('transcribe' in form) {
    const transcribe = text('transcribe');
    patch.transcribe =
      transcribe === '' ? null : transcribe === 'on' ? true : transcribe === 'off' ? false : transcribe;
  }
  // A form of an older page has no line field: it leaves the line as it is.
  if ('lineNumber' in form) patch.lineNumber = text('lineNumber') === '' ? null : text('lineNumber');
  if (mode === '') {
    patch.dial = null;
    return patch;
  }
  const stored = await source.storedDial(portalId);
  const dial: Record<string, string> =
    stored && stored.DIAL_MODE === mode ? { ...stored } : { DIAL_MODE: mode };
  for (const name of DIAL_SECRETS) if (text(name)) dial[name] = text(name);
  // Plain settings are shown in their fields: an empty one is the deployment's default.
  for (const name of DIAL_PLAIN) {
    if (text(name)) dial[name] = text(name);
    else if (name in form) delete dial[name];
  }
  patch.dial = dial;
  return patch;
}

/**
 * The PBX-events form as the admin API's `follow` setting: the mode (empty: `null`, not followed), the
 * trunks as typed, and each address the mode needs as typed, or else the stored one (addresses hold
 * passwords and are never shown back). Problems of the form itself (an address the mode needs is neither
 * typed nor stored for the ledger alone, where the admin API would store an empty setting) are named here;
 * everything else is the admin API's check.
 */
export async function followOf(
  source: PageSource,
  portalId: string,
  form: Record<string, unknown>,
): Promise<FollowForm> {
  const text = textOf(form);
  const mode = text('PBX_EVENTS');
  if (mode === '') return { follow: null };
  const stored = (await source.storedFollow(portalId)) ?? {};
  const [events, ledger] = mode === 'cdr' ? ['', 'cdr'] : mode.split('+');
  if (!FOLLOW_MODES.includes(mode) && mode !== followModeOf(stored)) {
    return {
      problems: [{ field: 'follow', problems: [`PBX_EVENTS: not one of ${FOLLOW_MODES.join(', ')}`] }],
    };
  }
  const follow: Record<string, string> = { PBX_EVENTS: events };
  const address = (name: (typeof FOLLOW_SECRETS)[number]) => {
    const value = text(name) || stored[name];
    if (value) follow[name] = value;
  };
  if (events === 'ami') address('AMI_URL');
  if (events === 'esl') address('ESL_URL');
  if (ledger === 'cdr') address('ASTERISK_CDR_URL');
  if (text('PBX_TRUNKS')) follow.PBX_TRUNKS = text('PBX_TRUNKS');
  if (ledger === 'cdr' && !follow.ASTERISK_CDR_URL) {
    return {
      problems: [{ field: 'follow', problems: ['follow.ASTERISK_CDR_URL: required for the CDR ledger'] }],
    };
  }
  return { follow };
}

/** The fields of a refused post shown again (`prefix`: the form's, `follow.`), never one holding a secret. */
export function enteredOf(
  form: Record<string, unknown>,
  names: string[],
  prefix = '',
): Record<string, string> {
  const entered: Record<string, string> = {};
  for (const name of names) {
    if (typeof form[name] === 'string') entered[`${prefix}${name}`] = (form[name] as string).slice(0, 200);
  }
  return entered;
}

/**
 * Problems by the field they concern: `dial.AMI_URL: …` goes beside the dial form's AMI_URL, `follow.AMI_URL:
 * …` beside the PBX-events form's, the rest of each beside its mode.
 */
export function errorsByField(problems: SettingProblem[]): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  for (const { field, problems: messages } of problems) {
    for (const message of messages) {
      const named = /^(dial|follow)\.([A-Z][A-Z0-9_]*)\b/.exec(message);
      const key = (field === 'dial' || field === 'follow') && named ? `${named[1]}.${named[2]}` : field;
      (errors[key] ??= []).push(message);
    }
  }
  return errors;
}
