import { AmiDouble, CallDescription } from '../support/ami-double';
import { eventually, Harness, startHarness } from '../support/bridge-harness';
import { CdrDatabase, CdrWriter } from '../support/cdr-database';
import { EslDouble } from '../support/esl-double';
import { callStatus, finishedOnPortal } from '../pbx-adapters/adapter-support';
import { callsByExternalId } from '../support/sandbox-inspect';

/**
 * Lines (docs/API.md "Lines") of calls the bridge follows itself, end to end over real TCP: the AMI double
 * (FreePBX: `__FROM_DID` and the `FROM_DID` channel variable inbound, `CDR(outbound_cnum)` and the caller
 * ID presented to the trunk outbound), the event socket double (the a-leg's number dialled inbound, the
 * gateway leg's caller ID outbound) and the CDR ledger in a real MariaDB (`did`, `outbound_cnum`). Each call's
 * line reaches the sandbox portal's register as LINE_NUMBER, and its LINES rule applies. DEFAULT_COUNTRY DE.
 */
jest.setTimeout(120_000);

const LINES = JSON.stringify([
  { number: '+49 30 9900001', crmCreate: false },
  { number: '+49 30 9900002', report: false },
]);

interface Registered {
  LINE_NUMBER: string;
  CRM_CREATE: boolean;
}

const registered = async (h: Harness, callId: string) =>
  (await finishedOnPortal(h, callId)) as unknown as Registered;

/** Waits until the bridge stored the call as `ignored` (its line's `report: false`). */
const ignored = (h: Harness, callId: string) =>
  eventually(async () => {
    const { body } = await callStatus(h, callId);
    return body.state === 'ignored' ? body : undefined;
  });

const following = (h: Harness, ledger = false) =>
  eventually(async () => {
    const { body } = await h.http.get('/health/ready');
    const follow = (body.details ?? body.info)?.pbxFollow;
    return (ledger ? follow?.ledger?.connected : follow?.connected) ? true : undefined;
  }, 30_000);

describe('lines of calls followed over AMI (FreePBX)', () => {
  let pbx: AmiDouble;
  let h: Harness;

  beforeAll(async () => {
    // channelvars=FROM_DID: the DID comes as a VarSet and in every later snapshot's ChanVariable.
    pbx = await AmiDouble.start(undefined, undefined, { channelVars: true });
    h = await startHarness({ PBX_EVENTS: 'ami', AMI_URL: pbx.url(), LINES, DELIVERY_MAX_BACKOFF_SEC: '1' });
    await following(h);
  });
  afterAll(async () => {
    await h.close();
    await pbx.close();
  });

  const inbound = (line: string, extra: Partial<CallDescription> = {}): CallDescription => ({
    kind: 'inbound',
    from: '+4915123400001',
    to: '101',
    answeredBy: '101',
    talk: 5,
    line,
    ...extra,
  });

  it('registers an inbound call on the DID it came in on (FROM_DID), an outbound one on the caller ID it presented', async () => {
    const call = pbx.play(inbound('0309900003'));
    await call.done;
    expect((await registered(h, call.linkedid)).LINE_NUMBER).toBe('+49309900003');
    const out = pbx.play({
      kind: 'outbound',
      from: '102',
      to: '+4930555001',
      answeredBy: 'yes',
      line: '0309900004',
      talk: 3,
    });
    await out.done;
    expect((await registered(h, out.linkedid)).LINE_NUMBER).toBe('+49309900004');
  });

  it("applies the line's rule to a followed call: crmCreate false, report false", async () => {
    const noLead = pbx.play(inbound('0309900001', { from: '+4915123400002' }));
    await noLead.done;
    expect(await registered(h, noLead.linkedid)).toMatchObject({
      LINE_NUMBER: '+49309900001',
      CRM_CREATE: false,
    });
    const kept = pbx.play(inbound('0309900002', { from: '+4915123400003' }));
    await kept.done;
    expect(await ignored(h, kept.linkedid)).toMatchObject({ line: '+49309900002', nextStep: null });
    // A call followed after it reaches the portal: delivery went past the ignored one, which never did.
    const after = pbx.play(inbound('0309900003', { from: '+4915123400004' }));
    await after.done;
    await registered(h, after.linkedid);
    expect(await callsByExternalId(h.sandbox, kept.linkedid)).toEqual([]);
  });
});

