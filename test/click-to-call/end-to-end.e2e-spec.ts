import { PortalRuntime } from '../../src/tenancy/portal-runtime';
import axios from 'axios';
import { createServer, IncomingMessage, Server } from 'node:http';
import { DialStore } from '../../src/store/dial-store';
import { AmiServer } from '../support/ami-server';
import { ADMIN_TOKEN, eventually, Harness, PBX_TOKEN, startHarness } from '../support/bridge-harness';
import { freePort } from '../support/bridge-process';
import { EslServer } from '../support/esl-server';
import { sandboxCalls, SandboxCall } from '../support/sandbox-inspect';
import { basic } from '../pbx-adapters/adapter-support';

/**
 * Click-to-call end to end (docs/API.md), through real HTTP and TCP only: the sandbox portal "clicks" a number
 * (it registers the call itself and posts ONEXTERNALCALLSTART to the bridge's /v1/portal/events as its
 * outbound webhook), the bridge stores and publishes the click, the dialer asks the PBX double to ring the
 * employee, the PBX reports the call (Asterisk CDR or native events, with or without the CALL_ID), and the
 * bridge finishes the portal's own CALL_ID once, never registering another call, with the recording attached.
 * Sandbox users: 2 = extension 101, 3 = 102. Contact 2 (030 98765432) is employee 3's.
 */

const APP_TOKEN = 'outbound-hook-c2c-e2e';
const AMI_SECRET = 'e2e-ami-s3cret';
const ESL_PASSWORD = 'e2e-esl-pw';
const ZONE = 'Europe/Berlin';

let seq = 0;
/** A number no seeded CRM record has, distinct per test. */
const freshNumber = () => `+49305557${String(Date.now() % 10000).padStart(4, '0')}${String(++seq % 10)}`;

/** `YYYY-MM-DD HH:MM:SS` in the PBX's zone, as ${CDR(start)} writes it. */
function localTime(at: Date): string {
  return at.toLocaleString('sv-SE', { timeZone: ZONE }).replace('T', ' ');
}

function webhookEnv(extra: Record<string, string>): Record<string, string> {
  return {
    B24_APPLICATION_TOKEN: APP_TOKEN,
    DIAL_MATCH_SEC: '60',
    DIAL_TIMEOUT_SEC: '10',
    PBX_TIME_ZONE: ZONE,
    ...extra,
  };
}

/** Points the sandbox's outbound webhook (ONEXTERNALCALLSTART, ONEXTERNALCALLBACKSTART) at the bridge. */
async function subscribeBridge(h: Harness): Promise<void> {
  await axios.post(`${h.sandbox.url}/_sandbox/events/outbound`, {
    url: `${h.url}/v1/portal/events`,
    applicationToken: APP_TOKEN,
  });
  await h.app.get(PortalRuntime).directory.whenLoaded();
}

/** An employee clicks `phone` in the CRM: the portal registers the call and fires the event; its CALL_ID. */
async function click(h: Harness, phone: string, userId = 2): Promise<string> {
  const { data } = await axios.post(`${h.sandbox.url}/_sandbox/click`, { phone, userId });
  return (data as { CALL_ID: string }).CALL_ID;
}

const portalCall = async (h: Harness, callId: string): Promise<SandboxCall | undefined> =>
  (await sandboxCalls(h.sandbox)).find((call) => call.CALL_ID === callId);

async function bridgeStatus(h: Harness, callId: string): Promise<Record<string, unknown>> {
  const { body } = await h.http
    .get(`/v1/calls/${encodeURIComponent(callId)}`)
    .set('Authorization', `Bearer ${PBX_TOKEN}`);
  return body as Record<string, unknown>;
}

/** The bridge's call is settled: nothing more to send. */
const settled = (h: Harness, callId: string) =>
  eventually(async () => {
    const body = await bridgeStatus(h, callId);
    return body.nextStep === null && (body.state === 'finished' || body.state === 'failed')
      ? body
      : undefined;
  });

/** The portal's call once it is finished (and its recording attached, if asked). */
const portalFinished = (h: Harness, callId: string, withRecording = false) =>
  eventually(async () => {
    const call = await portalCall(h, callId);
    return call?.finished && (!withRecording || call.records.length > 0) ? call : undefined;
  });

async function storedPortalEvents(h: Harness): Promise<{ data: Record<string, unknown> }[]> {
  const { body } = await h.http
    .get('/v1/admin/portal-events')
    .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
    .expect(200);
  return (body as { events: { data: Record<string, unknown> }[] }).events;
}

