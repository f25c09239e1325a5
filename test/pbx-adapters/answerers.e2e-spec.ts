import { eventually, Harness, PBX_TOKEN, startHarness } from '../support/bridge-harness';
import { basic, callStatus, fixtureJson, fixtureText } from './adapter-support';

/**
 * Ring groups, answerers, transfers and recordings through the PBX adapters (docs/API.md): each PBX's own
 * records over HTTP into the bridge, the sandbox portal over real HTTP, the real store (SQLite, or PostgreSQL
 * with TEST_DATABASE=postgres). Sandbox users: 2 = ext 101, 3 = 102, 4 = 103.
 */
describe('PBX adapters: ring groups, answerers, transfers', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({
      DELIVERY_MAX_BACKOFF_SEC: '1',
      PBX_TIME_ZONE: 'Europe/Berlin',
      YEASTAR_RECORDING_URL: 'https://recordings.pbx.example.com/yeastar/',
      ASTERISK_RECORDING_URL: 'https://pbx.example.com/monitor/{file}',
      FREESWITCH_RECORDING_URL: 'https://pbx.example.com/{path}',
    });
  });
  afterAll(async () => {
    await h.close();
  });

  const yeastar = (body: unknown) => h.http.post(`/v1/pbx/yeastar?token=${PBX_TOKEN}`).send(body as object);
  const asterisk = (form: string) =>
    h.http
      .post('/v1/pbx/asterisk')
      .set('Authorization', basic('asterisk'))
      .set('Content-Type', 'application/x-www-form-urlencoded')
      .send(form);
  const freeswitch = (cdr: unknown) =>
    h.http
      .post('/v1/pbx/freeswitch')
      .set('Authorization', basic('freeswitch'))
      .send(cdr as object);

  /** The portal's call once its card is open for exactly these users. */
  const cardOf = (callId: string, shownTo: number[]) =>
    eventually(async () => {
      const call = h.sandbox.calls({ EXTERNAL_CALL_ID: callId })[0];
      const sorted = [...(call?.shownTo ?? [])].sort();
      return call && JSON.stringify(sorted) === JSON.stringify(shownTo) ? call : undefined;
    });
  /** The portal's call once the bridge has nothing left to do for it. */
  const settled = async (callId: string, withRecording = false) => {
    await eventually(async () => {
      const { body } = await callStatus(h, callId);
      const done = body.state === 'finished' && body.nextStep === null;
      return done && (!withRecording || body.recording === 'attached') ? body : undefined;
    });
    const calls = h.sandbox.calls({ EXTERNAL_CALL_ID: callId });
    expect(calls).toHaveLength(1);
    return calls[0];
  };

  describe('Yeastar P-Series', () => {
    const callId = '1795352400.720';

    it('a ring group sees the card; the answer hides it for the others; finish names the answerer', async () => {
      const ringing = await yeastar(fixtureJson('yeastar/ring-group/30011-ringing.json'));
      expect(ringing.body).toEqual({ accepted: 1, duplicates: 0, callId });
      const shown = await cardOf(callId, [2, 3, 4]);
      expect(shown).toMatchObject({ USER_ID: 2, SHOW: true, TYPE: 2, PHONE_NUMBER: '+4915112345670' });

      // The state repeats the start (a duplicate) and adds 102's answer.
      const answered = await yeastar(fixtureJson('yeastar/ring-group/30011-answered-by-102.json'));
      expect(answered.body).toEqual({ accepted: 1, duplicates: 1, callId });
      await cardOf(callId, [3]);

      // 102 transfers the call to 103 (30013): its start names 103, new since the answer, and 103 answers.
      const transfer = await yeastar(fixtureJson('yeastar/ring-group/30013-transfer-to-103.json'));
      expect(transfer.body).toEqual({ accepted: 2, duplicates: 0, callId });
      await cardOf(callId, [4]);

      const cdr = await yeastar(fixtureJson('yeastar/ring-group/30012-cdr.json'));
      expect(cdr.body).toEqual({ accepted: 1, duplicates: 0, callId });
      const done = await settled(callId, true);
      expect(done.registerRequests).toBe(1);
      expect(done.finished).toMatchObject({ USER_ID: 4, DURATION: 83, STATUS_CODE: '200' });
      expect(done.shownTo).toEqual([]);
      // Every member saw the card appear and disappear; 103 saw it twice (rang, then took the transfer).
      for (const user of [2, 3]) {
        expect(done.cardLog.filter((change) => change.shown.includes(user))).toHaveLength(1);
        expect(done.cardLog.filter((change) => change.hidden.includes(user))).toHaveLength(1);
      }
      expect(done.cardLog.filter((change) => change.shown.includes(4)).length).toBeGreaterThanOrEqual(1);
      // The CDR's recording file name, as a URL through YEASTAR_RECORDING_URL.
      expect(done.records.map((record) => record.RECORD_URL)).toEqual([
        'https://recordings.pbx.example.com/yeastar/20261122130012-1795352400.720-015112345670-6300-Inbound.wav',
      ]);
    });

    it('a state posted again after the transfer (Yeastar repeats) changes nothing', async () => {
      const again = await yeastar(fixtureJson('yeastar/ring-group/30013-transfer-to-103.json'));
      expect(again.body).toEqual({ accepted: 0, duplicates: 2, callId });
    });
  });

  describe('Asterisk', () => {
    it('an answered ring group CDR: dstchannel names who answered, finish goes out with them', async () => {
      const callId = '1795356000.501';
      const response = await asterisk(fixtureText('asterisk/inbound-ring-group-answered.txt'));
      expect(response.status).toBe(202);
      expect(response.body).toEqual({ accepted: 2, duplicates: 0, callId });
      const done = await settled(callId, true);
      // Known only once it ended: registered without a card, for the answerer, and finished with them.
      expect(done).toMatchObject({ SHOW: false, USER_ID: 3, TYPE: 2, PHONE_NUMBER: '+4930555060611' });
      expect(done.finished).toMatchObject({ USER_ID: 3, DURATION: 83, STATUS_CODE: '200' });
      expect(done.cardLog).toEqual([]);
      expect(done.records.map((record) => record.RECORD_URL)).toEqual([
        'https://pbx.example.com/monitor/in-4930123456-030555060611-20261122-140000-1795356000.501.wav',
      ]);
    });
  });

  describe('Asterisk live events from the dialplan', () => {
    it('ringing before Dial() shows the ring group the card, answered moves it, the CDR finishes with the answerer', async () => {
      const callId = '1795356000.640';
      const form = (fields: Record<string, string>) =>
        asterisk(new URLSearchParams({ linkedid: callId, ...fields }).toString());
      const ring = await form({
        event: 'ringing',
        direction: 'inbound',
        src: '030555060640',
        dst: '4930123456',
        dial: 'PJSIP/101&PJSIP/102&PJSIP/103,30',
      });
      expect(ring.body).toEqual({ accepted: 1, duplicates: 0, callId });
      expect(await cardOf(callId, [2, 3, 4])).toMatchObject({ SHOW: true, USER_ID: 2 });

      const pickedUp = await form({ event: 'answered', dstchannel: 'PJSIP/103-0000002c' });
      expect(pickedUp.body).toEqual({ accepted: 1, duplicates: 0, callId });
      await cardOf(callId, [4]);

      // The hang-up handler's CDR names the same answerer: that answer is a duplicate.
      const cdr = await form({
        direction: 'inbound',
        src: '030555060640',
        dst: '4930123456',
        disposition: 'ANSWERED',
        duration: '60',
        billsec: '50',
        start: '2026-11-22 14:10:00',
        dstchannel: 'PJSIP/103-0000002c',
      });
      expect(cdr.body).toEqual({ accepted: 1, duplicates: 1, callId });
      const done = await settled(callId);
      expect(done.registerRequests).toBe(1);
      expect(done.finished).toMatchObject({ USER_ID: 4, DURATION: 50, STATUS_CODE: '200' });
      expect(done.shownTo).toEqual([]);
    });
  });

  describe('FreeSWITCH', () => {
    type Cdr = { variables: Record<string, string>; callflow: Record<string, unknown>[] };

    it('a ring group a-leg: the leg last bridged to answered; finish goes out with that member', async () => {
      const cdr = fixtureJson<Cdr>('freeswitch/inbound-answered.a-leg.json');
      const callId = '5e1f3a7c-9b2d-4c6e-8a0f-1b3d5f7a9c21';
      const member = (extension: string, uuid: string) => ({
        caller_id_number: '+4930555010101',
        destination_number: extension,
        uuid,
        context: 'default',
        chan_name: `sofia/internal/${extension}@192.0.2.2${extension.slice(-1)}:5060`,
      });
      Object.assign(cdr.variables, {
        uuid: callId,
        call_uuid: callId,
        last_bridge_to: 'b-leg-103',
        bridge_channel: 'sofia/internal/103%40192.0.2.23%3A5060',
        bridge_uuid: 'b-leg-103',
        record_url: '',
        record_path: '/var/lib/freeswitch/recordings/2026/11/22',
        record_name: `${callId}.wav`,
      });
      const profile = cdr.callflow[0].caller_profile as Record<string, unknown>;
      profile.originatee = {
        originatee_caller_profiles: [
          member('101', 'b-leg-101'),
          member('102', 'b-leg-102'),
          member('103', 'b-leg-103'),
        ],
      };
      const response = await freeswitch(cdr);
      expect(response.body).toEqual({ accepted: 2, duplicates: 0, callId });
      const done = await settled(callId, true);
      expect(done).toMatchObject({ SHOW: false, USER_ID: 4, PHONE_NUMBER: '+4930555010101' });
      expect(done.finished).toMatchObject({ USER_ID: 4, DURATION: 121, STATUS_CODE: '200' });
      expect(done.records.map((record) => record.RECORD_URL)).toEqual([
        `https://pbx.example.com/var/lib/freeswitch/recordings/2026/11/22/${callId}.wav`,
      ]);
    });
  });
});
