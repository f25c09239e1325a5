/**
 * The floor (bench/floor.bench.ts): the least a Node service can do for a call with the bridge's guarantees
 * in their cheapest form, to set the bridge's CPU per command against. Plain `node:http` and `pg`, no
 * framework, no validation, no lookups, no budget, no lease:
 *  - a PBX request (a JSON array of the call's events) is stored in one INSERT (durable: synchronous
 *    commit) and answered 202;
 *  - each event then becomes one command sent to its portal: marked sent (one UPDATE) before the request,
 *    sent as its own HTTP request (sparse traffic: one command a request, as the bridge sends them when a
 *    portal has one call at a time), and marked done (one UPDATE) after the answer.
 * That is 5 statements, 1 PBX request and 2 portal requests a call. Measurement only: never part of the
 * bridge. FLOOR_DATABASE_URL, FLOOR_TABLE, FLOOR_PORTAL_URL and PORT come from the bench.
 */
'use strict';
const http = require('node:http');
const { join } = require('node:path');
const { Pool } = require(join(__dirname, '..', 'node_modules', 'pg'));

const table = process.env.FLOOR_TABLE;
if (!/^floor_[a-f0-9]+$/.test(table ?? '')) throw new Error('FLOOR_TABLE is not a floor table');
const pool = new Pool({ connectionString: process.env.FLOOR_DATABASE_URL, max: 10 });
const portal = new URL(process.env.FLOOR_PORTAL_URL);
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

function send(command) {
  const payload = JSON.stringify(command);
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: portal.hostname,
        port: portal.port,
        path: `/rest/${command.method}`,
        method: 'POST',
        agent,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) },
      },
      (response) => {
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('end', () => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          } catch (error) {
            reject(error);
          }
        });
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

async function deliver(id, event) {
  const method = event.event === 'call.started' ? 'telephony.externalcall.register' : 'telephony.externalcall.finish';
  await pool.query(`UPDATE ${table} SET state = 'sending' WHERE id = $1 AND state = 'new'`, [id]);
  const answer = await send({ method, callId: event.callId, phone: event.phoneNumber, at: event.at });
  await pool.query(`UPDATE ${table} SET state = 'done', answer = $2 WHERE id = $1`, [id, JSON.stringify(answer)]);
}

/** Each call's commands in order (a finish after its register), calls independently. */
function deliverInOrder(ids, events) {
  let chain = Promise.resolve();
  for (const [index, id] of ids.entries()) chain = chain.then(() => deliver(id, events[index]));
  chain.catch((error) => process.stderr.write(`floor: ${error.message}\n`));
}

const server = http.createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    let events;
    try {
      events = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      response.writeHead(400).end();
      return;
    }
    const values = events.map((_, index) => `($${index + 1})`).join(', ');
    pool
      .query(`INSERT INTO ${table} (event) VALUES ${values} RETURNING id`, events.map((event) => JSON.stringify(event)))
      .then(({ rows }) => {
        response.writeHead(202, { 'Content-Type': 'application/json' }).end('{"accepted":true}');
        deliverInOrder(
          rows.map((row) => row.id),
          events,
        );
      })
      .catch((error) => {
        response.writeHead(503).end();
        process.stderr.write(`floor: ${error.message}\n`);
      });
  });
});
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
