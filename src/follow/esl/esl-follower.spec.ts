import { createServer, Server, Socket } from 'node:net';
import { EslDouble } from '../../../test/support/esl-double';
import { TlsTerminator } from '../../../test/support/tls-terminator';
import { Collected, shortNumbers, until } from '../../../test/support/follow-spec';
import { CallEvent } from '../../calls/call';
import { EgressPolicy } from '../../common/egress';
import { EslFollower, EslFollowerOptions } from './esl-follower';
import { eslTargetOf } from './esl-session';
import { EslTracker } from './esl-tracker';
import { Legs } from './legs';

function follower(url: string, options: EslFollowerOptions = {}) {
  const sink = new Collected<CallEvent>();
  const tracker = new EslTracker(new Legs([], shortNumbers));
  const esl = new EslFollower(eslTargetOf(url, EgressPolicy.unrestricted()), tracker, sink, {
    reconnectMinMs: 50,
    ...options,
  });
  return { esl, sink };
}

/** An event socket that greets, accepts any password, answers `event json`, then behaves as `then` says. */
async function peer(
  then: (socket: Socket, command: string) => void,
  logins: string[] = [],
): Promise<{ server: Server; url: string; sessions: () => number }> {
  let sessions = 0;
  const server = createServer((socket) => {
    sessions++;
    socket.on('error', () => undefined);
    socket.write('Content-Type: auth/request\n\n');
    let buffer = '';
    socket.on('data', (chunk) => {
      buffer += chunk.toString();
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const command = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (/^(auth|userauth) /.test(command)) logins.push(command);
        if (/^(auth|userauth|event) /.test(command)) {
          socket.write('Content-Type: command/reply\nReply-Text: +OK\n\n');
        } else then(socket, command);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return { server, url: `tcp://:ClueCon@127.0.0.1:${port}`, sessions: () => sessions };
}

const api = (socket: Socket, body: string) =>
  socket.write(`Content-Type: api/response\nContent-Length: ${Buffer.byteLength(body)}\n\n${body}`);

describe('EslFollower over a real TCP connection', () => {
  const running: EslFollower[] = [];
  const servers: Server[] = [];
  afterEach(async () => {
    running.splice(0).forEach((esl) => esl.stop());
    for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
  });

  it('logs in, subscribes, resyncs, then follows calls into the sink', async () => {
    const pbx = await EslDouble.start();
    const { esl, sink } = follower(pbx.url());
    running.push(esl);
    esl.start();
    await until(() => esl.status().connected);
    expect(pbx.commands.slice(0, 5)).toEqual([
      'auth Cl0eCon-s3cr3t',
      expect.stringMatching(/^event json CHANNEL_CREATE .* CUSTOM callcenter::info$/),
      'api status',
      'api show channels as json',
      'api show calls as json',
    ]);
    const call = pbx.play({
      kind: 'inbound',
      from: '+4915112345678',
      to: ['101', '102'],
      answeredBy: '101',
      stepMs: 1,
    });
    await call.done;
    await until(() => sink.events.length === 3);
    expect(sink.events[0]).toMatchObject({ extensions: ['101', '102'] });
    expect(sink.events.map((e) => [e.event, e.callId])).toEqual([
      ['call.started', call.callId],
      ['call.answered', call.callId],
      ['call.ended', call.callId],
    ]);
    expect(esl.status()).toMatchObject({
      source: 'esl',
      callsFollowed: 1,
      callsLive: 0,
      callEvents: 3,
      possiblyLost: 0,
    });
    expect(esl.status().eventsPerSec).toBeGreaterThan(0);
    await esl.stop();
    await pbx.close();
  });

  it('a refused login is reported with the address, never the password, and retried', async () => {
    const pbx = await EslDouble.start();
    const { esl } = follower(pbx.url('wrong-pass-123'));
    running.push(esl);
    esl.start();
    await until(() => esl.status().reconnects >= 2);
    expect(esl.status().lastError).toMatch(
      /^login refused for the password at tcp:\/\/127\.0\.0\.1:\d+: -ERR invalid$/,
    );
    expect(JSON.stringify(esl.status())).not.toMatch(/wrong-pass|s3cr3t/);
    await esl.stop();
    await pbx.close();
  });

  it('a directory user in ESL_URL logs in with userauth', async () => {
    const logins: string[] = [];
    const { server, url } = await peer((socket, command) => {
      if (command === 'api status') api(socket, '0 session(s) since startup\n');
      else api(socket, '{"row_count":0}');
    }, logins);
    servers.push(server);
    const { esl } = follower(url.replace('tcp://:', 'tcp://crm%40default:'));
    running.push(esl);
    esl.start();
    await until(() => esl.status().connected);
    expect(logins[0]).toBe('userauth crm@default:ClueCon');
    expect(esl.status().target).toMatch(/^tcp:\/\/127\.0\.0\.1:\d+$/);
  });

  it('a peer that stops answering the keep-alive is dropped and reconnected', async () => {
    // Answers the resync, then goes silent (a half-open connection).
    const silent = new Set<Socket>();
    const { server, url, sessions } = await peer((socket, command) => {
      if (silent.has(socket)) return;
      if (command === 'api show calls as json') silent.add(socket);
      if (command === 'api status') api(socket, '0 session(s) since startup\n');
      else api(socket, '{"row_count":0}');
    });
    servers.push(server);
    const { esl } = follower(url, { pingMs: 100, timeoutMs: 300 });
    running.push(esl);
    esl.start();
    await until(() => esl.status().reconnects >= 1 && sessions() >= 2);
    expect(esl.status().lastError).toMatch(
      /^api status unanswered by tcp:\/\/127\.0\.0\.1:\d+ within 300 ms$/,
    );
  });

  it('an ACL refusal (text/rude-rejection) and a body past the bound end the session with a reason', async () => {
    const rude: Server = createServer((socket) => {
      socket.on('error', () => undefined);
      const body = 'Access Denied, go away.\n';
      socket.end(`Content-Type: text/rude-rejection\nContent-Length: ${body.length}\n\n${body}`);
    });
    await new Promise<void>((resolve) => rude.listen(0, '127.0.0.1', resolve));
    servers.push(rude);
    const { esl } = follower(`tcp://:x@127.0.0.1:${(rude.address() as { port: number }).port}`);
    running.push(esl);
    esl.start();
    await until(() => esl.status().reconnects >= 1);
    expect(esl.status().lastError).toMatch(/refused the connection \(the event socket's ACL\)/);

    const { server, url } = await peer((socket) => socket.write('Content-Length: 99999999999\n\n'));
    servers.push(server);
    const big = follower(url);
    running.push(big.esl);
    big.esl.start();
    await until(() => big.esl.status().reconnects >= 1);
    expect(big.esl.status().lastError).toMatch(/body of \d+ bytes announced/);
  });

  describe('tls:// (an event socket behind a TLS terminator such as stunnel)', () => {
    let pbx: EslDouble;
    let terminator: TlsTerminator;
    beforeEach(async () => {
      pbx = await EslDouble.start('Ab/cd#e?f@g%zz');
      // A self-signed certificate, and a TLS listener in front of the double (stunnel's accept/connect).
      terminator = await TlsTerminator.start(pbx.port);
    });
    afterEach(async () => {
      running.splice(0).forEach((esl) => esl.stop());
      await terminator.close();
      await pbx.close();
    });
    // The password as an operator pastes it, not percent-encoded: `/`, `#`, `?`, `@` and a stray `%`.
    const tlsUrl = () => `tls://:Ab/cd#e?f@g%zz@127.0.0.1:${terminator.port}`;

    it('checks the certificate by default: a self-signed one is refused, nothing sent', async () => {
      const { esl } = follower(tlsUrl());
      running.push(esl);
      esl.start();
      await until(() => esl.status().reconnects >= 1);
      expect(esl.status().connected).toBe(false);
      expect(esl.status().lastError).toMatch(/SELF_SIGNED|self.signed/i);
      expect(esl.status().target).toMatch(/^tls:\/\/127\.0\.0\.1:\d+$/);
      expect(pbx.commands).toEqual([]);
    });

    it('logs in with the password exactly as written and follows calls over TLS', async () => {
      const { esl, sink } = follower(tlsUrl(), { rejectUnauthorized: false });
      running.push(esl);
      esl.start();
      await until(() => esl.status().connected);
      expect(pbx.commands[0]).toBe('auth Ab/cd#e?f@g%zz');
      const call = pbx.play({
        kind: 'inbound',
        from: '+4930123456',
        to: '101',
        answeredBy: '101',
        stepMs: 1,
      });
      await call.done;
      await until(() => sink.events.length === 3);
      expect(sink.events.map((e) => e.event)).toEqual(['call.started', 'call.answered', 'call.ended']);
      expect(JSON.stringify(esl.status())).not.toContain('Ab/cd#e');
    });
  });
});
