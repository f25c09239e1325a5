import { PortalRuntime } from '../../src/tenancy/portal-runtime';
import axios from 'axios';
import { PortalClick } from '../../src/clicks/click';
import { CallStore } from '../../src/store/call-store';
import { eventually, Harness, PBX_TOKEN, startHarness } from '../support/bridge-harness';
import { callsByExternalId, sandboxCalls, SandboxCall } from '../support/sandbox-inspect';
import { basic, callStatus, fixtureForm, fixtureJson } from '../pbx-adapters/adapter-support';

type Cdr = { variables: Record<string, string> };

/**
 * Click-to-call (docs/API.md), real HTTP into the bridge and from it to the sandbox portal: the portal
 * registered the call when the employee clicked (here: the sandbox's own telephony.externalcall.register);
 * the PBX's report of it, tied by CRM_CALL_ID / crm_call_id / crmCallId or by the stored click, finishes
 * that CALL_ID once and registers nothing. Sandbox users: 2 = ext 101, 3 = 102, 4 = 103.
 */
describe('click-to-call: the PBX report finishes the portal call', () => {
  let h: Harness;
  let seq = 0;

  beforeAll(async () => {
    h = await startHarness({ DIAL_MATCH_SEC: '60', PBX_TIME_ZONE: 'Europe/Berlin' });
    await h.app.get(PortalRuntime).directory.whenLoaded();
  });
  afterAll(async () => {
    await h.close();
  });

  /** As the portal does for a click: registers the call (outbound) for the employee, card shown to them. */
  async function portalRegisters(userId: number, phone: string): Promise<string> {
    const { data } = await axios.post(`${h.sandbox.webhookUrl}telephony.externalcall.register`, {
      USER_ID: userId,
      PHONE_NUMBER: phone,
      TYPE: 1,
      SHOW: 1,
      CRM_CREATE: 0,
    });
    return (data as { result: { CALL_ID: string } }).result.CALL_ID;
  }

  const portalCall = async (callId: string): Promise<SandboxCall> =>
    (await sandboxCalls(h.sandbox)).find((call) => call.CALL_ID === callId)!;

  const finished = (portalCallId: string, withRecording = false) =>
    eventually(async () => {
      const call = await portalCall(portalCallId);
      return call?.finished && (!withRecording || call.records.length > 0) ? call : undefined;
    });

  const settled = (callId: string) =>
    eventually(async () => {
      const { body } = await callStatus(h, callId);
      return body.nextStep === null && (body.state === 'finished' || body.state === 'failed')
        ? body
        : undefined;
    });

  const postEvents = (events: object[]) =>
    h.http.post('/v1/calls/events').set('Authorization', `Bearer ${PBX_TOKEN}`).send(events);

  const number = () => `+4922155${String(500000 + ++seq * 7).padStart(6, '0')}`;

  it('an Asterisk CDR with CRM_CALL_ID finishes that CALL_ID once, with the answerer, and attaches the recording', async () => {
    const phone = number();
    const portalCallId = await portalRegisters(3, phone);
    const linkedid = `1795400000.${++seq}`;
    const form = fixtureForm('asterisk/outbound-no-answer.txt');
    form.set('linkedid', linkedid);
    form.set('uniqueid', linkedid);
    form.set('dst', phone);
    form.set('disposition', 'ANSWERED');
    form.set('billsec', '42');
    form.set('duration', '50');
    form.set('recording', `https://pbx.example.com/rec/${linkedid}.wav`);
    form.set('CRM_CALL_ID', portalCallId);
    const response = await h.http
      .post('/v1/pbx/asterisk?tz=Europe/Berlin')
      .set('Authorization', basic('asterisk'))
      .set('Content-Type', 'application/x-www-form-urlencoded')
      .send(form.toString());
    expect(response.status).toBe(202);

    const call = await finished(portalCallId, true);
    expect(call.finished).toMatchObject({ USER_ID: 3, DURATION: 42, STATUS_CODE: '200' });
    expect(call.registerRequests).toBe(1);
    expect(call.records.map((record) => record.RECORD_URL)).toEqual([
      `https://pbx.example.com/rec/${linkedid}.wav`,
    ]);
    expect(await callsByExternalId(h.sandbox, linkedid)).toHaveLength(0);
    const status = await settled(linkedid);
    expect(status).toMatchObject({
      state: 'finished',
      crm: { callId: portalCallId },
      clickToCall: { portalCallId, matchedBy: 'crmCallId' },
      recording: 'attached',
    });
  });

  it('native events with crmCallId: never registered, finished once', async () => {
    const phone = number();
    const portalCallId = await portalRegisters(2, phone);
    const callId = `native-click-${Date.now()}`;
    const at = new Date().toISOString();
    expect(
      (
        await postEvents([
          {
            event: 'call.started',
            callId,
            direction: 'outbound',
            phoneNumber: phone,
            extension: '101',
            at,
            crmCallId: portalCallId,
          },
          { event: 'call.answered', callId, extension: '101', at },
          { event: 'call.ended', callId, at, durationSec: 17, status: 'answered', crmCallId: portalCallId },
        ])
      ).status,
    ).toBe(202);
    const call = await finished(portalCallId);
    expect(call.finished).toMatchObject({ USER_ID: 2, DURATION: 17, STATUS_CODE: '200' });
    expect(call.registerRequests).toBe(1);
    expect(await callsByExternalId(h.sandbox, callId)).toHaveLength(0);
  });

  it('a malformed crmCallId is a 400 naming the field', async () => {
    const response = await postEvents([
      {
        event: 'call.ended',
        callId: 'bad-crm',
        at: new Date().toISOString(),
        status: 'failed',
        crmCallId: 'not a call id',
      },
    ]);
    expect(response.status).toBe(400);
    expect(JSON.stringify(response.body)).toContain('crmCallId');
  });

  it('a FreeSWITCH CDR with variables.crm_call_id finishes that CALL_ID', async () => {
    const portalCallId = await portalRegisters(3, '+4940555020202');
    const cdr = fixtureJson<Cdr>('freeswitch/outbound-busy.json');
    const uuid = `4a1b2c3d-0000-4a7b-8c9d-0000000c1c${String(++seq).padStart(2, '0')}`;
    Object.assign(cdr.variables, { uuid, call_uuid: uuid, crm_call_id: portalCallId });
    const response = await h.http
      .post(`/v1/pbx/freeswitch?uuid=${uuid}`)
      .set('Authorization', basic('freeswitch'))
      .set('Content-Type', 'application/json')
      .send(JSON.stringify(cdr));
    expect(response.status).toBe(202);
    const call = await finished(portalCallId);
    expect(call.finished).toMatchObject({ USER_ID: 3, STATUS_CODE: '486' });
    expect(call.registerRequests).toBe(1);
    expect(await callsByExternalId(h.sandbox, uuid)).toHaveLength(0);
    expect((await settled(uuid)).clickToCall).toEqual({ portalCallId, matchedBy: 'crmCallId' });
  });

  describe('a click published on the ClickBus', () => {
    const click = (portalCallId: string, phoneNumber: string, clickedAt = Date.now()): PortalClick => ({
      portalId: 'sandbox',
      kind: 'click',
      portalCallId,
      userId: 2,
      phoneNumber,
      clickedAt,
    });
    const outbound = (callId: string, phone: string, at = new Date()) => [
      {
        event: 'call.started',
        callId,
        direction: 'outbound',
        phoneNumber: phone,
        extension: '101',
        at: at.toISOString(),
      },
      {
        event: 'call.ended',
        callId,
        at: new Date(at.getTime() + 20_000).toISOString(),
        durationSec: 12,
        status: 'answered',
      },
    ];

    it('is stored once (a repeat changes nothing), and the next call from its extension to its number takes it', async () => {
      const phone = number();
      const portalCallId = await portalRegisters(2, phone);
      const bus = h.app.get(PortalRuntime).bus;
      expect(bus.subscribers).toContain('click-registry');
      await bus.publish(click(portalCallId, phone));
      await bus.publish(click(portalCallId, phone));
      expect(await h.app.get(CallStore).findClick('sandbox', portalCallId)).toMatchObject({
        userId: 2,
        phoneNumber: phone,
        matchedCallId: undefined,
      });

      const callId = `clicked-${Date.now()}`;
      expect((await postEvents(outbound(callId, phone))).status).toBe(202);
      const call = await finished(portalCallId);
      expect(call.finished).toMatchObject({ USER_ID: 2, DURATION: 12, STATUS_CODE: '200' });
      expect(call.registerRequests).toBe(1);
      expect(await callsByExternalId(h.sandbox, callId)).toHaveLength(0);
      expect((await settled(callId)).clickToCall).toEqual({ portalCallId, matchedBy: 'click' });
      expect((await h.app.get(CallStore).findClick('sandbox', portalCallId))?.matchedCallId).toBe(callId);

      // The click is taken: a second call to the same number is a call of its own.
      const again = `clicked-again-${Date.now()}`;
      await postEvents(outbound(again, phone));
      const [own] = await eventually(async () => {
        const calls = await callsByExternalId(h.sandbox, again);
        return calls[0]?.finished ? calls : undefined;
      });
      expect(own.CALL_ID).not.toBe(portalCallId);
      expect((await portalCall(portalCallId)).registerRequests).toBe(1);
    });

    it('a call to another number, or after DIAL_MATCH_SEC, is registered normally', async () => {
      const phone = number();
      const portalCallId = await portalRegisters(2, phone);
      await h.app.get(PortalRuntime).bus.publish(click(portalCallId, phone, Date.now() - 120_000));

      const late = `late-${Date.now()}`;
      const other = `other-number-${Date.now()}`;
      await postEvents([...outbound(late, phone), ...outbound(other, number())]);
      for (const callId of [late, other]) {
        const calls = await eventually(async () => {
          const found = await callsByExternalId(h.sandbox, callId);
          return found[0]?.finished ? found : undefined;
        });
        expect(calls).toHaveLength(1);
        expect(calls[0].CALL_ID).not.toBe(portalCallId);
        expect((await settled(callId)).clickToCall).toBeUndefined();
      }
      expect((await portalCall(portalCallId)).finished).toBeNull();
      expect((await h.app.get(CallStore).findClick('sandbox', portalCallId))?.matchedCallId).toBeUndefined();
    });
  });

  it("the dialer's dial-<CALL_ID> timeout finishes the portal call as failed, once; a late PBX report does not finish it again", async () => {
    const phone = number();
    const portalCallId = await portalRegisters(2, phone);
    await h.app.get(PortalRuntime).bus.publish({
      portalId: 'sandbox',
      kind: 'click',
      portalCallId,
      userId: 2,
      phoneNumber: phone,
      clickedAt: Date.now(),
    });
    const dialId = `dial-${portalCallId}`;
    const response = await postEvents([
      {
        event: 'call.ended',
        callId: dialId,
        at: new Date().toISOString(),
        durationSec: 0,
        status: 'failed',
        failedReason: 'The PBX did not start the call within DIAL_TIMEOUT_SEC',
        crmCallId: portalCallId,
      },
    ]);
    expect(response.body).toEqual({ accepted: 1, duplicates: 0 });
    expect(response.status).toBe(202);
    const call = await finished(portalCallId);
    expect(call.finished).toMatchObject({
      USER_ID: 2,
      STATUS_CODE: 'OTHER',
      FAILED_REASON: 'The PBX did not start the call within DIAL_TIMEOUT_SEC',
    });
    expect(call.registerRequests).toBe(1);
    expect(await callsByExternalId(h.sandbox, dialId)).toHaveLength(0);
    expect(await settled(dialId)).toMatchObject({ state: 'finished' });

    // The PBX's own report of the same CALL_ID after all: noted, never finished again, never registered.
    const late = `late-real-${Date.now()}`;
    const at = new Date().toISOString();
    await postEvents([
      {
        event: 'call.started',
        callId: late,
        direction: 'outbound',
        phoneNumber: phone,
        extension: '101',
        at,
        crmCallId: portalCallId,
      },
      { event: 'call.ended', callId: late, at, durationSec: 3, status: 'answered' },
    ]);
    const status = await settled(late);
    expect(status.clickToCall).toEqual({ portalCallId, matchedBy: 'crmCallId', finishedBy: dialId });
    expect(String(status.lastError)).toContain(`finished by call ${dialId}`);
    const after = await portalCall(portalCallId);
    expect(after.finished).toMatchObject({ STATUS_CODE: 'OTHER' });
    expect(after.registerRequests).toBe(1);
    expect(await callsByExternalId(h.sandbox, late)).toHaveLength(0);
  });
});
