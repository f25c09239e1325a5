import { AmiDouble, CallDescription, PlayingCall } from '../support/ami-double';
import { eventually, Harness, PBX_TOKEN, startHarness } from '../support/bridge-harness';
import { CdrDatabase, CdrWriter } from '../support/cdr-database';
import { callStatus, finishedOnPortal } from '../pbx-adapters/adapter-support';
import { callsByExternalId, SandboxCall } from '../support/sandbox-inspect';

/**
 * The CDR ledger (ASTERISK_CDR_URL) end to end: a real MariaDB holds a FreePBX-shaped `cdr` table written
 * as the AMI double's calls end (one row per dialled leg, when Party A hangs up); the bridge reads it with
 * a password user over TCP, and the sandbox portal shows what was delivered. Sandbox users: 2 = ext 101,
 * 3 = 102, 4 = 103.
 */
jest.setTimeout(120_000);

const inbound = (from: string, extra: Partial<CallDescription> = {}): CallDescription => ({
  kind: 'inbound',
  from,
  to: '101',
  answeredBy: '101',
  talk: 12,
  ...extra,
});

async function exactlyOnce(h: Harness, callId: string): Promise<SandboxCall> {
  const call = await finishedOnPortal(h, callId);
  expect(call.registerRequests).toBe(1);
  return call;
}

describe('the CDR ledger alone (ASTERISK_CDR_URL, no PBX_EVENTS)', () => {
  let pbx: AmiDouble;
  let cdr: CdrDatabase;
  let writer: CdrWriter;
  let h: Harness;

  beforeAll(async () => {
    pbx = await AmiDouble.start();
    cdr = await CdrDatabase.create('ledger_alone');
    writer = new CdrWriter(cdr, pbx);
    h = await startHarness({ ASTERISK_CDR_URL: cdr.url, DELIVERY_MAX_BACKOFF_SEC: '1' });
  });
  afterAll(async () => {
    await h.close();
    await pbx.close();
    await cdr.close();
  });

  const ledger = async () => {
    const { body } = await h.http.get('/health/ready');
    return (body.details ?? body.info).pbxFollow.ledger as Record<string, unknown>;
  };

  it('delivers answered, missed, busy, ring-group and outbound calls from the table, each once; internal calls never', async () => {
    await eventually(async () => ((await ledger()).connected ? true : undefined));
    const calls = [
      pbx.play(inbound('+4915111000001', { talk: 42 })),
      pbx.play(inbound('+4915111000002', { answeredBy: undefined, ring: 3 })),
      pbx.play(inbound('+4915111000003', { busy: true, answeredBy: undefined })),
      pbx.play(inbound('+4915111000004', { to: ['101', '102', '103'], answeredBy: '102', talk: 20 })),
      pbx.play({ kind: 'outbound', from: '103', to: '+4930123456', answeredBy: 'yes', talk: 7 }),
    ];
    const internal = pbx.play({ kind: 'internal', from: '101', to: '102', answeredBy: 'yes', talk: 5 });
    await Promise.all([...calls, internal].map((call) => call.done));
    await writer.flushed();

    const [answered, missed, busy, group, outbound] = await Promise.all(
      calls.map((call) => exactlyOnce(h, call.linkedid)),
    );
    expect(answered).toMatchObject({ TYPE: 2, USER_ID: 2, PHONE_NUMBER: '+4915111000001' });
    expect(answered.finished).toMatchObject({ DURATION: 42, STATUS_CODE: '200' });
    expect(missed.finished).toMatchObject({ DURATION: 0, STATUS_CODE: '304' });
    expect(busy.finished?.STATUS_CODE).toBe('486');
    expect(group).toMatchObject({ USER_ID: 3 });
    expect(group.finished).toMatchObject({ DURATION: 20, STATUS_CODE: '200' });
    expect(outbound).toMatchObject({ TYPE: 1, USER_ID: 4, PHONE_NUMBER: '+4930123456' });
    expect(outbound.finished).toMatchObject({ DURATION: 7, STATUS_CODE: '200' });

    // (f) the phone-to-phone call has rows too, and nothing of it reaches the bridge or the portal.
    await eventually(async () => ((await ledger()).rowsRead as number) >= writer.rowsWritten || undefined);
    expect((await callStatus(h, internal.linkedid)).status).toBe(404);
    expect(await callsByExternalId(h.sandbox, internal.linkedid)).toHaveLength(0);
    const status = await ledger();
    expect(status).toMatchObject({ callsTaken: 5, callsPending: 0, lastError: null });
    expect(status.position).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    expect(JSON.stringify(status)).not.toContain(new URL(cdr.url).password);
  });

  it("(d) a long call's row, landing after later calls' rows, is still taken", async () => {
    const long: PlayingCall = pbx.play(inbound('+4915111000010', { holdOpen: true, talk: 30 }));
    await long.answered;
    const later = [1, 2, 3].map((i) => pbx.play(inbound(`+491511100002${i}`, { talk: 3 })));
    await Promise.all(later.map((call) => call.done));
    await Promise.all(later.map((call) => exactlyOnce(h, call.linkedid)));
    long.hangUp();
    await long.done;
    const call = await exactlyOnce(h, long.linkedid);
    expect(call.finished).toMatchObject({ STATUS_CODE: '200' });
  });

  it('(e) a call posted by the CDR route and also in the ledger is registered once', async () => {
    const playing = pbx.play(inbound('+4915111000030', { talk: 9 }));
    await playing.done;
    // The dialplan's hang-up handler posts the same call (same linkedid) before the row is read.
    const posted = await h.http
      .post('/v1/pbx/asterisk')
      .set('Authorization', `Bearer ${PBX_TOKEN}`)
      .type('form')
      .send({
        linkedid: playing.linkedid,
        direction: 'inbound',
        src: '+4915111000030',
        dst: '101',
        disposition: 'ANSWERED',
        duration: '10',
        billsec: '9',
        start: cdr.localTime(Date.now() / 1000 - 10),
      });
    expect(posted.status).toBeLessThan(300);
    await writer.flushed();
    await exactlyOnce(h, playing.linkedid);
    await eventually(async () => ((await ledger()).rowsRead as number) >= writer.rowsWritten || undefined);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect((await callsByExternalId(h.sandbox, playing.linkedid))[0].registerRequests).toBe(1);
  });
});

