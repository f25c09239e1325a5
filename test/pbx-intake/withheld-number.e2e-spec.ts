import { eventually, Harness, PBX_TOKEN, startHarness } from '../support/bridge-harness';
import { sandboxLeads } from '../support/sandbox-inspect';
import { callStatus, inboundCall, tasksOfCall } from '../tasks/task-support';

/**
 * A call from a withheld number is still reported (SPEC §9): posted as `"phoneNumber": "anonymous"`,
 * registered with PHONE_NUMBER `anonymous` and CRM_CREATE=0 (no lead), bound to no CRM record even with
 * B24_BIND_CRM_ENTITY; its missed-call task goes to the call's employee, claims no number, and is never
 * completed by another withheld call. Any other text that is not a number stays a 400. Through HTTP into
 * the bridge and the sandbox portal's records of calls, leads and tasks (user 2 = ext 101).
 */
describe('PBX intake: a withheld number', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({
      DELIVERY_MAX_BACKOFF_SEC: '1',
      MISSED_CALL_TASK: '1',
      B24_BIND_CRM_ENTITY: '1',
    });
  });
  afterAll(async () => {
    await h.close();
  });

  const post = (events: unknown[]) =>
    h.http.post('/v1/calls/events').set('Authorization', `Bearer ${PBX_TOKEN}`).send(events);
  const portalCall = (callId: string) => h.sandbox.calls({ EXTERNAL_CALL_ID: callId })[0];

  it('"anonymous" is taken; any other text that is not a number is a 400 naming phoneNumber', async () => {
    const bad = await post(inboundCall(`withheld-bad-${Date.now()}`, 'restricted', 'missed'));
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([expect.objectContaining({ index: 0, field: 'phoneNumber' })]);
    const good = await post(inboundCall(`withheld-ok-${Date.now()}`, 'anonymous', 'answered'));
    expect(good.body).toEqual({ accepted: 2, duplicates: 0 });
  });

  it('a missed withheld call: registered without CRM, its task names no number; a later withheld call completes nothing', async () => {
    const leadsBefore = (await sandboxLeads(h.sandbox)).length;
    const missed = `withheld-missed-${Date.now()}`;
    await post(inboundCall(missed, 'anonymous', 'missed'));
    const status = await eventually(async () => {
      const current = await callStatus(h.url, missed);
      return current.missedTask?.state === 'created' ? current : undefined;
    });
    expect(status.crm).toMatchObject({ entityType: null, entityId: null, createdLead: null });
    expect(portalCall(missed)).toMatchObject({ PHONE_NUMBER: 'anonymous', CRM_CREATE: false, USER_ID: 2 });
    expect(portalCall(missed).finished).toMatchObject({ STATUS_CODE: '304' });
    expect((await sandboxLeads(h.sandbox)).length).toBe(leadsBefore);
    const [task] = await tasksOfCall(h.sandbox, missed);
    expect(task).toMatchObject({ title: 'Missed call from a withheld number', responsibleId: '2' });
    expect(task.ufCrmTask ?? []).toEqual([]);
    expect(task.description).toMatch(/^Inbound call from a withheld number, missed\./);
    expect(task.description).not.toMatch(/call back before/);

    // Another withheld caller, answered within the deadline, is nobody's callback.
    const other = `withheld-other-${Date.now()}`;
    const body = await post(
      inboundCall(other, 'anonymous', 'answered', {
        at: '2026-11-22T10:05:00+01:00',
        endAt: '2026-11-22T10:06:00+01:00',
      }),
    );
    expect(body.body).toEqual({ accepted: 2, duplicates: 0 });
    expect((await callStatus(h.url, missed)).missedTask).toMatchObject({
      state: 'created',
      calledBackBy: null,
    });
  });
});
