import { SandboxPortal } from '../../sandbox';
import { portalTimeShape, query, request } from './http';

const register = (extra: Record<string, unknown> = {}) =>
  `telephony.externalcall.register?${query({ USER_PHONE_INNER: '101', PHONE_NUMBER: '+49 40 1111111', TYPE: 2, CRM_CREATE: 0, ...extra })}`;

describe('sandbox portal: batch', () => {
  let portal: SandboxPortal;
  const batch = (body: unknown) => request(`${portal.webhookUrl}batch`, { json: body });

  beforeAll(async () => {
    portal = await SandboxPortal.start({
      seed: { webhooks: [{ userId: 1, code: 'sandbox0webhook0code', scopes: ['crm', 'telephony', 'user'] }] },
    });
  });
  afterAll(() => portal.close());
  beforeEach(() => portal.reset());

  it('runs labelled commands and answers every map, empty ones as []', async () => {
    const answer = await batch({
      halt: 0,
      cmd: { me: 'user.current', leads: 'crm.lead.list?select[]=TITLE' },
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      result: {
        result: {
          me: expect.objectContaining({ ID: '1', NAME: 'Admin' }),
          leads: [
            { ID: '1', TITLE: 'Website enquiry' },
            { ID: '2', TITLE: 'Trade fair contact' },
            { ID: '3', TITLE: 'Acme follow-up' },
          ],
        },
        result_error: [],
        result_total: { leads: 3 },
        result_next: [],
        result_time: { me: portalTimeShape, leads: portalTimeShape },
      },
      time: portalTimeShape,
    });
  });

  it('substitutes $result[label][FIELD] so register and finish of one call travel together', async () => {
    const answer = await batch({
      halt: 0,
      cmd: {
        reg: register({ EXTERNAL_CALL_ID: 'pbx-1' }),
        fin: 'telephony.externalcall.finish?CALL_ID=$result[reg][CALL_ID]&USER_ID=2&DURATION=42',
      },
    });
    expect(answer.status).toBe(200);
    const { result } = answer.body.result;
    expect(result.fin).toMatchObject({
      CALL_ID: result.reg.CALL_ID,
      CALL_DURATION: '42',
      CALL_FAILED_CODE: '200',
    });
    expect(portal.calls()).toEqual([
      expect.objectContaining({
        CALL_ID: result.reg.CALL_ID,
        finished: expect.objectContaining({ DURATION: 42 }),
      }),
    ]);
  });

  it('substitutes deeper references and whole results', async () => {
    const answer = await batch({
      halt: 0,
      cmd: {
        search: 'telephony.externalCall.searchCrmEntities?PHONE_NUMBER=%2B4915112345678',
        contact: 'crm.contact.get?id=$result[search][0][CRM_ENTITY_ID]',
        lead: 'crm.lead.add?fields[TITLE]=Batch%20lead',
        again: 'crm.lead.get?id=$result[lead]',
      },
    });
    expect(answer.body.result.result_error).toEqual([]);
    expect(answer.body.result.result.contact).toMatchObject({ ID: '1', NAME: 'Max' });
    expect(answer.body.result.result.again).toMatchObject({
      ID: String(answer.body.result.result.lead),
      TITLE: 'Batch lead',
    });
  });

  it('fails a command whose reference points at a failed or missing result, and runs the rest with halt=0', async () => {
    const answer = await batch({
      halt: 0,
      cmd: {
        reg: register({ TYPE: 9 }),
        fin: 'telephony.externalcall.finish?CALL_ID=$result[reg][CALL_ID]&USER_ID=2&DURATION=1',
        ghost: 'crm.lead.get?id=$result[nowhere][ID]',
        me: 'user.current',
      },
    });
    expect(answer.status).toBe(200);
    expect(answer.body.result.result).toEqual({ me: expect.objectContaining({ ID: '1' }) });
    expect(answer.body.result.result_error).toEqual({
      reg: { error: '', error_description: 'Unknown TYPE' },
      fin: {
        error: 'INVALID_ARGUMENT',
        error_description:
          "Batch reference $result[reg][CALL_ID] cannot be resolved: command 'reg' has no such result",
      },
      ghost: {
        error: 'INVALID_ARGUMENT',
        error_description:
          "Batch reference $result[nowhere][ID] cannot be resolved: command 'nowhere' has no such result",
      },
    });
  });

  it('stops at the first error with halt=1', async () => {
    const answer = await batch({
      halt: 1,
      cmd: { first: 'user.current', broken: 'crm.lead.get?id=999', last: 'user.current' },
    });
    expect(answer.body.result.result).toEqual({ first: expect.objectContaining({ ID: '1' }) });
    expect(answer.body.result.result_error).toEqual({
      broken: { error: '', error_description: 'Not found' },
    });
  });

  it('accepts a form-encoded batch with cmd[label]=method?query', async () => {
    const form = query({
      halt: 0,
      cmd: { reg: register({ EXTERNAL_CALL_ID: 'form-1' }), me: 'user.current' },
    });
    const answer = await request(`${portal.webhookUrl}batch.json`, { form });
    expect(answer.status).toBe(200);
    expect(answer.body.result.result.reg.CALL_ID).toMatch(/^externalCall\.[0-9a-f]{32}\.\d+$/);
    expect(portal.calls()[0]).toMatchObject({
      EXTERNAL_CALL_ID: 'form-1',
      USER_ID: 2,
      PHONE_NUMBER: '+49 40 1111111',
    });
  });

  it('rejects more than 50 commands with 400 and runs none of them', async () => {
    const cmd = Object.fromEntries(
      Array.from({ length: 51 }, (_, i) => [`c${i}`, register({ EXTERNAL_CALL_ID: `x${i}` })]),
    );
    const answer = await batch({ halt: 0, cmd });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      error: 'ERROR_BATCH_LENGTH_EXCEEDED',
      error_description: 'Max batch length exceeded',
    });
    expect(portal.calls()).toHaveLength(0);
  });

  it('does not nest batches, and reports unknown methods and missing rights per command', async () => {
    const answer = await batch({
      halt: 0,
      cmd: { inner: 'batch?cmd[a]=user.current', nope: 'no.such.method', task: 'tasks.task.list' },
    });
    expect(answer.body.result.result).toEqual([]);
    expect(answer.body.result.result_error).toEqual({
      inner: {
        error: 'ERROR_BATCH_METHOD_NOT_ALLOWED',
        error_description: 'Method is not allowed for batch usage',
      },
      nope: { error: 'ERROR_METHOD_NOT_FOUND', error_description: 'Method not found!' },
      task: {
        error: 'insufficient_scope',
        error_description: 'The request requires higher privileges than provided by the webhook token',
      },
    });
  });

  it('answers numeric labels as lists, as the PHP portal does', async () => {
    const answer = await batch({ halt: 0, cmd: ['user.current', 'profile'] });
    expect(answer.body.result.result).toEqual([
      expect.objectContaining({ ID: '1' }),
      expect.objectContaining({ ID: '1' }),
    ]);
    expect(answer.body.result.result_error).toEqual([]);
  });

  it('answers an empty batch with empty maps', async () => {
    const answer = await batch({ halt: 0, cmd: {} });
    expect(answer.body.result).toEqual({
      result: [],
      result_error: [],
      result_total: [],
      result_next: [],
      result_time: [],
    });
  });
});
