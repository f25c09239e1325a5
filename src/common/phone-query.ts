import { BadRequestException } from '@nestjs/common';
import { toE164 } from './phone-number';

/** What reading a phone number needs of the configuration (IntakeSettings and LookupSettings have it). */
export interface PhoneQuerySettings {
  defaultCountry?: string;
}

/**
 * The phone number a PBX asks about, in E.164, from the query parameter `name` of `url`; a 400 naming
 * the parameter when it is missing or not a phone number. `GET /v1/lookup` asks with `phone`, the 3CX
 * adapter with `number`.
 */
export function requiredPhone(url: string, settings: PhoneQuerySettings, name = 'phone'): string {
  const raw = phoneParameter(url, name);
  const phone = raw === undefined ? undefined : toE164(raw, settings.defaultCountry);
  if (phone) return phone;
  throw badPhone(
    name,
    raw === undefined || raw.trim() === '' ? `${name} is required` : notANumber(name, settings),
  );
}

/**
 * The `phone` (or `name`) query parameter as the PBX wrote it. Query parsers read `+` as a space, but PBXs
 * send `?phone=+4915…` unencoded: a leading `+` is kept as the plus sign, later ones are spaces.
 */
export function phoneParameter(url: string, name = 'phone'): string | undefined {
  const query = url.split('?', 2)[1] ?? '';
  for (const pair of query.split('&')) {
    const separator = pair.indexOf('=');
    const key = separator < 0 ? pair : pair.slice(0, separator);
    if (safeDecode(key) !== name) continue;
    const value = separator < 0 ? '' : pair.slice(separator + 1);
    const spaced = value.startsWith('+')
      ? `%2B${value.slice(1).replace(/\+/g, ' ')}`
      : value.replace(/\+/g, ' ');
    return safeDecode(spaced) ?? value;
  }
  return undefined;
}

function safeDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

function notANumber(name: string, settings: PhoneQuerySettings): string {
  const hint = settings.defaultCountry ? '' : ' (a national number needs DEFAULT_COUNTRY on the bridge)';
  return `${name} is not a phone number${hint}`;
}

function badPhone(name: string, problem: string): BadRequestException {
  return new BadRequestException({
    statusCode: 400,
    error: 'Bad Request',
    message: problem,
    errors: [{ field: name, problems: [problem] }],
  });
}