describe('lines of calls followed over the event socket (FreeSWITCH)', () => {
  let pbx: EslDouble;
  let h: Harness;

  beforeAll(async () => {
    pbx = await EslDouble.start();
    h = await startHarness({ PBX_EVENTS: 'esl', ESL_URL: pbx.url(), LINES, DELIVERY_MAX_BACKOFF_SEC: '1' });
    await following(h);
  });
  afterAll(async () => {
    await h.close();
    await pbx.close();
  });

  it('registers an inbound call on the number dialled at the gateway, an outbound one on the caller ID presented', async () => {
    const call = pbx.play({
      kind: 'inbound',
      from: '+4915123400011',
      to: '101',
      answeredBy: '101',
      talk: 4,
      line: '0309900005',
    });
    await call.done;
    expect((await registered(h, call.callId)).LINE_NUMBER).toBe('+49309900005');
    const out = pbx.play({
      kind: 'outbound',
      from: '102',
      to: '+4930555002',
      answeredBy: 'yes',
      talk: 3,
      line: '0309900006',
    });
    await out.done;
    expect((await registered(h, out.callId)).LINE_NUMBER).toBe('+49309900006');
  });

  it("applies the line's rule to a followed call: crmCreate false", async () => {
    const call = pbx.play({
      kind: 'inbound',
      from: '+4915123400012',
      to: '101',
      answeredBy: '101',
      talk: 4,
      line: '+49309900001',
    });
    await call.done;
    expect(await registered(h, call.callId)).toMatchObject({
      LINE_NUMBER: '+49309900001',
      CRM_CREATE: false,
    });
  });
});

describe('lines of calls read from the CDR ledger (FreePBX cdr: did, outbound_cnum)', () => {
  let pbx: AmiDouble;
  let cdr: CdrDatabase;
  let h: Harness;

  beforeAll(async () => {
    pbx = await AmiDouble.start();
    cdr = await CdrDatabase.create('lines');
    new CdrWriter(cdr, pbx);
    h = await startHarness({ ASTERISK_CDR_URL: cdr.url, LINES, DELIVERY_MAX_BACKOFF_SEC: '1' });
    await following(h, true);
  });
  afterAll(async () => {
    await h.close();
    await pbx.close();
    await cdr.close();
  });

  it("registers each call on its row's did (inbound) or outbound_cnum (outbound); the line's rule applies", async () => {
    const calls = [
      pbx.play({
        kind: 'inbound',
        from: '+4915123400021',
        to: '101',
        answeredBy: '101',
        talk: 4,
        line: '0309900007',
      }),
      pbx.play({
        kind: 'outbound',
        from: '103',
        to: '+4930555003',
        answeredBy: 'yes',
        talk: 3,
        line: '0309900008',
      }),
      pbx.play({
        kind: 'inbound',
        from: '+4915123400022',
        to: '102',
        answeredBy: '102',
        talk: 4,
        line: '0309900001',
      }),
    ];
    await Promise.all(calls.map((call) => call.done));
    const [inboundCall, outboundCall, ruled] = calls.map((call) => call.linkedid);
    expect((await registered(h, inboundCall)).LINE_NUMBER).toBe('+49309900007');
    expect((await registered(h, outboundCall)).LINE_NUMBER).toBe('+49309900008');
    expect(await registered(h, ruled)).toMatchObject({ LINE_NUMBER: '+49309900001', CRM_CREATE: false });
  });
});
