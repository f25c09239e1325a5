import http from 'node:http';
import { Harness, PBX_TOKEN, startHarness } from '../support/bridge-harness';
import { FuzzCase, fuzzCase, Random } from './fuzz-bodies';
import { openStoreCounter, StoreCounter, StoreCounts } from './store-counts';

/** FUZZ_SEED repeats a run; the default keeps the suite deterministic. */
const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const BODIES = 3000;
/** The bodies go in parts, one test each, so a loaded machine never holds one test past its deadline. */
const PARTS = 3;
const ACCEPTED = new Set([200, 202, 400, 401, 413, 415]);

interface Answer {
  status: number;
  text: string;
}

/**
 * Thousands of mutated PBX bodies, seeded, across every PBX route: none may answer a 5xx, every refusal
 * names what is wrong, and no refused body leaves anything in the store.
 */
describe(`PBX intake under fuzzed bodies (seed ${SEED})`, () => {
  let h: Harness;
  let counter: StoreCounter;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

  beforeAll(async () => {
    h = await startHarness({ PBX_RATE_LIMIT_RPS: '1000000' });
    counter = await openStoreCounter(h.config.DATABASE_URL!);
  });
  afterAll(async () => {
    agent.destroy();
    await counter?.close();
    await h?.close();
  });

  function send(fuzz: FuzzCase, authorised: 'header' | 'query' | 'none'): Promise<Answer> {
    const { hostname, port } = new URL(h.url);
    const path = authorised === 'query' ? `${fuzz.route}?token=${PBX_TOKEN}` : fuzz.route;
    const headers: http.OutgoingHttpHeaders = { 'Content-Length': fuzz.body.length };
    if (fuzz.contentType !== undefined) headers['Content-Type'] = fuzz.contentType;
    if (authorised === 'header') headers.Authorization = `Bearer ${PBX_TOKEN}`;
    return new Promise((resolve, reject) => {
      const request = http.request({ hostname, port, path, method: 'POST', headers, agent }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
        response.on('error', reject);
      });
      request.on('error', reject);
      request.end(fuzz.body);
    });
  }

  // One sequence of BODIES bodies (one seeded Random), cut into PARTS consecutive tests.
  const random = new Random(SEED);
  const runId = `${SEED.toString(36)}${Date.now().toString(36)}`;
  const part = BODIES / PARTS;

  it.each(Array.from({ length: PARTS }, (_, n) => n))(
    `answers mutated bodies without a 5xx, storing nothing from a refused one (part %i of ${PARTS}, ${part} bodies)`,
    async (n) => {
      if (n === 0) process.stdout.write(`intake fuzz: seed ${SEED} (repeat with FUZZ_SEED=${SEED})\n`);
      const problems: string[] = [];
      const statuses = new Map<number, number>();
      let counts: StoreCounts = await counter.read();
      const stored = counts.events;
      for (let index = n * part; index < (n + 1) * part && problems.length < 10; index++) {
        const fuzz = fuzzCase(random, index, runId);
        const authorised = random.chance(0.03)
          ? 'none'
          : fuzz.route.startsWith('/v1/pbx/') && random.chance(0.1)
            ? 'query'
            : 'header';
        const answer = await send(fuzz, authorised);
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        const after = await counter.read();
        const describe = () =>
          `#${index} ${fuzz.template} [${fuzz.mutations.join('; ')}] ${fuzz.contentType ?? '(no type)'} ` +
          `${authorised}: ${answer.status} ${answer.text.slice(0, 300)} | body ${fuzz.body.toString('utf8', 0, 200)}`;
        if (!ACCEPTED.has(answer.status)) problems.push(`unexpected status: ${describe()}`);
        if (answer.status >= 400) {
          if (after.calls !== counts.calls || after.events !== counts.events) {
            problems.push(
              `stored from a refused body (${JSON.stringify(counts)} → ${JSON.stringify(after)}): ${describe()}`,
            );
          }
          const message = (JSON.parse(answer.text) as { message?: unknown }).message;
          if (typeof message !== 'string' || message === '') {
            problems.push(`a refusal without a message: ${describe()}`);
          }
          if (answer.text.includes(PBX_TOKEN)) problems.push(`the answer shows the PBX token: ${describe()}`);
        }
        counts = after;
      }
      process.stdout.write(`intake fuzz: answers ${JSON.stringify(Object.fromEntries(statuses))}\n`);
      expect(problems).toEqual([]);
      // The run exercised both ways: fixtures were accepted and stored, mutations refused.
      expect(statuses.get(202)).toBeGreaterThan(part / 20);
      expect(statuses.get(400)).toBeGreaterThan(part / 4);
      expect(counts.events).toBeGreaterThan(stored);
    },
  );
});
