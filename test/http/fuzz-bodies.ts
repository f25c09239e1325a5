import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * Seeded mutations of valid PBX bodies for the intake fuzz test: the fixtures of every PBX route and the
 * JSON API's events, each given a call id of its own, then changed the ways PBXs and attackers change
 * bodies (fields dropped or repeated, wrong types, huge strings, deep nesting, unicode, truncation, wrong
 * content types).
 */

/** mulberry32: a small, fast PRNG whose whole state is one 32-bit seed, so a run repeats from its seed. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class Random {
  private readonly next: () => number;

  constructor(seed: number) {
    this.next = mulberry32(seed);
  }

  /** An integer in [0, below). */
  int(below: number): number {
    return Math.floor(this.next() * below);
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * A body before it is written out. `embedded` names a top-level field whose JSON the PBX sends as text
 * (mod_json_cdr's `cdr`, Yeastar's `msg`): kept parsed, so mutations reach inside it too.
 */
export interface BodyShape {
  kind: 'json' | 'form' | 'base64-form';
  value: Json;
  embedded?: string;
}

export interface Template {
  route: string;
  contentType: string;
  name: string;
  /** The fixture with `id` as its call id. */
  make(id: string): BodyShape;
}

const FIXTURES = resolve(__dirname, '../fixtures');
const fixture = (path: string) => readFileSync(resolve(FIXTURES, path), 'utf8').trim();
const withId = (text: string, fixtureId: string, id: string) => text.split(fixtureId).join(id);
export const JSON_TYPE = 'application/json';
export const FORM_TYPE = 'application/x-www-form-urlencoded';
export const BASE64_TYPE = 'application/x-www-form-base64-encoded';

const formOf = (text: string): Json => Object.fromEntries(new URLSearchParams(text));

function json(path: string, fixtureId: string) {
  const text = fixture(path);
  return (id: string): BodyShape => ({
    kind: 'json',
    value: JSON.parse(withId(text, fixtureId, id)) as Json,
  });
}

/** mod_json_cdr's encode=true (`cdr=<JSON>`) and encode=base64 (`cdr=<base64 of the JSON>`). */
function freeSwitchEncoded(path: string, fixtureId: string, kind: 'form' | 'base64-form') {
  const encoded = fixture(path).slice('cdr='.length);
  const cdr = kind === 'form' ? decodeURIComponent(encoded) : Buffer.from(encoded, 'base64').toString('utf8');
  return (id: string): BodyShape => {
    const parsed = JSON.parse(withId(cdr, fixtureId, id)) as Json;
    return kind === 'form' ? { kind, value: { cdr: parsed }, embedded: 'cdr' } : { kind, value: parsed };
  };
}

function yeastar(path: string, fixtureId: string) {
  const text = fixture(path);
  return (id: string): BodyShape => {
    const envelope = JSON.parse(text) as { [key: string]: Json };
    const msg = JSON.parse(withId(envelope.msg as string, fixtureId, id)) as Json;
    return { kind: 'json', value: { ...envelope, msg }, embedded: 'msg' };
  };
}

function asterisk(path: string, fixtureId: string) {
  const text = fixture(path);
  return (id: string): BodyShape => ({ kind: 'form', value: formOf(withId(text, fixtureId, id)) });
}

/** 3CX's call id is derived from number, agent and start: the agent makes it unique. */
function threeCx(path: string, kind: 'json' | 'form') {
  const text = fixture(path);
  const call = (kind === 'json' ? JSON.parse(text) : formOf(text)) as { [key: string]: Json };
  return (id: string): BodyShape => ({ kind, value: { ...call, Agent: id } });
}

const started = (id: string): Json => ({
  event: 'call.started',
  callId: id,
  direction: 'inbound',
  phoneNumber: '+49 151 1234-5678',
  extension: '101',
  at: '2026-11-22T10:00:00+01:00',
});
const answered = (id: string): Json => ({
  event: 'call.answered',
  callId: id,
  at: '2026-11-22T10:00:05+01:00',
});
const ended = (id: string): Json => ({
  event: 'call.ended',
  callId: id,
  at: '2026-11-22T10:02:07+01:00',
  durationSec: 121,
  status: 'answered',
  recordingUrl: 'https://pbx.example.com/rec/1.mp3',
});

const EVENTS = '/v1/calls/events';
const FREESWITCH = '/v1/pbx/freeswitch';
const ASTERISK = '/v1/pbx/asterisk';
const YEASTAR = '/v1/pbx/yeastar';
const THREECX = '/v1/pbx/3cx/calls';

export const TEMPLATES: Template[] = [
  {
    route: EVENTS,
    contentType: JSON_TYPE,
    name: 'started',
    make: (id) => ({ kind: 'json', value: started(id) }),
  },
  {
    route: EVENTS,
    contentType: JSON_TYPE,
    name: 'ended',
    make: (id) => ({ kind: 'json', value: ended(id) }),
  },
  {
    route: EVENTS,
    contentType: JSON_TYPE,
    name: 'started, answered, ended',
    make: (id) => ({ kind: 'json', value: [started(id), answered(id), ended(id)] }),
  },
  {
    route: FREESWITCH,
    contentType: JSON_TYPE,
    name: 'a-leg',
    make: json('freeswitch/inbound-answered.a-leg.json', '0f7c4b9e-2d6a-4c1b-9a53-6f1e8d2c4a10'),
  },
  {
    route: FREESWITCH,
    contentType: JSON_TYPE,
    name: 'b-leg',
    make: json('freeswitch/inbound-answered.b-leg.json', '7d2e6f1a-8b3c-4e5d-9f60-1a2b3c4d5e6f'),
  },
  {
    route: FREESWITCH,
    contentType: JSON_TYPE,
    name: 'busy',
    make: json('freeswitch/outbound-busy.json', '4a1b2c3d-5e6f-4a7b-8c9d-0e1f2a3b4c5d'),
  },
  {
    route: FREESWITCH,
    contentType: FORM_TYPE,
    name: 'encode=true',
    make: freeSwitchEncoded(
      'freeswitch/inbound-missed.encode-true.txt',
      '9c3e5a7b-1d2f-4b6c-8e0a-2c4e6a8b0d1f',
      'form',
    ),
  },
  {
    route: FREESWITCH,
    contentType: BASE64_TYPE,
    name: 'encode=base64',
    make: freeSwitchEncoded(
      'freeswitch/outbound-answered.encode-base64.txt',
      '5b2c3d4e-6f7a-4b8c-9d0e-1f2a3b4c5d6e',
      'base64-form',
    ),
  },
  {
    route: ASTERISK,
    contentType: FORM_TYPE,
    name: 'inbound',
    make: asterisk('asterisk/inbound-answered.txt', '1795338000.101'),
  },
  {
    route: ASTERISK,
    contentType: FORM_TYPE,
    name: 'no answer',
    make: asterisk('asterisk/outbound-no-answer.txt', '1795341600.214'),
  },
  {
    route: YEASTAR,
    contentType: JSON_TYPE,
    name: 'cdr',
    make: yeastar('yeastar/cdr-inbound-answered.json', '1795338000.612'),
  },
  {
    route: YEASTAR,
    contentType: JSON_TYPE,
    name: 'ringing',
    make: yeastar('yeastar/call-state-inbound-ringing.json', '1795338000.612'),
  },
  {
    route: YEASTAR,
    contentType: JSON_TYPE,
    name: 'no answer',
    make: yeastar('yeastar/cdr-outbound-no-answer.json', '1795341600.640'),
  },
  {
    route: THREECX,
    contentType: JSON_TYPE,
    name: 'inbound',
    make: threeCx('3cx/report-call-inbound.json', 'json'),
  },
  {
    route: THREECX,
    contentType: JSON_TYPE,
    name: 'missed',
    make: threeCx('3cx/report-call-missed.json', 'json'),
  },
  {
    route: THREECX,
    contentType: FORM_TYPE,
    name: 'form',
    make: threeCx('3cx/report-call-notanswered.form.txt', 'form'),
  },
];

// --- mutations of the parsed body ---

const WEIRD_TEXT = [
  '\u202e\u0645\u0631\u062d\u0628\u0627', // right-to-left override, Arabic
  'a\u200db\u200c', // zero-width joiners
  '🙂👨‍👩‍👧‍👦',
  '\ud800', // a lone surrogate
  '\udfff\ud800',
  'nul\u0000byte',
  '\uffff\ufffe',
  'e\u0301\u0301\u0301', // combining marks
  'İıß',
  'line\u2028separator',
  '\u001b[31m',
  '%00%zz%E0%A4%A',
  "'; DROP TABLE calls; --",
  '../../etc/passwd',
  '${jndi:ldap://x}',
];
const WEIRD_DATES = [
  '2026-02-30T10:00:00+01:00',
  '2026-11-22T25:61:00+01:00',
  '0000-00-00 00:00:00',
  '9999-12-31T23:59:59+14:00',
  '2026-11-22',
  '1795338000',
  '-1',
];
const WEIRD_NUMBERS = [0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 1, Number.MIN_VALUE, 1e21];
const ODD_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '', ' ', 'callId '];

