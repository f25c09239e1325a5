import { createServer, Server, Socket } from 'node:net';
import { AmiDouble } from '../../../test/support/ami-double';
import { TlsTerminator } from '../../../test/support/tls-terminator';
import { Collected, shortNumbers, until } from '../../../test/support/follow-spec';
import { CallEvent } from '../../calls/call';
import { EgressPolicy } from '../../common/egress';
import { AmiFollower, AmiFollowerOptions } from './ami-follower';
import { amiTargetOf } from './ami-session';
import { CallTracker } from './call-tracker';
import { Endpoints } from './endpoints';

function follower(url: string, options: AmiFollowerOptions = {}) {
  const sink = new Collected<CallEvent>();
  const tracker = new CallTracker(new Endpoints([], shortNumbers));
  const ami = new AmiFollower(amiTargetOf(url, EgressPolicy.unrestricted()), tracker, sink, {
    reconnectMinMs: 50,
    ...options,
  });
  return { ami, sink };
}

describe('AmiFollower over a real TCP connection', () => {
  let pbx: AmiDouble;
  const running: AmiFollower[] = [];
  beforeEach(async () => {
    pbx = await AmiDouble.start();
  });
  afterEach(async () => {
    running.splice(0).forEach((ami) => ami.stop());
    await pbx.close();
  });

  it('logs in read-only (Events: on), resyncs with CoreShowChannels, then follows calls into the sink', async () => {
    const { ami, sink } = follower(pbx.url());
    running.push(ami);
    ami.start();
    await until(() => ami.status().connected);
    // The PBX's clock (Ping's Timestamp) is read before the resync dates anything on it.
    expect(pbx.actions.map((a) => a.Action)).toEqual(['Login', 'Ping', 'CoreShowChannels']);
    expect(pbx.actions[0]).toMatchObject({ Username: 'crm-ro', Events: 'on' });
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
      ['call.started', call.linkedid],
      ['call.answered', call.linkedid],
      ['call.ended', call.linkedid],
    ]);
    expect(ami.status()).toMatchObject({ callsFollowed: 1, callsLive: 0, callEvents: 3, possiblyLost: 0 });
    expect(ami.status().eventsPerSec).toBeGreaterThan(0);
  });

  it('a refused login is reported with the user and address, never the secret, and retried', async () => {
    const { ami } = follower(pbx.url('wrong-secret-123'));
    running.push(ami);
    ami.start();
    await until(() => ami.status().reconnects >= 2);
    const status = ami.status();
    expect(status.connected).toBe(false);
    expect(status.lastError).toMatch(
      /^login refused for user crm-ro at tcp:\/\/127\.0\.0\.1:\d+: Authentication failed$/,
    );
    expect(JSON.stringify(status)).not.toMatch(/wrong-secret|s3cr3t/);
    expect(status.target).toBe(`tcp://127.0.0.1:${pbx.port}`);
  });

  it('a peer that stops answering Ping is dropped and reconnected', async () => {
    // A Manager that logs in and lists no channels, then goes silent (a half-open connection).
    let sessions = 0;
    const silent: Server = createServer((socket: Socket) => {
      sessions++;
      socket.write('Asterisk Call Manager/9.0.0\r\n');
      socket.on('error', () => undefined);
      socket.on('data', (chunk) => {
        const text = chunk.toString();
        const id = /ActionID: (\S+)/.exec(text)?.[1];
        if (/Action: Login/.test(text)) socket.write(`Response: Success\r\nActionID: ${id}\r\n\r\n`);
        if (/Action: CoreShowChannels/.test(text)) {
          socket.write(`Response: Success\r\nEventList: start\r\nActionID: ${id}\r\n\r\n`);
          socket.write(
            `Event: CoreShowChannelsComplete\r\nEventList: Complete\r\nListItems: 0\r\nActionID: ${id}\r\n\r\n`,
          );
        }
      });
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    const { ami } = follower(`tcp://u:p@127.0.0.1:${port}`, { pingMs: 100, timeoutMs: 300 });
    running.push(ami);
    ami.start();
    await until(() => ami.status().reconnects >= 1 && sessions >= 2);
    expect(ami.status().lastError).toMatch(/^Ping unanswered by tcp:\/\/127\.0\.0\.1:\d+ within 300 ms$/);
    await ami.stop();
    await new Promise((resolve) => silent.close(resolve));
  });

  describe('tls://', () => {
    let terminator: TlsTerminator;
    beforeEach(async () => {
      // A self-signed certificate, and a TLS listener in front of the double.
      terminator = await TlsTerminator.start(pbx.port);
    });
    afterEach(async () => {
      running.splice(0).forEach((ami) => ami.stop());
      await terminator.close();
    });
    const tlsUrl = () => pbx.url().replace('tcp://', 'tls://').replace(/:\d+$/, `:${terminator.port}`);

    it('checks the certificate by default: a self-signed one is refused', async () => {
      const { ami } = follower(tlsUrl());
      running.push(ami);
      ami.start();
      await until(() => ami.status().reconnects >= 1);
      expect(ami.status().connected).toBe(false);
      expect(ami.status().lastError).toMatch(/SELF_SIGNED|self.signed/i);
      expect(ami.status().target).toMatch(/^tls:\/\/127\.0\.0\.1:\d+$/);
    });

    it('follows calls over TLS', async () => {
      const { ami, sink } = follower(tlsUrl(), { rejectUnauthorized: false });
      running.push(ami);
      ami.start();
      await until(() => ami.status().connected);
      const call = pbx.play({ kind: 'outbound', from: '101', to: '+4930123456', answeredBy: 'y', stepMs: 1 });
      await call.done;
      await until(() => sink.events.length === 3);
      expect(sink.events.map((e) => e.event)).toEqual(['call.started', 'call.answered', 'call.ended']);
    });
  });
});