/** The PBX's report of the dialled call. */
interface Report {
  /** The PBX's own id of the call. */
  callId: string;
  recordingUrl: string;
}

/** An Asterisk CDR (src = the extension, dst = the number, no direction), with CRM_CALL_ID if given. */
async function asteriskCdr(
  h: Harness,
  phone: string,
  crmCallId?: string,
  extension = '101',
): Promise<Report> {
  const linkedid = `${Math.floor(Date.now() / 1000)}.${++seq}`;
  const recordingUrl = `https://pbx.example.com/rec/${linkedid}.wav`;
  const start = new Date();
  const form = new URLSearchParams({
    uniqueid: linkedid,
    linkedid,
    src: extension,
    dst: phone,
    disposition: 'ANSWERED',
    duration: '50',
    billsec: '42',
    start: localTime(start),
    answer: localTime(new Date(start.getTime() + 8000)),
    recording: recordingUrl,
  });
  if (crmCallId) form.set('CRM_CALL_ID', crmCallId);
  const response = await h.http
    .post(`/v1/pbx/asterisk?tz=${encodeURIComponent(ZONE)}`)
    .set('Authorization', basic('asterisk'))
    .set('Content-Type', 'application/x-www-form-urlencoded')
    .send(form.toString());
  expect(response.status).toBe(202);
  return { callId: linkedid, recordingUrl };
}

/** The JSON API's native events of the call, with crmCallId if given. */
async function nativeEvents(
  h: Harness,
  phone: string,
  crmCallId?: string,
  extension = '101',
): Promise<Report> {
  const callId = `fs-${Date.now()}-${++seq}`;
  const recordingUrl = `https://pbx.example.com/rec/${callId}.wav`;
  const at = new Date();
  const tag = crmCallId ? { crmCallId } : {};
  const response = await h.http
    .post('/v1/calls/events')
    .set('Authorization', `Bearer ${PBX_TOKEN}`)
    .send([
      {
        event: 'call.started',
        callId,
        direction: 'outbound',
        phoneNumber: phone,
        extension,
        at: at.toISOString(),
        ...tag,
      },
      { event: 'call.answered', callId, extension, at: new Date(at.getTime() + 8000).toISOString() },
      {
        event: 'call.ended',
        callId,
        at: new Date(at.getTime() + 50_000).toISOString(),
        durationSec: 42,
        status: 'answered',
        recordingUrl,
        ...tag,
      },
    ]);
  expect(response.status).toBe(202);
  return { callId, recordingUrl };
}

/**
 * After the PBX's report: the portal's own CALL_ID is finished once (employee 2, 42 s, answered) with the
 * recording, the portal saw exactly one register for it (the click's own) and none for the PBX's call.
 */
async function expectFinishedOnce(
  h: Harness,
  portalCallId: string,
  report: Report,
  matchedBy: 'crmCallId' | 'click',
  callsBefore: number,
): Promise<void> {
  const call = await portalFinished(h, portalCallId, true);
  expect(call.finished).toMatchObject({ USER_ID: 2, DURATION: 42, STATUS_CODE: '200' });
  expect(call.registerRequests).toBe(1);
  expect(call.records.map((record) => record.RECORD_URL)).toEqual([report.recordingUrl]);
  const status = await settled(h, report.callId);
  expect(status).toMatchObject({
    state: 'finished',
    crm: { callId: portalCallId },
    clickToCall: { portalCallId, matchedBy },
    recording: 'attached',
  });
  // Nothing else registered: only the click's call is new on the portal, and nothing bears the PBX's id.
  const calls = await sandboxCalls(h.sandbox);
  expect(calls.filter((other) => other.EXTERNAL_CALL_ID === report.callId)).toEqual([]);
  expect(calls).toHaveLength(callsBefore + 1);
  // Once: with nothing left queued for the portal, no second finish or attach can follow.
  await eventually(async () =>
    (await h.http.get('/health/ready')).body.details.portal.queueDepth === 0 ? true : undefined,
  );
  const later = await portalCall(h, portalCallId);
  expect(later?.finished).toEqual(call.finished);
  expect(later?.records).toHaveLength(1);
  expect(later?.registerRequests).toBe(1);
  expect(cardShownTo(later)).toEqual([]);
}

/** Who still sees the call's card on the portal (register popped it for the clicking employee). */
const cardShownTo = (call: SandboxCall | undefined): number[] =>
  (call as unknown as { shownTo?: number[] } | undefined)?.shownTo ?? [];

