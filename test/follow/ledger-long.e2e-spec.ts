import { AmiDouble, CallDescription, PlayingCall } from '../support/ami-double';
import { eventually, Harness, startHarness } from '../support/bridge-harness';
import { CdrDatabase, CdrWriter } from '../support/cdr-database';
import { finishedOnPortal } from '../pbx-adapters/adapter-support';
import { SandboxCall } from '../support/sandbox-inspect';

/**
 * The ledger beside PBX_EVENTS=ami for the calls whose CDR rows come apart (REAL-PBX.md §3, §8): each Party
 * A's rows are written when that channel hangs up, so a queue member who gave up has its row long before the
 * caller's, and an employee who transfers an outbound call has the call's originating row written at the
 * transfer. Each call loses its AMI connection while it runs and ends while nobody listens: only the real
 * MariaDB table tells how it ended. Minutes of talk run on the PBX double's virtual clock, which the
 * CdrWriter turns into one PBX clock. Sandbox users: 2 = ext 101, 3 = 102, 4 = 103.
 */
jest.setTimeout(180_000);

type Ledger = { rowsRead: number; callsPending: number; callsTaken: number; connected: boolean };

async function startFollowing(
  name: string,
  zone = 'UTC',
  offsetSec = 0,
): Promise<{ pbx: AmiDouble; cdr: CdrDatabase; writer: CdrWriter; h: Harness }> {
  const pbx = await AmiDouble.start();
  const cdr = await CdrDatabase.create(name, zone);
  const writer = new CdrWriter(cdr, pbx, { offsetSec });
  const h = await startHarness({
    PBX_EVENTS: 'ami',
    AMI_URL: pbx.url(),
    ASTERISK_CDR_URL: cdr.url,
    PBX_TIME_ZONE: zone,
    DELIVERY_MAX_BACKOFF_SEC: '1',
  });
  return { pbx, cdr, writer, h };
}

const health = async (h: Harness) => {
  const { body } = await h.http.get('/health/ready');
  return (body.details ?? body.info).pbxFollow as {
    connected: boolean;
    callsLive: number;
    ledger: Ledger;
  };
};

/** Plays `call` once the bridge follows the PBX and reads its table: the call is seen from its start. */
async function playFollowed(h: Harness, pbx: AmiDouble, call: CallDescription): Promise<PlayingCall> {
  await eventually(async () => {
    const state = await health(h);
    return state.connected && state.ledger.connected ? true : undefined;
  });
  return pbx.play(call);
}

/** Followed until answered, then the Manager connection is lost for the rest of the call. */
async function followedThenLost(h: Harness, pbx: AmiDouble, call: PlayingCall): Promise<void> {
  await call.answered;
  await eventually(async () => ((await health(h)).callsLive >= 1 ? true : undefined));
  await pbx.refuse();
}

/** Ends the call while AMI is down, then lets AMI back: the ledger alone knows how it ended. */
async function endWhileLost(
  h: Harness,
  pbx: AmiDouble,
  writer: CdrWriter,
  call: PlayingCall,
): Promise<SandboxCall & { finished: { USER_ID?: number } }> {
  call.hangUp();
  await call.done;
  await writer.flushed();
  await pbx.accept();
  const onPortal = await finishedOnPortal(h, call.linkedid);
  expect(onPortal.registerRequests).toBe(1);
  return onPortal as SandboxCall & { finished: { USER_ID?: number } };
}

const rowsIn = (h: Harness, writer: CdrWriter) =>
  eventually(async () => ((await health(h)).ledger.rowsRead >= writer.rowsWritten ? true : undefined));

