import { CountryCode, parsePhoneNumberFromString } from 'libphonenumber-js/max';

/**
 * The written forms of one E.164 number to ask the portal for. Portals compare the digits of stored
 * numbers (how real portals behave), and people store numbers of their own country nationally (`030 98765432`),
 * so for a number of `DEFAULT_COUNTRY` its national digits are asked for too.
 */
export function portalPhoneForms(e164: string, defaultCountry?: string): string[] {
  const forms = [e164];
  const parsed = parsePhoneNumberFromString(e164);
  if (parsed && defaultCountry && parsed.country === (defaultCountry as CountryCode)) {
    forms.push(parsed.format('NATIONAL').replace(/\D/g, ''));
  }
  return [...new Set(forms)];
}
