// js-yaml is in node_modules through ESLint, without type declarations; this is the part the tests use.
declare module 'js-yaml' {
  export function load(input: string): unknown;
  export function loadAll(input: string): unknown[];
}
