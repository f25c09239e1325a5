import { Matches, ValidateBy } from 'class-validator';
import { IANAZone } from 'luxon';
import { CredentialVariable, readCredentialUrl } from '../common/credential-url';
import { allowedNetworksOf } from '../common/egress';
import { checkLineRules } from '../common/lines';

/*
 * Checks of particular values, beyond class-validator's own: each a decorator a declaration lists. Their
 * messages name the variable and the rule, never the value (several of these values hold secrets).
 */

/** An http(s) URL, possibly with `{file}`/`{path}` placeholders (PBX recording templates). */
export const recordingTemplate = (name: string) =>
  Matches(/^https?:\/\/[^/\s]+(\/\S*)?$/i, { message: `${name} must be an http(s) URL` });

/** `basic:user:password` or `bearer:token`, turned into a header by settings.ts' `authorizationOf`. */
export const credentials = (name: string) =>
  Matches(/^(basic:[^:]+:.+|bearer:.+)$/, { message: `${name} must be basic:user:password or bearer:token` });

export const baseUrl = (name: string, example: string) =>
  Matches(/^https?:\/\/[^/]+\/?$/, { message: `${name} must be a base URL like ${example}` });

export const ianaZone = (name: string) =>
  ValidateBy({
    name: 'isIanaZone',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && IANAZone.isValidZone(value),
      defaultMessage: () => `${name} must be an IANA time zone such as Europe/Berlin or UTC`,
    },
  });

/** CIDRs as `allowedNetworksOf` reads them; its problem is the message. */
export const cidrList = (name: string) =>
  ValidateBy({
    name: 'isCidrList',
    validator: {
      validate: (value: unknown) =>
        !Array.isArray(value) || !('problem' in allowedNetworksOf(value as string[])),
      defaultMessage: (args) => {
        const checked = allowedNetworksOf((args?.value as string[]) ?? []);
        return 'problem' in checked ? checked.problem : `${name} is not usable`;
      },
    },
  });

/** `host`, `host:port` or `*.suffix`, each item. */
export const hostPatterns = (name: string) =>
  ValidateBy({
    name: 'isHostPatternList',
    validator: {
      validate: (value: unknown) =>
        Array.isArray(value) &&
        value.every((item) => typeof item === 'string' && /^(\*\.)?[a-z0-9.-]+(:\d{1,5})?$/i.test(item)),
      defaultMessage: () =>
        `${name} must be comma-separated hosts: pbx.local, 10.0.0.5:8080, *.pbx.example.com`,
    },
  });

/** Read by readCredentialUrl (any character in the password). */
export function credentialUrl(variable: CredentialVariable) {
  const problem = (value: unknown): string | undefined => {
    if (typeof value !== 'string') return undefined;
    const parsed = readCredentialUrl(value, variable);
    // The configuration's error puts `AMI_URL: ` in front already: the rule's words without the name.
    return 'problem' in parsed ? parsed.problem.slice(variable.length + 1) : undefined;
  };
  return ValidateBy({
    name: `is${variable}`,
    validator: {
      validate: (value: unknown) => problem(value) === undefined,
      defaultMessage: (args?: { value?: unknown }) => problem(args?.value) ?? `${variable} is not usable`,
    },
  });
}

/** DIAL_URL beyond its shape: `dialUrlProblem`. */
export const usableDialUrl = () =>
  ValidateBy({
    name: 'isUsableDialUrl',
    validator: {
      validate: (value: unknown) => typeof value !== 'string' || dialUrlProblem(value) === undefined,
      defaultMessage: (args) => dialUrlProblem(String(args?.value)) ?? 'DIAL_URL is not usable',
    },
  });

/**
 * What the HTTP dialer needs of DIAL_URL beyond its shape: with each `{placeholder}` filled in it is a URL
 * (so `http://pbx.local:{port}/x`, whose port no click fills, is refused here rather than when the dialer is
 * built), and it carries no `user:password@` (fetch refuses such a URL with an error quoting it whole, so
 * the password would reach logs, health and the portal's FAILED_REASON; DIAL_AUTH holds credentials).
 */
export function dialUrlProblem(template: string): string | undefined {
  if (!/^https?:\/\//i.test(template)) return undefined;
  let url: URL;
  try {
    url = new URL(template.replace(/\{\w+\}/g, 'x'));
  } catch {
    return 'DIAL_URL must be a URL once its {extension}, {number}, {crmCallId}, {userId}, {line} are filled in';
  }
  if (url.username || url.password) {
    return 'DIAL_URL must not carry user:password: put the credentials in DIAL_AUTH (basic:user:password)';
  }
  return undefined;
}

/** LINES (docs/API.md "Lines"): each rule checked by `checkLineRules`; the problems, naming the line and field, are the message. */
export const lineRules = (name: string) =>
  ValidateBy({
    name: 'isLineRules',
    validator: {
      validate: (value: unknown) => 'rules' in checkLineRules(value, name),
      defaultMessage: (args) => {
        const checked = checkLineRules(args?.value, name);
        return 'problems' in checked ? checked.problems.join('; ') : `${name} is not usable`;
      },
    },
  });
