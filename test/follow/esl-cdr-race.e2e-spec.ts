import { EslCallDescription, EslDouble } from '../support/esl-double';
import { eventually, Harness, startHarness } from '../support/bridge-harness';
import { basic, callStatus, finishedOnPortal } from '../pbx-adapters/adapter-support';

/**
 * The event socket and mod_json_cdr report the same call (REAL-PBX.md §8): with the default json_cdr.conf
 * the a-leg's CDR is posted to `/v1/pbx/freeswitch` before CHANNEL_HANGUP_COMPLETE goes out, so the two
 * race. Whichever comes first must not win with less: the call ends answered, with its recording, once.
 * Sandbox users: 2 = ext 101.
 */
describe('the JSON CDR and the event socket racing for one FreeSWITCH call', () => {
  let pbx: EslDouble;
  let h: Harness;

  beforeAll(async () => {
    pbx = await EslDouble.start();
    h = await startHarness({
      PBX_EVENTS: 'esl',
      ESL_URL: pbx.url(),
      FREESWITCH_RECORDING_URL: 'https://pbx.example.com/rec/{file}',
      DELIVERY_MAX_BACKOFF_SEC: '1',
    });
    pbx.onCdr = async (cdr) => {
      // The socket first: the CDR waits until the bridge has ended the call from CHANNEL_HANGUP_COMPLETE.
      if (pbx.cdrAfterHangup) {
        await eventually(async () => {
          const { body } = await callStatus(h, cdr.variables.uuid);
          return body.state === 'finished' ? true : undefined;
        });
      }
      await h.http
        .post('/v1/pbx/freeswitch')
        .set('Authorization', basic('freeswitch'))
        .set('Content-Type', 'application/json')
        .send(JSON.stringify(cdr))
        .then((response) => expect(response.status).toBe(202));
    };
    await eventually(async () => {
      const { body } = await h.http.get('/health/ready');
      return (body.details ?? body.info).pbxFollow?.connected ? true : undefined;
    }, 30000);
  });
  afterAll(async () => {
    await h.close();
    await pbx.close();
  });

  const recorded = (call: Omit<EslCallDescription, 'kind' | 'to'>): EslCallDescription => ({
    kind: 'inbound' as const,
    to: '101',
    answeredBy: '101',
    ...call,
  });

  async function played(call: EslCallDescription, cdrAfterHangup: boolean) {
    pbx.cdrAfterHangup = cdrAfterHangup;
    const playing = pbx.play(call);
    await playing.done;
    const done = await finishedOnPortal(h, playing.callId, true);
    expect(done.registerRequests).toBe(1);
    return { ...done, callId: playing.callId };
  }

  it.each([
    ['the CDR first', false],
    ['the socket first', true],
  ])(
    '%s: answered and hung up within a second (billsec 0), a plain record_session: answered, with the recording',
    async (_order, cdrAfterHangup) => {
      const call = await played(
        recorded({ from: `+49151123450${cdrAfterHangup ? 11 : 10}`, quick: true, recording: 'plain' }),
        cdrAfterHangup,
      );
      expect(call.finished).toMatchObject({ USER_ID: 2, DURATION: 0, STATUS_CODE: '200' });
      expect(call.records.at(-1)?.RECORD_URL).toBe(`https://pbx.example.com/rec/${call.callId}.wav`);
    },
  );

  // Passes once the intake merges a second call.ended that adds what the first lacked (the core helper's part).
  it.each([
    ['the CDR first, without the recording (uuid_record is not in its app_log)', false],
    ['the socket first', true],
  ])('%s: the recording the socket saw still reaches the call', async (_order, cdrAfterHangup) => {
    const call = await played(
      recorded({ from: `+49151123450${cdrAfterHangup ? 13 : 12}`, talk: 25, recording: 'uuid_record' }),
      cdrAfterHangup,
    );
    expect(call.finished).toMatchObject({ USER_ID: 2, DURATION: 25, STATUS_CODE: '200' });
    expect(call.records.at(-1)?.RECORD_URL).toBe(`https://pbx.example.com/rec/${call.callId}.wav`);
  });
});
