import { Harness, PBX_TOKEN, startHarness } from '../support/bridge-harness';
import { callsByExternalId } from '../support/sandbox-inspect';
import {
  basic,
  callStatus,
  finishedOnPortal,
  fixtureJson,
  fixtureText,
  namedFields,
} from './adapter-support';

type Cdr = { variables: Record<string, string>; callflow: { caller_profile: Record<string, unknown> }[] };

/** POST /v1/pbx/freeswitch: mod_json_cdr's records, in each of its encodings, to the portal over HTTP. */
describe('FreeSWITCH mod_json_cdr adapter', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({ PBX_TIME_ZONE: 'Europe/Berlin', PBX_BODY_LIMIT: '65536' });
  });
  afterAll(async () => {
    await h.close();
  });

  /** As mod_json_cdr posts: its `cred` is HTTP Basic, and it appends `?uuid=` to the URL. */
  const post = (body: string | object, type = 'application/json', uuid = 'x') =>
    h.http
      .post(`/v1/pbx/freeswitch?uuid=${uuid}`)
      .set('Authorization', basic('freeswitch'))
      .set('Content-Type', type)
      .send(typeof body === 'string' ? body : JSON.stringify(body));

  /** The busy outbound fixture as another call: a new uuid, a hang-up cause, talk time. */
  const outbound = (uuid: string, cause: string, billsec = 0): Cdr => {
    const cdr = fixtureJson<Cdr>('freeswitch/outbound-busy.json');
    Object.assign(cdr.variables, { uuid, call_uuid: uuid, hangup_cause: cause, billsec: String(billsec) });
    return cdr;
  };

  it('delivers an answered inbound a-leg (values URL-encoded) with its recording, and ignores its b-leg', async () => {
    const aLeg = fixtureJson<Cdr>('freeswitch/inbound-answered.a-leg.json');
    const bLeg = fixtureJson<Cdr>('freeswitch/inbound-answered.b-leg.json');
    const callId = aLeg.variables.uuid;

    const first = await post(aLeg, 'application/json', callId);
    expect(first.status).toBe(202);
    // An answered call: its call.answered (the leg last bridged to, 101) and its call.ended.
    expect(first.body).toEqual({ accepted: 2, duplicates: 0, callId });
    const second = await post(bLeg, 'application/json', bLeg.variables.uuid);
    expect(second.status).toBe(202);
    expect(second.body).toMatchObject({
      accepted: 0,
      duplicates: 0,
      ignored: expect.stringContaining('b-leg'),
    });

    const call = await finishedOnPortal(h, callId, true);
    expect(call).toMatchObject({
      PHONE_NUMBER: '+4930555010101',
      TYPE: 2,
      USER_ID: 2,
      SHOW: false,
      CALL_START_DATE: '2026-11-22T10:00:00+01:00',
    });
    expect(call.finished).toMatchObject({ DURATION: 121, STATUS_CODE: '200' });
    expect(call.records.map((record) => record.RECORD_URL)).toEqual([
      `https://pbx.example.com/recordings/2026/11/22/${callId}.wav`,
    ]);
    expect((await callStatus(h, bLeg.variables.uuid)).status).toBe(404);
    expect(await callsByExternalId(h.sandbox, bLeg.variables.uuid)).toHaveLength(0);
  });

  it('reports an inbound call only voicemail answered (a-leg answered, never bridged) as missed, no talk time', async () => {
    const cdr = fixtureJson<Cdr>('freeswitch/inbound-answered.a-leg.json');
    const callId = '0f7c4b9e-2d6a-4c1b-9a53-00000000vm01';
    for (const name of [
      'last_bridge_to',
      'bridge_channel',
      'bridge_uuid',
      'signal_bond',
      'bridge_stamp',
      'record_url',
    ]) {
      delete cdr.variables[name];
    }
    Object.assign(cdr.variables, {
      uuid: callId,
      call_uuid: callId,
      bridge_epoch: '0',
      last_app: 'voicemail',
      last_arg: 'default%20203.0.113.10%20101',
      current_application: 'voicemail',
      billsec: '35',
      hangup_cause: 'NORMAL_CLEARING',
    });
    const response = await post(cdr, 'application/json', callId);
    expect(response.status).toBe(202);
    expect(response.body).toEqual({ accepted: 1, duplicates: 0, callId });
    const call = await finishedOnPortal(h, callId);
    expect(call).toMatchObject({ TYPE: 2, USER_ID: 2, PHONE_NUMBER: '+4930555010101' });
    expect(call.finished).toMatchObject({ DURATION: 0, STATUS_CODE: '304' });
  });

  it('counts the same record posted again (a retry) as a duplicate: one call on the portal', async () => {
    const cdr = outbound('4a1b2c3d-0000-4a7b-8c9d-00000000dup1', 'NORMAL_CLEARING', 42);
    expect((await post(cdr)).body).toEqual({ accepted: 2, duplicates: 0, callId: cdr.variables.uuid });
    expect((await post(cdr)).body).toEqual({ accepted: 0, duplicates: 2, callId: cdr.variables.uuid });
    const call = await finishedOnPortal(h, cdr.variables.uuid);
    expect(call.registerRequests).toBe(1);
  });

  it('reads the encode=true form (cdr=…, values encoded twice): a missed inbound call', async () => {
    const response = await post(
      fixtureText('freeswitch/inbound-missed.encode-true.txt'),
      'application/x-www-form-urlencoded',
    );
    expect(response.status).toBe(202);
    const callId = '9c3e5a7b-1d2f-4b6c-8e0a-2c4e6a8b0d1f';
    expect(response.body).toEqual({ accepted: 1, duplicates: 0, callId });
    const call = await finishedOnPortal(h, callId);
    expect(call).toMatchObject({ PHONE_NUMBER: '+4930555030303', TYPE: 2, USER_ID: 4 });
    expect(call.finished).toMatchObject({ DURATION: 0, STATUS_CODE: '304' });
  });

  it('reads the encode=base64 form: an answered outbound call', async () => {
    const response = await post(
      fixtureText('freeswitch/outbound-answered.encode-base64.txt'),
      'application/x-www-form-base64-encoded',
    );
    expect(response.status).toBe(202);
    const call = await finishedOnPortal(h, '5b2c3d4e-6f7a-4b8c-9d0e-1f2a3b4c5d6e');
    expect(call).toMatchObject({ PHONE_NUMBER: '+4989555040404', TYPE: 1, USER_ID: 3 });
    expect(call.finished).toMatchObject({ DURATION: 83, STATUS_CODE: '200' });
  });

  it.each([
    ['USER_BUSY', '486'],
    ['NO_ANSWER', '304'],
    ['NO_USER_RESPONSE', '304'],
    ['ORIGINATOR_CANCEL', '603-S'],
    ['CALL_REJECTED', '603'],
    ['UNALLOCATED_NUMBER', 'OTHER'],
  ])('maps hangup_cause %s of an outbound call to STATUS_CODE %s', async (cause, code) => {
    const cdr = outbound(
      `4a1b2c3d-5e6f-4a7b-8c9d-${cause.toLowerCase().replace(/_/g, '').padEnd(12, '0').slice(0, 12)}`,
      cause,
    );
    expect((await post(cdr)).status).toBe(202);
    const call = await finishedOnPortal(h, cdr.variables.uuid);
    expect(call).toMatchObject({ TYPE: 1, PHONE_NUMBER: '+4940555020202', USER_ID: 3 });
    expect(call.finished?.STATUS_CODE).toBe(code);
    if (code === 'OTHER') expect(call.finished?.FAILED_REASON).toBe(cause);
  });

  it('acknowledges an internal call (bridged to a directory user) and stores nothing', async () => {
    const cdr = outbound('4a1b2c3d-5e6f-4a7b-8c9d-00000000loc1', 'NORMAL_CLEARING', 30);
    delete cdr.variables.call_direction;
    cdr.variables.dialed_user = '103';
    const response = await post(cdr);
    expect(response.status).toBe(202);
    expect(response.body).toMatchObject({
      accepted: 0,
      duplicates: 0,
      ignored: expect.stringContaining('internal'),
    });
    expect((await callStatus(h, cdr.variables.uuid)).status).toBe(404);
  });

  describe('malformed records: 400 naming the field, nothing stored', () => {
    it('names missing variables by their path', async () => {
      const cdr = outbound('4a1b2c3d-5e6f-4a7b-8c9d-00000000bad1', 'NORMAL_CLEARING');
      delete (cdr.variables as Record<string, string | undefined>).start_epoch;
      delete (cdr.variables as Record<string, string | undefined>).hangup_cause;
      const response = await post(cdr);
      expect(response.status).toBe(400);
      expect(namedFields(response.body).sort()).toEqual(['variables.hangup_cause', 'variables.start_epoch']);
      expect((await callStatus(h, cdr.variables.uuid)).status).toBe(404);
    });

    it('names a caller that is no phone number by the FreeSWITCH field it came from', async () => {
      const cdr = outbound('4a1b2c3d-5e6f-4a7b-8c9d-00000000bad2', 'NORMAL_CLEARING');
      cdr.variables.call_direction = 'inbound';
      cdr.callflow[0].caller_profile.caller_id_number = 'door-phone';
      const response = await post(cdr);
      expect(response.status).toBe(400);
      expect(response.body.errors).toEqual([
        expect.objectContaining({
          field: 'phoneNumber',
          pbxField: 'callflow[].caller_profile.caller_id_number',
        }),
      ]);
      expect((await callStatus(h, cdr.variables.uuid)).status).toBe(404);
    });

    it('rejects a form whose cdr is not JSON, JSON that does not parse, and a record that is no object', async () => {
      const form = await post('cdr=%7Bnot-json', 'application/x-www-form-urlencoded');
      expect(form.status).toBe(400);
      expect(namedFields(form.body)).toEqual(['cdr']);
      expect((await post('{"variables": ', 'application/json')).status).toBe(400);
      expect((await post('[1, 2]', 'application/json')).status).toBe(400);
      expect((await post('cdr=***', 'application/x-www-form-base64-encoded')).status).toBe(400);
    });

    it('415 for a content type mod_json_cdr does not post, 413 past PBX_BODY_LIMIT', async () => {
      expect((await post('hello', 'text/plain')).status).toBe(415);
      const big = outbound('4a1b2c3d-5e6f-4a7b-8c9d-00000000big1', 'NORMAL_CLEARING');
      big.variables.switch_r_sdp = 'v=0 '.repeat(20000);
      expect((await post(big)).status).toBe(413);
      expect((await callStatus(h, big.variables.uuid)).status).toBe(404);
    });
  });

  it('401 without the PBX token; Bearer works too', async () => {
    const cdr = outbound('4a1b2c3d-5e6f-4a7b-8c9d-00000000auth', 'NORMAL_CLEARING');
    const anonymous = await h.http.post('/v1/pbx/freeswitch').send(cdr);
    expect(anonymous.status).toBe(401);
    const bearer = await h.http
      .post('/v1/pbx/freeswitch')
      .set('Authorization', `Bearer ${PBX_TOKEN}`)
      .send(cdr);
    expect(bearer.status).toBe(202);
  });
});
