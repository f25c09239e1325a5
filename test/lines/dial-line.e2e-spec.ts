import axios from 'axios';
import { createServer, IncomingMessage, Server } from 'node:http';
import { PortalRuntime } from '../../src/tenancy/portal-runtime';
import { AmiServer } from '../support/ami-server';
import { eventually, Harness, startHarness } from '../support/bridge-harness';
import { EslServer } from '../support/esl-server';

/**
 * Click-to-call passes the click's line on (docs/API.md "Lines"), end to end over real HTTP and TCP: the
 * sandbox portal "clicks" a number on a line (its ONEXTERNALCALLSTART carries data[LINE_NUMBER]) and posts
 * it to the bridge, whose dialer asks the PBX double: AMI Originate with `Variable: CRM_LINE=<line>` beside
 * CRM_CALL_ID, the event socket's originate with `crm_line=<line>` among its variables, DIAL_URL's `{line}`.
 * The line goes in line form (E.164, DEFAULT_COUNTRY DE); a click without one sends none; one that is no line
 * (it would split the command) is left out, and the click is still dialled.
 */
const APP_TOKEN = 'outbound-hook-dial-line';
const LINE = '+49 30 9900001';
const SENT = '+49309900001';
/** Not a line: a `,` and `}` would add a variable to ESL's `{…}`, a comma one to AMI's Variable. */
const SMUGGLED = '+4930,evil=1}9900001';

let seq = 0;
const freshNumber = () => `+49305558${String(Date.now() % 10000).padStart(4, '0')}${String(++seq % 10)}`;

interface Pbx {
  env: Record<string, string>;
  /** What the PBX received for the click, as [the line it names, the request as received]. */
  received(portalCallId: string): [string | undefined, unknown] | undefined;
  close(): Promise<void>;
}

async function amiPbx(): Promise<Pbx> {
  const ami = await AmiServer.start('crm-bridge', 'dial-line-s3cret');
  return {
    env: { DIAL_MODE: 'ami', AMI_URL: ami.url() },
    received: (id) => {
      const action = ami.originates().find((entry) => [entry.Variable].flat().includes(`CRM_CALL_ID=${id}`));
      if (!action) return undefined;
      const variables = [action.Variable].flat();
      const line = variables.find((value) => value.startsWith('CRM_LINE='))?.slice('CRM_LINE='.length);
      return [line, variables];
    },
    close: () => ami.close(),
  };
}

async function eslPbx(): Promise<Pbx> {
  const esl = await EslServer.start('dial-line-pw');
  return {
    env: { DIAL_MODE: 'esl', ESL_URL: esl.url() },
    received: (id) => {
      const command = esl.originates().find((entry) => entry.includes(`{crm_call_id=${id},`));
      if (!command) return undefined;
      return [/crm_line=([^,}]*)/.exec(command)?.[1] || undefined, command];
    },
    close: () => esl.close(),
  };
}

async function httpPbx(): Promise<Pbx> {
  const received: { url: URL; body: Record<string, unknown> }[] = [];
  const server: Server = createServer((request: IncomingMessage, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      received.push({
        url: new URL(request.url!, 'http://pbx.local'),
        body: body ? (JSON.parse(body) as Record<string, unknown>) : {},
      });
      response.end('{"queued":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    env: {
      DIAL_MODE: 'http',
      DIAL_URL: `${base}/dial/{extension}?to={number}&id={crmCallId}&line={line}`,
      DIAL_METHOD: 'POST',
    },
    received: (id) => {
      const entry = received.find((request) => request.url.searchParams.get('id') === id);
      if (!entry) return undefined;
      // The URL's {line} and the JSON body's line say the same.
      expect(entry.body.line).toBe(entry.url.searchParams.get('line') || undefined);
      return [entry.url.searchParams.get('line') || undefined, entry.url.search];
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe.each([
  ['ami', amiPbx],
  ['esl', eslPbx],
  ['http', httpPbx],
] as [string, () => Promise<Pbx>][])("click-to-call passes the click's line, DIAL_MODE=%s", (mode, start) => {
  let pbx: Pbx;
  let h: Harness;

  beforeAll(async () => {
    pbx = await start();
    h = await startHarness({
      ...pbx.env,
      B24_APPLICATION_TOKEN: APP_TOKEN,
      DIAL_TIMEOUT_SEC: '10',
    });
    await axios.post(`${h.sandbox.url}/_sandbox/events/outbound`, {
      url: `${h.url}/v1/portal/events`,
      applicationToken: APP_TOKEN,
    });
    await h.app.get(PortalRuntime).directory.whenLoaded();
  });
  afterAll(async () => {
    await h.close();
    await pbx.close();
  });

  /** Employee 2 (extension 101) clicks a number on `lineNumber`; what the PBX received for it. */
  async function dialled(lineNumber?: string): Promise<[string | undefined, unknown]> {
    const { data } = await axios.post(`${h.sandbox.url}/_sandbox/click`, {
      phone: freshNumber(),
      userId: 2,
      ...(lineNumber === undefined ? {} : { lineNumber }),
    });
    const portalCallId = (data as { CALL_ID: string }).CALL_ID;
    return eventually(async () => pbx.received(portalCallId));
  }

  it(`the click's LINE_NUMBER reaches the PBX in line form (${mode})`, async () => {
    const [line] = await dialled(LINE);
    expect(line).toBe(SENT);
  });

  it(`a click without a line sends none (${mode})`, async () => {
    const [line, request] = await dialled();
    expect(line).toBeUndefined();
    if (mode === 'ami') expect(request).toEqual([expect.stringMatching(/^CRM_CALL_ID=/)]);
    if (mode === 'esl') expect(request).toContain(',crm_line=}user/101 ');
  });

  it(`a LINE_NUMBER that is no line is left out, never reaching the PBX command; the click is dialled (${mode})`, async () => {
    const [line, request] = await dialled(SMUGGLED);
    expect(line).toBeUndefined();
    expect(JSON.stringify(request)).not.toContain('evil');
  });
});
