import { AmiDouble, CallDescription, PlayingCall } from '../support/ami-double';
import { eventually, Harness, startHarness } from '../support/bridge-harness';
import { callStatus, finishedOnPortal } from '../pbx-adapters/adapter-support';
import { storedEvents } from '../support/stored-events';
import { testDatabaseUrl } from '../support/test-database';
import { RecordingServer, sha256, wavFile } from '../recordings/recording-server';

/**
 * PBX_EVENTS=ami against a FreePBX as real captures show it (REAL-PBX.md §8), over real TCP: manager debug
 * with events repeated by several manager sessions (backward SequenceNumbers), an event filter that lets no
 * Agent* event through, hangup handlers, `<unknown>` caller ids filled in later. Recordings are served by a
 * local web server in FreePBX's own layout (`monitor/YYYY/MM/DD/<CALLFILENAME>.wav`) and the sandbox portal
 * downloads each RECORD_URL. Sandbox users: 2 = ext 101, 3 = 102, 4 = 103.
 */
describe('following FreePBX over AMI as captured', () => {
  let pbx: AmiDouble;
  let recordings: RecordingServer;
  let h: Harness;
  const file = wavFile(24_000, 7);

  beforeAll(async () => {
    recordings = await RecordingServer.start();
    pbx = await AmiDouble.start(undefined, undefined, {
      managerDebug: true,
      repeatedEvents: true,
      agentEvents: false,
    });
    // The PBX's web server: every file MixMonitor writes, at its place under the monitor folder.
    pbx.observe((text) => {
      const path = /\r\nVariable: MIXMONITOR_FILENAME\r\nValue: \/var\/spool\/asterisk(\/monitor\/\S+)/.exec(
        text,
      )?.[1];
      // As the request names it: each segment URL-encoded (`+` of the caller's number is `%2B`).
      if (path) {
        recordings.serve(`/public${path.split('/').map(encodeURIComponent).join('/')}`, {
          file,
          type: 'audio/wav',
        });
      }
    });
    h = await startHarness(
      {
        PBX_EVENTS: 'ami',
        AMI_URL: pbx.url(),
        ASTERISK_RECORDING_URL: `${recordings.url}/public/monitor/{yyyy}/{mm}/{dd}/{file}`,
        DELIVERY_MAX_BACKOFF_SEC: '1',
      },
      { downloadRecordUrls: true },
    );
    await eventually(async () => {
      const { body } = await h.http.get('/health/ready');
      return (body.details ?? body.info)?.pbxFollow?.connected ? true : undefined;
    }, 30000);
  });
  afterAll(async () => {
    await h.close();
    await pbx.close();
    await recordings.close();
  });

  const portalCall = (callId: string) => h.sandbox.calls({ EXTERNAL_CALL_ID: callId })[0];
  const cardShownTo = (callId: string, users: number[]) =>
    eventually(async () => {
      const shown = [...(portalCall(callId)?.shownTo ?? [])].sort();
      return JSON.stringify(shown) === JSON.stringify(users) ? portalCall(callId) : undefined;
    });
  const settled = (callId: string) =>
    eventually(async () => {
      const { body } = await callStatus(h, callId);
      return body.state === 'finished' && body.nextStep === null ? portalCall(callId) : undefined;
    });

  /** Plays `call` with every round of ringing held until the portal shows its card to `rounds[i]`. */
  async function rungInRounds(call: CallDescription, rounds: number[][]): Promise<PlayingCall> {
    const playing = pbx.play({ ...call, holdRinging: true, holdEachRound: true });
    for (const users of rounds) {
      await cardShownTo(playing.linkedid, users);
      playing.pickUp();
    }
    await playing.done;
    return playing;
  }

  const laterStarts = async (callId: string) =>
    (await storedEvents(testDatabaseUrl(h.dir), callId)).filter(
      (event, i, all) =>
        event.event === 'call.started' && all.slice(0, i).some((e) => e.event === 'call.answered'),
    );

  it.each([
    ['a phone call (the customer channel dials the target)', {}],
    [
      'a queue call whose Local pair optimised away (BlindTransfer after the ;2 Hangup)',
      { queue: '400', localOptimization: true },
    ],
  ])(
    'blind transfer of %s: the target is shown the card while it rings, then finishes',
    async (_, variant) => {
      const playing = pbx.play({
        kind: 'inbound',
        from: '+4915112345701',
        to: 'queue' in variant ? ['101'] : '101',
        answeredBy: '101',
        talk: 20,
        transfer: { kind: 'blind', to: '102' },
        ...variant,
        holdRinging: true,
        holdEachRound: true,
      });
      await cardShownTo(playing.linkedid, [2]);
      playing.pickUp();
      // While 102 rings after the transfer, the call has a later start naming it.
      const later = await eventually(async () => {
        const starts = await laterStarts(playing.linkedid);
        return starts.length > 0 ? starts : undefined;
      });
      expect(later).toMatchObject([
        { extension: '102', direction: 'inbound', phoneNumber: '+4915112345701' },
      ]);
      // The card reaches it while it rings, beside the answerer's (hidden at the target's answer).
      await cardShownTo(playing.linkedid, [2, 3]);
      playing.pickUp();
      await playing.done;
      const done = await settled(playing.linkedid);
      expect(done).toMatchObject({ USER_ID: 2, registerRequests: 1, shownTo: [] });
      expect(done.finished).toMatchObject({ USER_ID: 3, STATUS_CODE: '200' });
    },
  );

  it('attended transfer (target changes Linkedid at its BridgeEnter, AttendedTransfer after the moves): finished by the target', async () => {
    const playing = await rungInRounds(
      {
        kind: 'inbound',
        from: '+4915112345702',
        to: ['101', '102'],
        answeredBy: '101',
        bridgeFirst: true,
        talk: 20,
        transfer: { kind: 'attended', to: '103' },
      },
      [[2, 3]],
    );
    const done = await settled(playing.linkedid);
    expect(done).toMatchObject({ registerRequests: 1, shownTo: [] });
    expect(done.finished).toMatchObject({ USER_ID: 4, STATUS_CODE: '200' });
    expect(done.cardLog.flatMap((change) => change.shown).sort()).toEqual([2, 3, 4]);
  });

  it.each([
    [
      'outbound (MixMonitor on the phone before the trunk is dialled)',
      { kind: 'outbound', from: '101', to: '+4930123457', answeredBy: 'y' },
    ],
    [
      'queue (no Agent* events behind the filter)',
      { kind: 'inbound', from: '+4915112345703', to: ['101', '102'], queue: '400', answeredBy: '102' },
    ],
  ] as [string, CallDescription][])(
    'recorded %s: the portal downloads the recording from its date folder',
    async (_, call) => {
      const playing = pbx.play({ ...call, recording: true, talk: 33 });
      await playing.done;
      const done = await finishedOnPortal(h, playing.linkedid, true);
      expect(done.finished).toMatchObject({ DURATION: 33, STATUS_CODE: '200' });
      expect(done.records).toEqual([
        expect.objectContaining({
          RECORD_URL: expect.stringMatching(/\/public\/monitor\/\d{4}\/\d{2}\/\d{2}\/(out|q)-.*\.wav$/),
          sha256: sha256(file),
          via: 'url',
        }),
      ]);
    },
  );

  // Passes once the intake accepts `anonymous` (SPEC §9, the core's part of issue 35).
  it.each(['masked', 'prohibited', 'anonymous'] as const)(
    'a withheld caller (%s) is reported as anonymous, bound to no CRM record',
    async (withheld) => {
      const playing = pbx.play({
        kind: 'inbound',
        from: '+31260010001',
        to: '101',
        answeredBy: '101',
        talk: 12,
        withheld,
      });
      await playing.done;
      const done = await finishedOnPortal(h, playing.linkedid);
      expect(done).toMatchObject({ PHONE_NUMBER: 'anonymous', USER_ID: 2 });
      expect(done.finished).toMatchObject({ DURATION: 12, STATUS_CODE: '200' });
    },
  );
});