/** One PBX double per DIAL_MODE: how the bridge is told to use it, and what it received for a CALL_ID. */
interface Pbx {
  env: Record<string, string>;
  /** The originates received for this CALL_ID, in a comparable shape. */
  originatesFor(portalCallId: string): unknown[];
  /** Every originate received, whatever its CALL_ID. */
  count(): number;
  /** What the right originate of `portalCallId` to `number` from `extension` looks like. */
  expected(portalCallId: string, number: string, extension: string, userId: number): unknown;
  report(h: Harness, phone: string, crmCallId?: string, extension?: string): Promise<Report>;
  close(): Promise<void>;
}

async function amiPbx(): Promise<Pbx> {
  const ami = await AmiServer.start('crm-bridge', AMI_SECRET);
  return {
    env: { DIAL_MODE: 'ami', AMI_URL: ami.url() },
    originatesFor: (id) => ami.originates().filter((action) => action.Variable === `CRM_CALL_ID=${id}`),
    count: () => ami.originates().length,
    expected: (id, number, extension) =>
      expect.objectContaining({
        Channel: `PJSIP/${extension}`,
        Context: 'from-internal',
        Exten: number,
        Priority: '1',
        Async: 'true',
        Variable: `CRM_CALL_ID=${id}`,
      }),
    report: asteriskCdr,
    close: () => ami.close(),
  };
}

async function eslPbx(): Promise<Pbx> {
  const esl = await EslServer.start(ESL_PASSWORD);
  return {
    env: { DIAL_MODE: 'esl', ESL_URL: esl.url() },
    originatesFor: (id) => esl.originates().filter((command) => command.includes(`{crm_call_id=${id},`)),
    count: () => esl.originates().length,
    expected: (id, number, extension) =>
      `bgapi originate {crm_call_id=${id},crm_line=}user/${extension} ${number} XML default`,
    report: nativeEvents,
    close: () => esl.close(),
  };
}

