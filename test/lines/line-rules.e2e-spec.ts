import axios from 'axios';
import { callsByExternalId, sandboxLeads } from '../support/sandbox-inspect';
import { ended, eventually, Harness, PBX_TOKEN, started, startHarness } from '../support/bridge-harness';
import { tasksOfCall } from '../tasks/task-support';

/**
 * Lines (docs/API.md "Lines") in webhook mode, end to end: events over HTTP into the bridge, each call's line and its
 * rule (LINES) on the sandbox portal's register over real HTTP.
 */
const LINES = [
  { number: '+49 30 1111111', name: 'Berlin ads', crmCreate: false },
  { number: '+49 30 2222222', crmSource: 'WEB' },
  { number: 'trunk-night', defaultUserId: 3 },
  { number: '+49 30 3333333', report: false },
  { number: '+49 30 4444444', missedCallTask: true },
];

interface SandboxRegister {
  CALL_ID: string;
  USER_ID: number;
  CRM_CREATE: boolean;
  CRM_SOURCE: string;
  LINE_NUMBER: string;
  CRM_CREATED_LEAD?: number | null;
  CRM_ENTITY_TYPE?: string;
  finished: unknown;
}

describe('lines: each call on its line, each line by its rule', () => {
  let h: Harness;
  let seq = 0;
  const newId = (prefix: string) => `${prefix}-${Date.now()}-${++seq}`;
  // A number the sandbox CRM does not know: a register that may create makes a lead for it.
  const unknownPhone = () => `+49 151 ${String(5000000 + ++seq).padStart(8, '0')}`;

  beforeAll(async () => {
    h = await startHarness({ LINES: JSON.stringify(LINES), B24_LINE_NUMBER: 'main-line' });
  });
  afterAll(async () => {
    await h.close();
  });

  const post = (body: unknown) =>
    h.http
      .post('/v1/calls/events')
      .set('Authorization', `Bearer ${PBX_TOKEN}`)
      .send(body as object);
  const status = async (callId: string) =>
    (await h.http.get(`/v1/calls/${encodeURIComponent(callId)}`).set('Authorization', `Bearer ${PBX_TOKEN}`))
      .body;
  const untilState = (callId: string, state: string) =>
    eventually(async () => {
      const body = await status(callId);
      return body.state === state ? body : undefined;
    });
  const registered = async (callId: string): Promise<SandboxRegister> =>
    eventually(async () => {
      const [call] = (await callsByExternalId(h.sandbox, callId)) as unknown as SandboxRegister[];
      return call?.finished ? call : undefined;
    });
  const deliver = async (
    callId: string,
    start: Record<string, unknown>,
    end: Record<string, unknown> = {},
  ) => {
    expect((await post([started(callId, start), ended(callId, end)])).status).toBe(202);
    await untilState(callId, 'finished');
    return registered(callId);
  };

  it("register carries the call's line as LINE_NUMBER, normalised like phoneNumber; the status shows it", async () => {
    const callId = newId('line');
    const call = await deliver(callId, { line: '030 2222222' });
    expect(call.LINE_NUMBER).toBe('+49302222222');
    expect((await status(callId)).line).toBe('+49302222222');
    const named = newId('named');
    expect((await deliver(named, { line: 'trunk_7.b' })).LINE_NUMBER).toBe('trunk_7.b');
  });

  it('a call without a line goes on B24_LINE_NUMBER, with the default rules', async () => {
    const callId = newId('noline');
    const call = await deliver(callId, { phoneNumber: unknownPhone() });
    expect(call).toMatchObject({ LINE_NUMBER: 'main-line', CRM_CREATE: true, CRM_SOURCE: '' });
    expect(call.CRM_CREATED_LEAD).toEqual(expect.any(Number));
  });

  it('crmCreate: false registers with CRM_CREATE=0: no lead for an unknown number, a known client still bound', async () => {
    const leadsBefore = (await sandboxLeads(h.sandbox)).length;
    const unknown = await deliver(newId('nocreate'), { line: '+49 30 1111111', phoneNumber: unknownPhone() });
    expect(unknown).toMatchObject({ LINE_NUMBER: '+49301111111', CRM_CREATE: false, CRM_CREATED_LEAD: null });
    expect(await sandboxLeads(h.sandbox)).toHaveLength(leadsBefore);
    // The harness's default number is a contact of the sandbox's CRM.
    const known = await deliver(newId('known'), { line: '+49 30 1111111' });
    expect(known).toMatchObject({ CRM_CREATE: false, CRM_ENTITY_TYPE: 'CONTACT' });
  });

  it("crmSource is sent as CRM_SOURCE and becomes the created lead's source", async () => {
    const call = await deliver(newId('source'), { line: '+49 30 2222222', phoneNumber: unknownPhone() });
    expect(call.CRM_SOURCE).toBe('WEB');
    const { data } = await axios.get(`${h.sandbox.webhookUrl}crm.lead.get`, {
      params: { id: call.CRM_CREATED_LEAD },
    });
    expect(data.result.SOURCE_ID).toBe('WEB');
  });

  it("defaultUserId takes the line's calls nobody took, before B24_DEFAULT_USER_ID", async () => {
    const onLine = await deliver(newId('nobody'), { line: 'trunk-night', extension: undefined });
    expect(onLine.USER_ID).toBe(3);
    const elsewhere = await deliver(newId('nobody-else'), { extension: undefined });
    expect(elsewhere.USER_ID).toBe(1);
  });

  it('report: false: stored and acknowledged, never sent to the portal; the status says ignored', async () => {
    const callId = newId('ignored');
    const answer = await post([
      started(callId, { line: '+49 30 3333333' }),
      ended(callId, { status: 'missed', durationSec: 0 }),
    ]);
    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({ accepted: 2, duplicates: 0 });
    const view = await untilState(callId, 'ignored');
    expect(view).toMatchObject({ line: '+49303333333', nextStep: null, attempts: 0 });
    // A call posted after it on another line reaches the portal: delivery went past the ignored one.
    await deliver(newId('after-ignored'), {});
    expect(await callsByExternalId(h.sandbox, callId)).toEqual([]);
    expect((await post([ended(callId, { status: 'missed', durationSec: 0 })])).body).toEqual({
      accepted: 0,
      duplicates: 1,
    });
  });

  it("missedCallTask turns MISSED_CALL_TASK on for the line's missed calls only", async () => {
    const onLine = newId('task-line');
    await deliver(onLine, { line: '+49 30 4444444' }, { status: 'missed', durationSec: 0 });
    const tasks = await eventually(async () => {
      const found = await tasksOfCall(h.sandbox, onLine);
      return found.length ? found : undefined;
    });
    expect(tasks).toHaveLength(1);
    const elsewhere = newId('task-none');
    await deliver(elsewhere, {}, { status: 'missed', durationSec: 0 });
    expect(await tasksOfCall(h.sandbox, elsewhere)).toEqual([]);
    expect((await status(elsewhere)).missedTask).toBeUndefined();
  });

  it('a bad line is a 400 naming line, and nothing of the body is stored', async () => {
    const callId = newId('bad');
    const answer = await post([started(newId('fine')), started(callId, { line: 'two words!' })]);
    expect(answer.status).toBe(400);
    expect(answer.body.errors).toEqual([
      {
        index: 1,
        field: 'line',
        problems: [
          'line must be a phone number, or 1-50 letters, digits, dots, pluses, dashes or underscores',
        ],
      },
    ]);
    expect((await h.http.get(`/v1/calls/${callId}`).set('Authorization', `Bearer ${PBX_TOKEN}`)).status).toBe(
      404,
    );
  });

  it('webhook mode never calls telephony.externalLine.* (the portal refuses it without an application)', async () => {
    const methods = [
      ...h.sandbox.requests().map((entry) => entry.method),
      ...h.sandbox.operatingRuns().map((run) => run.method),
    ];
    expect(methods.filter((method) => method.startsWith('telephony.externalline'))).toEqual([]);
  });
});