interface Slot {
  parent: Json[] | { [key: string]: Json };
  key: string | number;
}

/** Every place a value sits in the body, without recursion (bodies here are small and shallow). */
function slotsOf(root: Json): Slot[] {
  const slots: Slot[] = [];
  const queue: Json[] = [root];
  while (queue.length) {
    const node = queue.pop()!;
    if (Array.isArray(node)) {
      node.forEach((child, index) => {
        slots.push({ parent: node, key: index });
        queue.push(child);
      });
    } else if (node !== null && typeof node === 'object') {
      for (const key of Object.keys(node)) {
        slots.push({ parent: node, key });
        queue.push(node[key]);
      }
    }
  }
  return slots;
}

const valueAt = (slot: Slot): Json => (slot.parent as Record<string | number, Json>)[slot.key];
function setAt(slot: Slot, value: Json): void {
  Object.defineProperty(slot.parent, slot.key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

/** `value` inside `depth` arrays or objects, built without recursion. */
function nestedIn(value: Json, depth: number, asArrays: boolean): Json {
  let nested = value;
  for (let level = 0; level < depth; level++) nested = asArrays ? [nested] : { a: nested };
  return nested;
}

function weirdText(random: Random): string {
  return random.pick(WEIRD_TEXT);
}

function randomValue(random: Random, current: Json): Json {
  switch (random.int(12)) {
    case 0:
      return null;
    case 1:
      return random.chance(0.5);
    case 2:
      return random.pick(WEIRD_NUMBERS);
    case 3:
      return '';
    case 4:
      return weirdText(random);
    case 5:
      return random.pick(WEIRD_DATES);
    case 6:
      return 'x'.repeat(random.pick([256, 70_000, 400_000]));
    case 7:
      return [];
    case 8:
      return {};
    case 9:
      return [current, current];
    case 10:
      return { value: current };
    default:
      if (typeof current === 'number') return String(current);
      return typeof current === 'string' ? weirdText(random) + current : weirdText(random);
  }
}

/** One change to the parsed body; returns its name. */
function mutateValue(random: Random, shape: BodyShape): string {
  const slots = slotsOf(shape.value);
  if (!slots.length || random.chance(0.04)) {
    shape.value = random.pick<Json>([null, 0, 'text', [], {}, [shape.value, shape.value], [[]]]);
    return 'replaced the whole body';
  }
  const slot = random.pick(slots);
  const current = valueAt(slot);
  const where = String(slot.key);
  switch (random.int(9)) {
    case 0:
      if (Array.isArray(slot.parent)) slot.parent.splice(slot.key as number, 1);
      else delete slot.parent[slot.key as string];
      return `dropped ${where}`;
    case 1: {
      const value = randomValue(random, current);
      setAt(slot, value);
      return `${where} := ${toJson(value).slice(0, 60)}`;
    }
    case 2:
      if (typeof current === 'number') setAt(slot, String(current));
      else if (typeof current === 'string' && current.trim() !== '' && Number.isFinite(Number(current))) {
        setAt(slot, Number(current));
      } else setAt(slot, [current]);
      return `${where}: number and string swapped`;
    case 3: {
      const depth = random.pick([3, 20, 200, 5000]);
      setAt(slot, nestedIn(current, depth, random.chance(0.5)));
      return `${where} nested ${depth} deep`;
    }
    case 4: {
      const key = random.chance(0.5) ? random.pick(ODD_KEYS) : weirdText(random);
      const parent = Array.isArray(slot.parent) ? undefined : slot.parent;
      if (parent) {
        Object.defineProperty(parent, key, {
          value: randomValue(random, current),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return `added ${JSON.stringify(key)}`;
    }
    case 5:
      setAt(slot, typeof current === 'string' ? current + weirdText(random) : weirdText(random));
      return `${where}: unicode`;
    case 6:
      setAt(
        slot,
        typeof current === 'string'
          ? current.repeat(1 + random.int(Math.ceil(300_000 / (current.length + 1))))
          : current,
      );
      return `${where}: long`;
    case 7:
      if (Array.isArray(slot.parent)) slot.parent.push(current);
      else setAt(slot, [current, randomValue(random, current)]);
      return `${where} repeated`;
    default:
      setAt(slot, random.pick(WEIRD_DATES));
      return `${where}: odd date`;
  }
}

// --- writing the body out, and mutations of its bytes ---

type Work = { value: Json } | { text: string };

/** JSON.stringify without recursion: a value nested thousands deep overflows the test's own stack otherwise. */
export function toJson(root: Json): string {
  const parts: string[] = [];
  const work: Work[] = [{ value: root }];
  while (work.length) {
    const item = work.pop()!;
    if ('text' in item) {
      parts.push(item.text);
      continue;
    }
    const value = item.value;
    if (value === null || typeof value !== 'object') {
      parts.push(JSON.stringify(value) ?? 'null');
      continue;
    }
    const next: Work[] = [];
    if (Array.isArray(value)) {
      value.forEach((child, index) => next.push({ text: index ? ',' : '' }, { value: child }));
      next.unshift({ text: '[' });
      next.push({ text: ']' });
    } else {
      Object.keys(value).forEach((key, index) =>
        next.push({ text: `${index ? ',' : ''}${JSON.stringify(key)}:` }, { value: value[key] }),
      );
      next.unshift({ text: '{' });
      next.push({ text: '}' });
    }
    for (let index = next.length - 1; index >= 0; index--) work.push(next[index]);
  }
  return parts.join('');
}

/** Percent-encoding that takes lone surrogates too (as U+FFFD, the way UTF-8 writes them). */
const formEncode = (text: string) => encodeURIComponent(Buffer.from(text, 'utf8').toString('utf8'));

function formText(value: Json, embedded?: string): string {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return formEncode(toJson(value));
  const pairs: string[] = [];
  const add = (key: string, item: Json) =>
    pairs.push(
      `${formEncode(key)}=${formEncode(typeof item === 'object' && item !== null ? toJson(item) : String(item ?? ''))}`,
    );
  for (const [key, item] of Object.entries(value)) {
    if (key === embedded) add(key, item);
    else if (Array.isArray(item)) item.forEach((each) => add(key, each));
    else if (item !== null && typeof item === 'object') {
      for (const [inner, innerValue] of Object.entries(item)) add(`${key}[${inner}]`, innerValue);
    } else add(key, item);
  }
  return pairs.join('&');
}

export function render(shape: BodyShape, random: Random): Buffer {
  if (shape.kind === 'base64-form') {
    return Buffer.from(`cdr=${Buffer.from(toJson(shape.value)).toString('base64')}`);
  }
  if (shape.kind === 'form') return Buffer.from(formText(shape.value, shape.embedded));
  let value = shape.value;
  const field = shape.embedded;
  // The PBX sends the embedded JSON as text; now and then it comes as an object, which adapters also read.
  if (field && value && typeof value === 'object' && !Array.isArray(value) && random.chance(0.9)) {
    const inner = value[field];
    if (inner !== null && typeof inner === 'object') value = { ...value, [field]: toJson(inner) };
  }
  return Buffer.from(toJson(value));
}

const JUNK = [
  '%',
  '%zz',
  '%E0%A4%A',
  '\\',
  '"',
  '}',
  ']',
  ',',
  '&',
  '=',
  '+',
  '%00',
  '\u0000',
  '{"a":',
  '\xff',
];

/** One change to the bytes; returns its name. */
export function mutateBytes(random: Random, body: Buffer): [Buffer, string] {
  const at = random.int(body.length + 1);
  switch (random.int(6)) {
    case 0:
      return [body.subarray(0, at), `truncated at ${at}`];
    case 1: {
      const copy = Buffer.from(body);
      if (copy.length) {
        copy[Math.min(at, copy.length - 1)] = random.pick([0x00, 0xff, 0xc3, 0x22, 0x7b, 0x5b, 0x25, 0x26]);
      }
      return [copy, `byte ${at} changed`];
    }
    case 2: {
      const junk = random.pick(JUNK);
      return [
        Buffer.concat([body.subarray(0, at), Buffer.from(junk), body.subarray(at)]),
        `inserted ${junk} at ${at}`,
      ];
    }
    case 3: {
      const keys = [...body.toString('latin1').matchAll(/"([^"\\]{1,40})":/g)];
      if (!keys.length) return [Buffer.concat([body, Buffer.from('&callId=dup')]), 'repeated a form field'];
      const key = random.pick(keys);
      const copy = `"${key[1]}":${random.pick(['1', '"dup"', 'null', '[]', '{}'])},`;
      const index = key.index ?? 0;
      return [
        Buffer.concat([body.subarray(0, index), Buffer.from(copy), body.subarray(index)]),
        `repeated key ${key[1]}`,
      ];
    }
    case 4:
      return [Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body]), 'byte order mark'];
    default:
      return [Buffer.alloc(0), 'empty body'];
  }
}

const OTHER_TYPES = [
  undefined,
  'text/plain',
  'application/xml',
  'multipart/form-data; boundary=x',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'application/vnd.api+json',
  'application/json;charset=UTF-8',
  JSON_TYPE,
  FORM_TYPE,
  BASE64_TYPE,
  '*/*',
  'garbage',
];

export interface FuzzCase {
  template: string;
  route: string;
  contentType?: string;
  body: Buffer;
  mutations: string[];
}

/** The `index`th body of a run: a fixture with a fresh call id, changed zero to three times. */
export function fuzzCase(random: Random, index: number, runId: string): FuzzCase {
  const template = random.pick(TEMPLATES);
  const shape = template.make(`fz${runId}-${index}`);
  const mutations: string[] = [];
  const changes = random.chance(0.12) ? 0 : 1 + random.int(3);
  for (let n = 0; n < changes; n++) mutations.push(mutateValue(random, shape));
  let body = render(shape, random);
  if (random.chance(0.2)) {
    const [changed, what] = mutateBytes(random, body);
    body = changed;
    mutations.push(what);
  }
  let contentType: string | undefined = template.contentType;
  if (random.chance(0.1)) {
    contentType = random.pick(OTHER_TYPES);
    mutations.push(`Content-Type ${contentType}`);
  }
  return {
    template: `${template.route} ${template.name}`,
    route: template.route,
    contentType,
    body,
    mutations,
  };
}