async function httpPbx(): Promise<Pbx> {
  const received: { method: string; url: string; authorization?: string; body: Record<string, unknown> }[] =
    [];
  const server: Server = createServer((request: IncomingMessage, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      received.push({
        method: request.method!,
        url: request.url!,
        authorization: request.headers.authorization,
        body: body ? (JSON.parse(body) as Record<string, unknown>) : {},
      });
      response.setHeader('Content-Type', 'application/json');
      response.end('{"queued":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    env: {
      DIAL_MODE: 'http',
      DIAL_URL: `${base}/dial/{extension}?to={number}&id={crmCallId}&user={userId}`,
      DIAL_METHOD: 'POST',
      DIAL_AUTH: 'bearer:e2e-dial-t0ken',
    },
    originatesFor: (id) => received.filter((entry) => entry.body.crmCallId === id),
    count: () => received.length,
    expected: (id, number, extension, userId) => ({
      method: 'POST',
      url: `/dial/${extension}?to=${encodeURIComponent(number)}&id=${encodeURIComponent(id)}&user=${userId}`,
      authorization: 'Bearer e2e-dial-t0ken',
      body: { extension, number, crmCallId: id, userId },
    }),
    report: asteriskCdr,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const MODES: [string, () => Promise<Pbx>][] = [
  ['ami', amiPbx],
  ['esl', eslPbx],
  ['http', httpPbx],
];

describe.each(MODES)('click-to-call end to end, DIAL_MODE=%s', (mode, startPbx) => {
  let pbx: Pbx;
  let h: Harness;

  beforeAll(async () => {
    pbx = await startPbx();
    h = await startHarness(webhookEnv(pbx.env));
    await subscribeBridge(h);
  });
  afterAll(async () => {
    await h.close();
    await pbx.close();
  });

  /** Clicks `phone` as employee 2 and waits for the PBX double to receive exactly the right originate. */
  async function clickAndDial(
    phone: string,
    shown = phone,
  ): Promise<{ portalCallId: string; callsBefore: number }> {
    const callsBefore = (await sandboxCalls(h.sandbox)).length;
    const portalCallId = await click(h, shown);
    const originates = await eventually(async () => {
      const found = pbx.originatesFor(portalCallId);
      return found.length > 0 ? found : undefined;
    });
    expect(originates).toEqual([pbx.expected(portalCallId, phone, '101', 2)]);
    return { portalCallId, callsBefore };
  }

  /** A fresh click, waited for until the PBX has it: whatever was stored before it had its turn. */
  async function laterClickDialled(): Promise<void> {
    const later = await click(h, freshNumber());
    await eventually(async () => (pbx.originatesFor(later).length > 0 ? true : undefined));
  }

  it(`the click is dialled (${mode}); the PBX's report WITH the CALL_ID finishes the portal's call once, with the recording`, async () => {
    const phone = freshNumber();
    const { portalCallId, callsBefore } = await clickAndDial(phone);
    const report = await pbx.report(h, phone, portalCallId);
    await expectFinishedOnce(h, portalCallId, report, 'crmCallId', callsBefore);
    expect(pbx.originatesFor(portalCallId)).toHaveLength(1);
  });

  it(`the click is dialled (${mode}); the PBX's report WITHOUT the CALL_ID, from that extension to that number, finishes it once`, async () => {
    const phone = freshNumber();
    const { portalCallId, callsBefore } = await clickAndDial(phone);
    const report = await pbx.report(h, phone);
    await expectFinishedOnce(h, portalCallId, report, 'click', callsBefore);
    expect(pbx.originatesFor(portalCallId)).toHaveLength(1);
  });

  it('a number clicked as the CRM shows it is dialled in E.164, and the PBX report in another form of it still matches', async () => {
    const digits = freshNumber().slice(3); // national significant number, without +49
    const shown = `+49 (${digits.slice(0, 2)}) ${digits.slice(2, 6)}-${digits.slice(6)}`;
    const { portalCallId, callsBefore } = await clickAndDial(`+49${digits}`, shown);
    const report = await pbx.report(h, `0049${digits}`);
    await expectFinishedOnce(h, portalCallId, report, 'click', callsBefore);
  });

  it('a callback request rings the responsible employee of the CRM record and dials the visitor', async () => {
    // Contact 2 (030 98765432) belongs to employee 3, extension 102.
    const { data } = await axios.post(`${h.sandbox.url}/_sandbox/callback`, {
      phone: '030 98765432',
      text: 'Please call me back',
      crmEntityType: 'CONTACT',
      crmEntityId: 2,
    });
    const portalCallId = (data as { CALL_ID: string }).CALL_ID;
    const originates = await eventually(async () => {
      const found = pbx.originatesFor(portalCallId);
      return found.length > 0 ? found : undefined;
    });
    expect(originates).toEqual([pbx.expected(portalCallId, '+493098765432', '102', 3)]);
  });

  it("a callback names its CRM record: that record's responsible is rung, whoever else has the number", async () => {
    // Lead 2 (employee 3, extension 102) was made from the form; the visitor's number is not on it but on
    // contact 1 (employee 2), as when a known client fills in a form that creates a new lead.
    const { data } = await axios.post(`${h.sandbox.url}/_sandbox/callback`, {
      phone: '+49 151 1234-5678',
      crmEntityType: 'LEAD',
      crmEntityId: 2,
    });
    const portalCallId = (data as { CALL_ID: string }).CALL_ID;
    const originates = await eventually(async () => {
      const found = pbx.originatesFor(portalCallId);
      return found.length > 0 ? found : undefined;
    });
    expect(originates).toEqual([pbx.expected(portalCallId, '+4915112345678', '102', 3)]);
  });

  it("a callback's dialled call, reported without the CALL_ID, finishes the portal's call once", async () => {
    const phone = freshNumber();
    const { data: lead } = await axios.post(`${h.sandbox.url}/_sandbox/crm/lead`, {
      fields: { TITLE: 'Callback form', ASSIGNED_BY_ID: 3, PHONE: [{ VALUE: phone, VALUE_TYPE: 'WORK' }] },
    });
    const callsBefore = (await sandboxCalls(h.sandbox)).length;
    const { data } = await axios.post(`${h.sandbox.url}/_sandbox/callback`, {
      phone,
      crmEntityType: 'LEAD',
      crmEntityId: (lead as { ID: number }).ID,
    });
    const portalCallId = (data as { CALL_ID: string }).CALL_ID;
    await eventually(async () => (pbx.originatesFor(portalCallId).length > 0 ? true : undefined));
    expect(pbx.originatesFor(portalCallId)).toEqual([pbx.expected(portalCallId, phone, '102', 3)]);
    const report = await pbx.report(h, phone, undefined, '102');
    const call = await portalFinished(h, portalCallId, true);
    expect(call.finished).toMatchObject({ USER_ID: 3, DURATION: 42, STATUS_CODE: '200' });
    expect(call.registerRequests).toBe(1);
    expect(await settled(h, report.callId)).toMatchObject({
      clickToCall: { portalCallId, matchedBy: 'click' },
    });
    expect(await sandboxCalls(h.sandbox)).toHaveLength(callsBefore + 1);
  });

  it('the portal posting the same click twice dials it once', async () => {
    const phone = freshNumber();
    const portalCallId = await click(h, phone);
    await eventually(async () => (pbx.originatesFor(portalCallId).length > 0 ? true : undefined));
    const { data: events } = await axios.get(`${h.sandbox.url}/_sandbox/events`);
    expect((events as { posts: unknown[] }).posts.length).toBeGreaterThan(0);
    const repeat = await h.http
      .post('/v1/portal/events')
      .type('form')
      .send(
        new URLSearchParams({
          event: 'ONEXTERNALCALLSTART',
          'data[USER_ID]': '2',
          'data[PHONE_NUMBER]': phone,
          'data[CALL_ID]': portalCallId,
          ts: String(Math.floor(Date.now() / 1000)),
          'auth[application_token]': APP_TOKEN,
        }).toString(),
      );
    expect(repeat.status).toBe(200);
    expect(repeat.body).toMatchObject({ duplicate: true });
    // A later click is dialled: the repeat, stored before it, would have been dialled by then too.
    await laterClickDialled();
    expect(pbx.originatesFor(portalCallId)).toHaveLength(1);
  });

  it('a click goes to the PBX at once, never waiting for a look at the store; bridge_click_to_originate_seconds counts it', async () => {
    // SPEC's 500 ms (click to the PBX's request) holds because the click itself wakes the dialer: with its
    // idle look at the store turned off, every click below can only be dialled that way.
    const worker = h.app.get(PortalRuntime).dialer!;
    const idlePollMs = worker.idlePollMs;
    worker.idlePollMs = undefined;
    try {
      // The first click's pass leaves the loop asleep with no timer: only a click wakes it from here on.
      const first = await click(h, freshNumber());
      await eventually(async () => (pbx.originatesFor(first).length > 0 ? true : undefined));
      for (let index = 0; index < 7; index += 1) {
        const portalCallId = await click(h, freshNumber());
        await eventually(async () => (pbx.originatesFor(portalCallId).length > 0 ? true : undefined));
      }
    } finally {
      worker.idlePollMs = idlePollMs;
    }
    const { text } = await h.http.get('/metrics');
    const bucket = (le: string) =>
      Number(
        text
          .split('\n')
          .find(
            (line) =>
              line.startsWith('bridge_click_to_originate_seconds_bucket{') &&
              line.includes(`le="${le}"`) &&
              line.includes(`mode="${mode}"`),
          )
          ?.split(' ')
          .pop(),
      );
    expect(bucket('+Inf')).toBeGreaterThanOrEqual(8);
  });

  it("a CALL_ID not of the portal's shape (a second channel variable smuggled in) is refused: nothing reaches the PBX", async () => {
    const before = pbx.count();
    const hostile = 'externalCall.5f0e,origination_caller_id_number=0900666}user/666';
    const response = await h.http
      .post('/v1/portal/events')
      .type('form')
      .send(
        new URLSearchParams({
          event: 'ONEXTERNALCALLSTART',
          'data[USER_ID]': '2',
          'data[PHONE_NUMBER]': freshNumber(),
          'data[CALL_ID]': hostile,
          ts: String(Math.floor(Date.now() / 1000)),
          'auth[application_token]': APP_TOKEN,
        }).toString(),
      );
    expect(response.status).toBe(200);
    const request = await eventually(async () => {
      const found = await h.app.get(DialStore).find('sandbox', hostile);
      return found?.state === 'failed' ? found : undefined;
    });
    expect(request.lastError).toMatch(
      /is not a portal call id \(externalCall\.<hex>\.<digits>\): refused, never dialled/,
    );
    // A later click reaches the PBX, and only it: the refused one never went out before it.
    await laterClickDialled();
    expect(pbx.count()).toBe(before + 1);
    // Nor sent back to the portal: it names no call the portal made.
    expect((await sandboxCalls(h.sandbox)).filter((call) => call.CALL_ID === hostile)).toEqual([]);
    expect(await bridgeStatus(h, `dial-${hostile}`)).not.toMatchObject({ callId: `dial-${hostile}` });
  });

  it('a forged event post is 401: nothing stored, nothing dialled', async () => {
    const before = pbx.count();
    const storedBefore = (await storedPortalEvents(h)).length;
    const fields = {
      event: 'ONEXTERNALCALLSTART',
      'data[USER_ID]': '2',
      'data[PHONE_NUMBER]': freshNumber(),
      'data[CALL_ID]': `externalCall.forged${Date.now()}`,
      'data[IS_MOBILE]': '0',
      ts: String(Math.floor(Date.now() / 1000)),
      'auth[domain]': 'portal.example.com',
      'auth[member_id]': 'member',
    };
    for (const token of ['forged-token', `${APP_TOKEN}x`, '']) {
      const body = new URLSearchParams(
        token === '' ? fields : { ...fields, 'auth[application_token]': token },
      );
      const response = await h.http.post('/v1/portal/events').type('form').send(body.toString());
      expect(response.status).toBe(401);
      expect(JSON.stringify(response.body)).not.toContain(APP_TOKEN);
    }
    expect((await storedPortalEvents(h)).length).toBe(storedBefore);
    // A later, real click is stored and dialled, and it alone: the forged ones left nothing to dial.
    await laterClickDialled();
    expect((await storedPortalEvents(h)).length).toBe(storedBefore + 1);
    expect(pbx.count()).toBe(before + 1);
  });
});

describe('click-to-call end to end: the PBX unreachable past DIAL_TIMEOUT_SEC', () => {
  let h: Harness;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    h = await startHarness(
      webhookEnv({
        DIAL_MODE: 'ami',
        AMI_URL: `tcp://crm-bridge:${AMI_SECRET}@127.0.0.1:${port}`,
        DIAL_TIMEOUT_SEC: '2',
      }),
    );
    await subscribeBridge(h);
  });
  afterAll(async () => {
    await h.close();
  });

  it("the portal's call is finished as failed (OTHER, FAILED_REASON), never registered again", async () => {
    const callsBefore = (await sandboxCalls(h.sandbox)).length;
    const clickedAt = Date.now();
    const portalCallId = await click(h, freshNumber());
    const call = await portalFinished(h, portalCallId);
    // Not before the deadline, 2 s after the click (a lower bound: DIAL_TIMEOUT_SEC honoured, by the clock).
    expect(Date.now() - clickedAt).toBeGreaterThanOrEqual(1900);
    expect(call.finished).toMatchObject({
      USER_ID: 2,
      DURATION: 0,
      STATUS_CODE: 'OTHER',
      FAILED_REASON: `PBX unreachable: ECONNREFUSED 127.0.0.1:${port}`,
    });
    expect(call.registerRequests).toBe(1);
    expect(cardShownTo(call)).toEqual([]);
    const status = await settled(h, `dial-${portalCallId}`);
    expect(status).toMatchObject({
      state: 'finished',
      clickToCall: { portalCallId, matchedBy: 'crmCallId' },
    });
    const calls = await sandboxCalls(h.sandbox);
    expect(calls).toHaveLength(callsBefore + 1);
    expect(calls.filter((other) => other.EXTERNAL_CALL_ID === `dial-${portalCallId}`)).toEqual([]);
    const { text } = await h.http.get('/metrics');
    expect(text).toMatch(/bridge_dials_total\{mode="ami",outcome="retried"\} [1-9]/);
    expect(text).toMatch(/bridge_dials_total\{mode="ami",outcome="failed"\} 1/);
  });
});

describe('click-to-call end to end: no DIAL_MODE', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness(webhookEnv({}));
    await subscribeBridge(h);
  });
  afterAll(async () => {
    await h.close();
  });

  it('the click is not dialled (event ignored, counted), but the number dialled by hand finishes the portal call once', async () => {
    const phone = freshNumber();
    const callsBefore = (await sandboxCalls(h.sandbox)).length;
    const portalCallId = await click(h, phone);
    const { body } = await eventually(async () => {
      const response = await h.http
        .get('/v1/admin/portal-events')
        .set('Authorization', `Bearer ${ADMIN_TOKEN}`);
      const events = (response.body as { events: { state: string; data: Record<string, unknown> }[] }).events;
      return events.some((event) => event.data.CALL_ID === portalCallId && event.state !== 'pending')
        ? response
        : undefined;
    });
    const [event] = (
      body as { events: { state: string; lastError: string; data: Record<string, unknown> }[] }
    ).events.filter((item) => item.data.CALL_ID === portalCallId);
    expect(event).toMatchObject({ state: 'ignored', lastError: 'click-to-call is off (no DIAL_MODE)' });
    const report = await asteriskCdr(h, phone);
    await expectFinishedOnce(h, portalCallId, report, 'click', callsBefore);
  });
});