describe('the ledger across a lost AMI connection: calls whose rows come apart', () => {
  let pbx: AmiDouble;
  let cdr: CdrDatabase;
  let writer: CdrWriter;
  let h: Harness;

  beforeAll(async () => {
    ({ pbx, cdr, writer, h } = await startFollowing('ledger_long'));
  });
  afterAll(async () => {
    await h.close();
    await pbx.close();
    await cdr.close();
  });

  it('a queue call of over a minute: the member who gave up wrote its row 20 s in; answered by 102, its talk time', async () => {
    const description: CallDescription = {
      kind: 'inbound',
      from: '+4915155000001',
      to: ['101', '102'],
      queue: '400',
      answeredBy: '102',
      ring: 20,
      talk: 40,
      holdOpen: true,
    };
    const call = await playFollowed(h, pbx, description);
    await followedThenLost(h, pbx, call);
    // 101's Local ;2 row is in the table and read; the caller talks on past the minute it waits unanswered.
    await writer.flushed();
    expect(writer.rowsWritten).toBe(1);
    await rowsIn(h, writer);
    await eventually(async () => ((await health(h)).ledger.callsPending === 0 ? true : undefined), 90_000);

    const onPortal = await endWhileLost(h, pbx, writer, call);
    // Registered once, live (for 101 ringing or 102 answering: whoever the register found); finished by 102.
    expect(onPortal).toMatchObject({ PHONE_NUMBER: '+4915155000001' });
    // Talk time from the agent's answer, not the queue's answer of the caller (the Queue rows' billsec).
    expect(onPortal.finished).toMatchObject({ STATUS_CODE: '200', DURATION: 40, USER_ID: 3 });
  });

  it('an outbound call blind-transferred after 5 minutes of talk: the rows before and after the transfer', async () => {
    const call = await playFollowed(h, pbx, {
      kind: 'outbound',
      from: '103',
      to: '+4930551000',
      answeredBy: 'yes',
      talkBeforeTransfer: 300,
      transfer: { kind: 'blind', to: '102' },
      talk: 120,
      holdOpen: true,
    });
    await followedThenLost(h, pbx, call);
    // The employee's phone hung up at the transfer: the call's originating row is in, the customer talks on.
    await eventually(async () => (writer.rowsWritten >= 1 ? true : undefined));
    await writer.flushed();
    await rowsIn(h, writer);
    await new Promise((resolve) => setTimeout(resolve, 5000));

    const onPortal = await endWhileLost(h, pbx, writer, call);
    expect(onPortal).toMatchObject({ TYPE: 1, PHONE_NUMBER: '+4930551000' });
    // Talk time as the rows tell it (the CDR's whole seconds): 300 s before the transfer, the target's
    // ringing and 120 s after; both rows count.
    expect(onPortal.finished).toMatchObject({ STATUS_CODE: '200', USER_ID: 3 });
    const talk = await cdr.talkSec(call.linkedid);
    expect(onPortal.finished.DURATION).toBe(talk);
    expect(talk).toBeGreaterThan(420);
  });

  it("an attended transfer whose target takes the call's Linkedid: the target's rows belong to the call", async () => {
    const call = await playFollowed(h, pbx, {
      kind: 'outbound',
      from: '103',
      to: '+4930552000',
      answeredBy: 'yes',
      talkBeforeTransfer: 180,
      transfer: { kind: 'attended', to: '101' },
      talk: 60,
      holdOpen: true,
    });
    await followedThenLost(h, pbx, call);
    // The originating row and the consultation's (its own Linkedid, phone to phone) land at the transfer.
    await eventually(async () => (writer.rowsWritten >= 2 ? true : undefined));
    await writer.flushed();
    await rowsIn(h, writer);
    await new Promise((resolve) => setTimeout(resolve, 5000));

    const onPortal = await endWhileLost(h, pbx, writer, call);
    expect(onPortal).toMatchObject({ TYPE: 1, PHONE_NUMBER: '+4930552000' });
    expect(onPortal.finished).toMatchObject({ STATUS_CODE: '200', USER_ID: 2 });
    // As the rows tell it: 180 s, the consultation (3.2 s ringing, 5 s talk), 60 s after the swap.
    const talk = await cdr.talkSec(call.linkedid);
    expect(onPortal.finished.DURATION).toBe(talk);
    expect(talk).toBeGreaterThan(240);
  });
});

describe.each([
  ['10 minutes behind', 'ledger_behind', -600],
  ['10 minutes ahead of', 'ledger_ahead', 600],
])("the ledger with a PBX clock %s the bridge's (calldate in PBX local time)", (_, name, offsetSec) => {
  let pbx: AmiDouble;
  let cdr: CdrDatabase;
  let writer: CdrWriter;
  let h: Harness;

  beforeAll(async () => {
    ({ pbx, cdr, writer, h } = await startFollowing(name, 'Europe/Berlin', offsetSec));
  });
  afterAll(async () => {
    await h.close();
    await pbx.close();
    await cdr.close();
  });

  it('a call that ended while AMI was lost is read from the table, its talk time from the CDR alone', async () => {
    const call = await playFollowed(h, pbx, {
      kind: 'inbound',
      from: '+4915155000009',
      to: '101',
      answeredBy: '101',
      talk: 75,
      holdOpen: true,
    });
    await followedThenLost(h, pbx, call);
    const onPortal = await endWhileLost(h, pbx, writer, call);
    expect(onPortal).toMatchObject({ USER_ID: 2, PHONE_NUMBER: '+4915155000009' });
    expect(onPortal.finished).toMatchObject({ STATUS_CODE: '200', DURATION: 75 });
  });
});