describe('the ledger beside PBX_EVENTS=ami', () => {
  let pbx: AmiDouble;
  let cdr: CdrDatabase;
  let writer: CdrWriter;
  let h: Harness;

  beforeAll(async () => {
    pbx = await AmiDouble.start();
    cdr = await CdrDatabase.create('ledger_ami');
    writer = new CdrWriter(cdr, pbx);
    h = await startHarness({
      PBX_EVENTS: 'ami',
      AMI_URL: pbx.url(),
      ASTERISK_CDR_URL: cdr.url,
      DELIVERY_MAX_BACKOFF_SEC: '1',
    });
  });
  afterAll(async () => {
    await h.close();
    await pbx.close();
    await cdr.close();
  });

  const health = async () => {
    const { body } = await h.http.get('/health/ready');
    return (body.details ?? body.info).pbxFollow as Record<string, unknown> & {
      ledger: Record<string, unknown>;
    };
  };

  it('(a) AMI refused for 5 s while calls start and end: every outside call delivered once, from the ledger', async () => {
    await eventually(
      async () => ((await health()).connected && (await health()).ledger.connected) || undefined,
    );
    // (e) a followed call: AMI ends it, its rows come too, one register.
    const followed = pbx.play(inbound('+4915122000001', { talk: 4 }));
    await followed.done;
    await exactlyOnce(h, followed.linkedid);

    const live = pbx.play(inbound('+4915122000002', { holdOpen: true, talk: 6 }));
    await live.answered;
    await eventually(async () => ((await health()).callsLive === 1 ? true : undefined));
    await pbx.refuseFor(5000);
    live.hangUp();
    const unseen = [
      pbx.play(inbound('+4915122000003', { talk: 5 })),
      pbx.play(inbound('+4915122000004', { answeredBy: undefined, ring: 2 })),
      pbx.play({ kind: 'outbound', from: '102', to: '+4930555000', answeredBy: 'yes', talk: 3 }),
    ];
    const internal = pbx.play({ kind: 'internal', from: '101', to: '103', answeredBy: 'yes', talk: 2 });
    await Promise.all([live, ...unseen, internal].map((call) => call.done));
    expect(pbx.accepting).toBe(false);

    for (const call of [live, ...unseen]) await exactlyOnce(h, call.linkedid);
    await eventually(async () => ((await health()).connected ? true : undefined), 30_000);
    const status = await health();
    expect(status.possiblyLost).toBe(1);
    expect(status.possiblyLostResolvedBy).toBe('ledger');
    expect(status.ledger.callsTaken).toBeGreaterThanOrEqual(4);
    await eventually(async () => (status.ledger.rowsRead as number) >= writer.rowsWritten || undefined);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    for (const call of [followed, live, ...unseen]) {
      expect((await callsByExternalId(h.sandbox, call.linkedid))[0].registerRequests).toBe(1);
    }
    expect(await callsByExternalId(h.sandbox, internal.linkedid)).toHaveLength(0);
  });
});
