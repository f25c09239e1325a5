import { Transform } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsPositive,
  IsString,
  Max,
  Min,
} from 'class-validator';
import type { ValidationOptions } from 'class-validator';

/**
 * One environment variable, declared once: its default, its checks (class-validator decorators, applied to
 * AppConfig by app-config.ts), what .env.example says of it, and whom it belongs to. `deployment`: the
 * process, the database, the deployment's own keys, the mode; `portal`: what one portal's runtime reads,
 * which in single mode the environment seeds.
 */
export interface Setting<T> {
  readonly default: T;
  /** Top to bottom, as they would be written above a class property. */
  readonly rules: readonly PropertyDecorator[];
  /** The .env.example comment above the variable; `\n` starts another comment line. */
  readonly about: string;
  /** Set: B24_APP_MODE=multi refuses the variable, for this reason (each portal sets its own). */
  readonly refusedInMulti?: string;
  /**
   * True: the value is or holds a credential (a token, a password in a URL). Deployments take it from a
   * secret store (k8s/base/secrets.env.example, deploy/bridge.env.example), never from plain configuration;
   * its `about` starts with "secret".
   */
  readonly secret?: boolean;
}

export type Scope = 'deployment' | 'portal';

/** A declared setting with the .env.example section it is listed under and its scope. */
export interface Declared<T> extends Setting<T> {
  readonly section: string;
  readonly scope: Scope;
}

type Declarations = Record<string, Setting<unknown>>;

/** Stamps a group of declarations with their .env.example section. */
export function section<D extends Declarations>(
  title: string,
  declarations: D,
): { [K in keyof D]: D[K] & { section: string } } {
  const entries = Object.entries(declarations).map(([name, setting]) => [
    name,
    { ...setting, section: title },
  ]);
  return Object.fromEntries(entries) as { [K in keyof D]: D[K] & { section: string } };
}

/** Stamps every declaration of a file with its scope. */
export function scoped<D extends Record<string, Setting<unknown> & { section: string }>>(
  scope: Scope,
  declarations: D,
): { readonly [K in keyof D]: D[K] & { scope: Scope } } {
  const entries = Object.entries(declarations).map(([name, setting]) => [name, { ...setting, scope }]);
  return Object.freeze(Object.fromEntries(entries)) as { readonly [K in keyof D]: D[K] & { scope: Scope } };
}

/** The value type a declaration gives its AppConfig property. */
export type ValueOf<S> = S extends Setting<infer T> ? T : never;

type OptionalKeys<D> = { [K in keyof D]: undefined extends ValueOf<D[K]> ? K : never }[keyof D];

/** AppConfig's properties from the declarations: a setting without a default is an optional property. */
export type ValuesOf<D> = { -readonly [K in Exclude<keyof D, OptionalKeys<D>>]: ValueOf<D[K]> } & {
  -readonly [K in OptionalKeys<D>]?: Exclude<ValueOf<D[K]>, undefined>;
};

const unset = (value: unknown) => value === undefined || value === '';
const toInt = ({ value }: { value: unknown }) =>
  unset(value) ? undefined : /^-?\d+$/.test(String(value)) ? Number(value) : value;
const toNumber = ({ value }: { value: unknown }) =>
  unset(value) ? undefined : Number.isFinite(Number(value)) ? Number(value) : value;
const toList = ({ value }: { value: unknown }) =>
  typeof value === 'string'
    ? value
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean)
    : value;
const toFlag = ({ value }: { value: unknown }) =>
  unset(value) ? undefined : ['1', 'true', 'yes'].includes(String(value).toLowerCase());
const emptyAsUnset = Transform(({ value }: { value: unknown }) => (value === '' ? undefined : value));
/** Rules first in a setting with a default that an empty value leaves at its default. */
export const EMPTY_IS_DEFAULT = [emptyAsUnset, IsOptional()];

interface Bounds {
  min: number;
  max?: number;
  /** Replaces class-validator's "must not be greater than" message. */
  maxMessage?: string;
}

const bounded = ({ min, max, maxMessage }: Bounds) => [
  Min(min),
  ...(max === undefined ? [] : [Max(max, maxMessage ? { message: maxMessage } : undefined)]),
];

/** An integer (`/^-?\d+$/`) within bounds. */
export function int(fallback: number, bounds: Bounds, about: string): Setting<number> {
  return { default: fallback, rules: [Transform(toInt), IsInt(), ...bounded(bounds)], about };
}

/** A positive decimal number, at most `max`. */
export function positive(fallback: number, about: string, max?: number): Setting<number> {
  const rules = [Transform(toNumber), IsNumber(), IsPositive()];
  return { default: fallback, rules: max === undefined ? rules : [...rules, Max(max)], about };
}

/** `1`, `true` or `yes` (any case) is true; anything else false. */
export function flag(about: string): Setting<boolean> {
  return { default: false, rules: [Transform(toFlag), IsBoolean()], about };
}

/** Comma-separated, trimmed, empty items dropped; `rules` check the list. */
export function list(about: string, ...rules: PropertyDecorator[]): Setting<string[]> {
  return { default: [], rules: [Transform(toList), ...rules], about };
}

/**
 * One of `values`. `fallback` undefined, or `emptyIsDefault`: an empty value is unset. Otherwise an empty
 * value is refused like any other outside `values`.
 */
export function oneOf<const V extends string, F extends V | undefined>(
  values: readonly V[],
  fallback: F,
  about: string,
  { emptyIsDefault, ...options }: ValidationOptions & { emptyIsDefault?: boolean } = {},
): Setting<V | F> {
  const rules = [IsIn(values, options)];
  const empty = fallback === undefined || emptyIsDefault ? EMPTY_IS_DEFAULT : [];
  return { default: fallback, rules: [...empty, ...rules], about };
}

/** Optional text, empty meaning unset, checked by `rules` when set (IsString when none are given). */
export function optional(about: string, ...rules: PropertyDecorator[]): Setting<string | undefined> {
  return {
    default: undefined,
    rules: [...EMPTY_IS_DEFAULT, ...(rules.length ? rules : [IsString()])],
    about,
  };
}

/** An optional integer, empty meaning unset. */
export function optionalInt(about: string, ...rules: PropertyDecorator[]): Setting<number | undefined> {
  return { default: undefined, rules: [Transform(toInt), IsOptional(), IsInt(), ...rules], about };
}

/** Text with a default, checked by `rules` (an empty value is checked too, not taken as unset). */
export function text(fallback: string, about: string, ...rules: PropertyDecorator[]): Setting<string> {
  return { default: fallback, rules, about };
}

/**
 * A JSON value (LINES): unset or empty is `fallback`; text that is not JSON is kept as it is, for `rules` to
 * refuse with their own message.
 */
export function json<T>(fallback: T, about: string, ...rules: PropertyDecorator[]): Setting<T> {
  const parse = ({ value }: { value: unknown }) => {
    if (unset(value)) return fallback;
    if (typeof value !== 'string') return value;
    try {
      return JSON.parse(value) as unknown;
    } catch {
      return value;
    }
  };
  return { default: fallback, rules: [Transform(parse), ...rules], about };
}

/** A declaration refused with B24_APP_MODE=multi: each portal sets its own, as `why` says. */
export function singleOnly<T>(why: string, setting: Setting<T>): Setting<T> {
  return { ...setting, refusedInMulti: why };
}

/** A declaration whose value is or holds a credential (see Setting.secret). */
export function secret<T>(setting: Setting<T>): Setting<T> {
  return { ...setting, secret: true };
}
