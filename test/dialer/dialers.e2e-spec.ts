import { createServer, IncomingMessage, Server } from 'node:http';
import { createServer as createTcpServer, Socket } from 'node:net';
import { EgressPolicy } from '../../src/common/egress';
import { AmiDialer } from '../../src/dialer/ami-dialer';
import { DialError, DialRefused } from '../../src/dialer/dialer';
import { EslDialer } from '../../src/dialer/esl-dialer';
import { HttpDialer } from '../../src/dialer/http-dialer';
import { AmiServer } from '../support/ami-server';
import { EslServer } from '../support/esl-server';
import { freePort } from '../support/bridge-process';
import { eventually } from '../support/bridge-harness';

const names = (ami: AmiServer) =>
  eventually(async () =>
    ami.actions.some((action) => action.Action === 'Logoff')
      ? ami.actions.map((action) => action.Action)
      : undefined,
  );

/** The operator's own settings (single mode): the tenant rule is dial-egress.e2e-spec.ts's. */
const UNRESTRICTED = EgressPolicy.unrestricted();
const REQUEST = { extension: '101', number: '+4930123456', crmCallId: 'externalCall.abc123', userId: 2 };
const AMI_SECRET = 'am1-s3cret-value';
const ESL_PASSWORD = 'Cl3ueCon-pw';

describe('AMI dialer against an AMI double over TCP', () => {
  let ami: AmiServer;
  beforeEach(async () => (ami = await AmiServer.start('crm-bridge', AMI_SECRET)));
  afterEach(() => ami.close());

  it('logs in and sends Originate with Channel, Context, Exten, Priority, Async, CallerID, Variable', async () => {
    const dialer = new AmiDialer({
      egress: UNRESTRICTED,
      url: ami.url(),
      channel: 'PJSIP/{extension}',
      context: 'from-internal',
    });
    await dialer.originate(REQUEST);
    expect(await names(ami)).toEqual(['Login', 'Originate', 'Logoff']);
    expect(ami.actions[0]).toMatchObject({ Username: 'crm-bridge', Secret: AMI_SECRET });
    const [originate] = ami.originates();
    expect(originate).toMatchObject({
      Channel: 'PJSIP/101',
      Context: 'from-internal',
      Exten: '+4930123456',
      Priority: '1',
      Async: 'true',
      CallerID: '+4930123456',
      Variable: 'CRM_CALL_ID=externalCall.abc123',
    });
    expect(originate.ActionID).toEqual(expect.any(String));
    expect(originate.ActionID).not.toEqual(ami.actions[0].ActionID);
    expect(dialer.target).toBe(`ami tcp://127.0.0.1:${ami.port}`);
  });

  it('uses the AMI_CHANNEL template and AMI_CONTEXT', async () => {
    const dialer = new AmiDialer({
      egress: UNRESTRICTED,
      url: ami.url(),
      channel: 'SIP/{extension}',
      context: 'crm-out',
    });
    await dialer.originate({ ...REQUEST, callerId: 'CRM <100>' });
    expect(ami.originates()[0]).toMatchObject({
      Channel: 'SIP/101',
      Context: 'crm-out',
      CallerID: 'CRM <100>',
    });
  });

  it('a wrong secret is a clear error that does not carry the secret, and nothing is originated', async () => {
    const dialer = new AmiDialer({
      egress: UNRESTRICTED,
      url: ami.url('wrong-s3cret'),
      channel: 'PJSIP/{extension}',
      context: 'x',
    });
    const error = await dialer.originate(REQUEST).catch((caught: Error) => caught);
    expect(error).toBeInstanceOf(DialError);
    expect((error as Error).message).toMatch(
      /AMI login refused for user crm-bridge at 127\.0\.0\.1:\d+: Authentication failed/,
    );
    expect((error as Error).message).not.toContain('wrong-s3cret');
    expect(ami.originates()).toEqual([]);
  });

  it('a PBX not listening is "PBX unreachable: ECONNREFUSED host:port"', async () => {
    const port = await freePort();
    const dialer = new AmiDialer({
      egress: UNRESTRICTED,
      url: `tcp://u:${AMI_SECRET}@127.0.0.1:${port}`,
      channel: 'PJSIP/{extension}',
      context: 'x',
    });
    const error = (await dialer.originate(REQUEST).catch((caught: Error) => caught)) as Error;
    expect(error.message).toBe(`PBX unreachable: ECONNREFUSED 127.0.0.1:${port}`);
  });

  it('a line break in a value cannot add an action header: a number is cleaned, a CALL_ID refused', async () => {
    const dialer = new AmiDialer({
      egress: UNRESTRICTED,
      url: ami.url(),
      channel: 'PJSIP/{extension}',
      context: 'from-internal',
    });
    await dialer.originate({ ...REQUEST, number: '+49301\r\nAction: Command' });
    expect(ami.originates()[0]).toMatchObject({
      Exten: '+49301ActionCommand',
      Variable: 'CRM_CALL_ID=externalCall.abc123',
    });
    expect(await names(ami)).toEqual(['Login', 'Originate', 'Logoff']);
    const error = await dialer
      .originate({ ...REQUEST, crmCallId: 'id\r\nCommand: x' })
      .catch((e: Error) => e);
    expect(error).toBeInstanceOf(DialRefused);
    expect(ami.originates()).toHaveLength(1);
  });

  it('a CALL_ID that would set a second channel variable (Asterisk splits Variable on commas) is refused', async () => {
    const dialer = new AmiDialer({
      egress: UNRESTRICTED,
      url: ami.url(),
      channel: 'PJSIP/{extension}',
      context: 'from-internal',
    });
    const error = (await dialer
      .originate({ ...REQUEST, crmCallId: 'externalCall.5f0e,origination_caller_id_number=0900666}user/666' })
      .catch((caught: Error) => caught)) as Error;
    expect(error).toBeInstanceOf(DialRefused);
    expect(error.message).toBe(
      'the CALL_ID holds characters the PBX would split on: refused, never sent to the PBX',
    );
    // A later dial reaches the PBX on its own connection: the refused one opened none before it.
    await dialer.originate(REQUEST);
    expect(await names(ami)).toEqual(['Login', 'Originate', 'Logoff']);
    expect(ami.originates()).toEqual([
      expect.objectContaining({ Variable: 'CRM_CALL_ID=externalCall.abc123' }),
    ]);
  });
});

