import { ConfigError, loadConfig } from '../config/app-config';
import { DialSettings, dialSettingsOf } from '../config/settings';

/** The variables a portal's own dial settings may set: the environment's click-to-call ones (SPEC.md §6). */
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
 * the variable as OPERATIONS.md does). Returns the problems, or the settings (defaultUserId: the portal's).
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
    return { settings: { ...dialSettingsOf(config), defaultUserId } };
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