/** A PBX that answers a connection with `write(socket)` and then never stops (or never ends a line). */
async function hostilePbx(
  write: (socket: Socket) => void,
): Promise<{ port: number; closed: Promise<void>; stop(): Promise<void> }> {
  let onClosed: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => (onClosed = resolve));
  const sockets = new Set<Socket>();
  const server = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => onClosed());
    write(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    closed,
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Writes `chunk` as fast as the socket takes it, until the socket closes. */
function flood(socket: Socket, chunk: string): void {
  const more = () => {
    while (!socket.destroyed && socket.write(chunk));
    if (!socket.destroyed) socket.once('drain', more);
  };
  more();
}

describe("a hostile PBX cannot fill the bridge's memory", () => {
  const amiAt = (port: number) =>
    new AmiDialer({
      egress: UNRESTRICTED,
      url: `tcp://u:p@127.0.0.1:${port}`,
      channel: 'PJSIP/{extension}',
      context: 'x',
      timeoutMs: 20_000,
    });

  it('an endless greeting line: the connection is dropped with a clear error', async () => {
    const pbx = await hostilePbx((socket) => flood(socket, 'A'.repeat(16 * 1024)));
    try {
      const error = (await amiAt(pbx.port)
        .originate(REQUEST)
        .catch((caught: Error) => caught)) as Error;
      expect(error).toBeInstanceOf(DialError);
      expect(error.message).toBe(
        `PBX sent a line or message head longer than 65536 bytes: connection dropped (127.0.0.1:${pbx.port})`,
      );
      await pbx.closed;
    } finally {
      await pbx.stop();
    }
  });

  it("an endless stream of events between the replies: dropped past the connection's bound", async () => {
    const pbx = await hostilePbx((socket) => {
      socket.write('Asterisk Call Manager/6.0.0\r\n');
      flood(socket, 'Event: Noise\r\nPrivilege: system,all\r\n\r\n'.repeat(200));
    });
    try {
      const error = (await amiAt(pbx.port)
        .originate(REQUEST)
        .catch((caught: Error) => caught)) as Error;
      expect(error).toBeInstanceOf(DialError);
      expect(error.message).toBe(
        `PBX sent more than 4194304 bytes on one connection: connection dropped (127.0.0.1:${pbx.port})`,
      );
      await pbx.closed;
    } finally {
      await pbx.stop();
    }
  });

  it('an event socket announcing an endless body: dropped at once', async () => {
    const pbx = await hostilePbx((socket) => {
      socket.write('Content-Type: auth/request\nContent-Length: 99999999999\n\n');
      flood(socket, 'x'.repeat(16 * 1024));
    });
    try {
      const dialer = new EslDialer({
        egress: UNRESTRICTED,
        url: `tcp://:pw@127.0.0.1:${pbx.port}`,
        originate: 'user/{extension} {number}',
      });
      const error = (await dialer.originate(REQUEST).catch((caught: Error) => caught)) as Error;
      expect(error).toBeInstanceOf(DialError);
      expect(error.message).toBe(
        `PBX announced a body of 99999999999 bytes (at most 1048576): connection dropped (127.0.0.1:${pbx.port})`,
      );
      await pbx.closed;
    } finally {
      await pbx.stop();
    }
  });

  it('a dial URL answering an endless body: the read is cut off and the dial fails', async () => {
    const server = createServer((request, response) => {
      response.writeHead(200, { 'Content-Type': 'text/plain' });
      const more = () => {
        while (!response.destroyed && response.write('y'.repeat(64 * 1024)));
        if (!response.destroyed) response.once('drain', more);
      };
      more();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as { port: number }).port;
      const dialer = new HttpDialer({
        egress: UNRESTRICTED,
        url: `http://127.0.0.1:${port}/dial`,
        method: 'POST',
        timeoutMs: 20_000,
      });
      const error = (await dialer.originate(REQUEST).catch((caught: Error) => caught)) as Error;
      expect(error).toBeInstanceOf(DialError);
      expect(error.message).toBe(
        `the dial URL answered more than 65536 bytes: connection dropped (http http://127.0.0.1:${port})`,
      );
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('ESL dialer against an event-socket double over TCP', () => {
  let esl: EslServer;
  beforeEach(async () => (esl = await EslServer.start(ESL_PASSWORD)));
  afterEach(() => esl.close());

  it('authenticates and sends bgapi originate with the default template', async () => {
    const dialer = new EslDialer({
      egress: UNRESTRICTED,
      url: esl.url(),
      originate: '{crm_call_id={crmCallId}}user/{extension} {number} XML default',
    });
    await dialer.originate(REQUEST);
    await eventually(async () => (esl.commands.length === 3 ? true : undefined));
    expect(esl.commands.map((entry) => entry.command)).toEqual([
      `auth ${ESL_PASSWORD}`,
      'bgapi originate {crm_call_id=externalCall.abc123}user/101 +4930123456 XML default',
      'exit',
    ]);
    expect(esl.commands[1].headers['Job-UUID']).toEqual(expect.any(String));
  });

  it('takes an ESL_ORIGINATE of the operator', async () => {
    const dialer = new EslDialer({
      egress: UNRESTRICTED,
      url: esl.url(),
      originate:
        '{crm_call_id={crmCallId},origination_caller_id_number={number}}sofia/internal/{extension}@pbx &bridge(sofia/gateway/out/{number})',
    });
    await dialer.originate(REQUEST);
    expect(esl.originates()).toEqual([
      'bgapi originate {crm_call_id=externalCall.abc123,origination_caller_id_number=+4930123456}sofia/internal/101@pbx &bridge(sofia/gateway/out/+4930123456)',
    ]);
  });

  it('a wrong password is a clear error without the password', async () => {
    const dialer = new EslDialer({
      egress: UNRESTRICTED,
      url: esl.url('n0t-the-pw'),
      originate: 'user/{extension} {number}',
    });
    const error = (await dialer.originate(REQUEST).catch((caught: Error) => caught)) as Error;
    expect(error).toBeInstanceOf(DialError);
    expect(error.message).toMatch(/event socket login refused at 127\.0\.0\.1:\d+: -ERR invalid/);
    expect(error.message).not.toContain('n0t-the-pw');
    expect(esl.originates()).toEqual([]);
  });

  it('a number with spaces cannot add originate arguments', async () => {
    const dialer = new EslDialer({
      egress: UNRESTRICTED,
      url: esl.url(),
      originate: 'user/{extension} {number} XML default',
    });
    await dialer.originate({ ...REQUEST, number: '+49 30 123456 &park()' });
    expect(esl.originates()).toEqual(['bgapi originate user/101 +4930123456park XML default']);
  });

  it('a CALL_ID that would close {crm_call_id=…} and add variables is refused, never sent', async () => {
    const dialer = new EslDialer({
      egress: UNRESTRICTED,
      url: esl.url(),
      originate: '{crm_call_id={crmCallId}}user/{extension} {number} XML default',
    });
    for (const crmCallId of [
      'externalCall.1,origination_caller_id_number=0900666',
      'externalCall.1}user/666',
    ]) {
      const error = await dialer.originate({ ...REQUEST, crmCallId }).catch((caught: Error) => caught);
      expect(error).toBeInstanceOf(DialRefused);
    }
    // A later dial reaches the PBX: the refused ones sent nothing before it.
    await dialer.originate(REQUEST);
    expect(esl.originates()).toEqual([
      'bgapi originate {crm_call_id=externalCall.abc123}user/101 +4930123456 XML default',
    ]);
    expect(esl.commands.filter((entry) => /0900666|user\/666/.test(entry.command))).toEqual([]);
  });
});

describe('HTTP dialer against a plain HTTP server', () => {
  let server: Server;
  let received: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[];
  let status: number;
  let base: string;

  beforeEach(async () => {
    received = [];
    status = 200;
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        received.push({ method: request.method!, url: request.url!, headers: request.headers, body });
        response.statusCode = status;
        response.end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterEach(() => new Promise((resolve) => server.close(resolve)));

  it('POSTs the JSON body to the filled, URL-encoded template with basic auth', async () => {
    const dialer = new HttpDialer({
      egress: UNRESTRICTED,
      url: `${base}/dial/{extension}?to={number}&id={crmCallId}&user={userId}`,
      method: 'POST',
      authorization: `Basic ${Buffer.from('dial:pa:ss').toString('base64')}`,
    });
    await dialer.originate({ ...REQUEST, crmCallId: 'a b&c' });
    expect(received).toEqual([
      expect.objectContaining({ method: 'POST', url: '/dial/101?to=%2B4930123456&id=a%20b%26c&user=2' }),
    ]);
    expect(JSON.parse(received[0].body)).toEqual({
      extension: '101',
      number: '+4930123456',
      crmCallId: 'a b&c',
      userId: 2,
    });
    expect(received[0].headers.authorization).toBe(`Basic ${Buffer.from('dial:pa:ss').toString('base64')}`);
    expect(received[0].headers['content-type']).toBe('application/json');
  });

  it('GETs with a bearer token', async () => {
    const dialer = new HttpDialer({
      egress: UNRESTRICTED,
      url: `${base}/c2c?e={extension}&n={number}`,
      method: 'GET',
      authorization: 'Bearer t0k',
    });
    await dialer.originate(REQUEST);
    expect(received).toEqual([
      expect.objectContaining({ method: 'GET', url: '/c2c?e=101&n=%2B4930123456', body: '' }),
    ]);
    expect(received[0].headers.authorization).toBe('Bearer t0k');
  });

  it('a non-2xx answer is an error naming the status, not the credentials', async () => {
    status = 503;
    const dialer = new HttpDialer({
      egress: UNRESTRICTED,
      url: `${base}/dial`,
      method: 'POST',
      authorization: 'Bearer s3cr3t',
    });
    const error = (await dialer.originate(REQUEST).catch((caught: Error) => caught)) as Error;
    expect(error.message).toBe(`the dial URL answered 503 (http http://${base.slice(7)})`);
    expect(error.message).not.toContain('s3cr3t');
  });

  it('an unreachable target is "PBX unreachable: ECONNREFUSED"', async () => {
    const port = await freePort();
    const dialer = new HttpDialer({
      egress: UNRESTRICTED,
      url: `http://127.0.0.1:${port}/dial`,
      method: 'POST',
    });
    const error = (await dialer.originate(REQUEST).catch((caught: Error) => caught)) as Error;
    expect(error.message).toMatch(new RegExp(`^PBX unreachable: ECONNREFUSED 127\\.0\\.0\\.1:${port}`));
  });
});
