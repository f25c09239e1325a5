import { Socket } from 'node:net';
import { TcpDouble } from './tcp-double';

/**
 * An Asterisk 20 + FreePBX Manager Interface double over real TCP, for following calls (PBX_EVENTS=ami).
 * It speaks what real PBX output describes: the banner line, `Login` (then `Response: Success`, `Message:
 * Authentication accepted`; a wrong secret gets `Authentication failed` and the connection closed), `Ping`
 * (`Ping: Pong`, `Timestamp`), `CoreShowChannels` (list ack, one `CoreShowChannel` per live channel with the
 * full snapshot, `Application`, `Duration`, `BridgeId`, then `CoreShowChannelsComplete` with `ListItems`),
 * `Logoff`. Events are framed with CRLF and a blank line, `Event`, `Privilege`, `Timestamp`
 * (timestampevents=yes), then the channel snapshot in Asterisk's order (`Dest`-prefixed for the second
 * channel), `<unknown>` for empty caller fields.
 *
 * Calls are described in a few words (`inbound`, `ringGroup`, `queue`, `outbound`, `internal`, transfers,
 * recording) and played as the event sequences of real PBX output: parallel DialBegin from the caller's channel,
 * Local ;1/;2 pairs with AgentCalled/AgentConnect for queues, CANCEL before ANSWER in app_dial and after it in
 * app_queue, the caller answered after DialEnd ANSWER, BlindTransfer then the customer channel dialling, the
 * Linkedid rewrite on bridge entry after an attended transfer, voicemail answering the trunk. Uniqueids are
 * `<epoch>.<counter>` with one counter, as Asterisk numbers them.
 *
 * Event `Timestamp`s run on a virtual clock per call, so `talk: 90` makes a 90-second call without waiting;
 * each call's clock starts at the PBX's clock (`clockOffsetSec` from the bridge's), which `Ping` and
 * `CoreShowChannel`'s `Duration` also tell.
 *
 * What real captures show (REAL-PBX.md §8) and the double reproduces: the Linkedid of an attended transfer's
 * target changing at its BridgeEnter, `AttendedTransfer` after the bridge moves, `BlindTransfer` after the
 * Local `;2` Hangup and a new Local pair (queue members with Local optimisation), Hangup in the hangup
 * handler's Context/Exten, `<unknown>` caller ids filled in later, BridgeEnter before DialEnd, masked
 * withheld numbers, `Timestamp` only with timestampevents, repeated events with their old SequenceNumber
 * (several manager sessions, manager debug), no Agent* events behind an event filter, an Asterisk restart.
 */

/** How the PBX is set up (manager.conf, asterisk.conf) and where its clock is. */
export interface PbxSetup {
  /** The PBX's clock minus the bridge's, in seconds (a PBX 10 minutes behind: -600). */
  clockOffsetSec?: number;
  /** manager.conf timestampevents (default yes): a `Timestamp` on every event. */
  timestampEvents?: boolean;
  /** `manager debug`: `SequenceNumber`, `File`, `Line`, `Func` on every event. */
  managerDebug?: boolean;
  /** With managerDebug: every third event is written again after the next one (several sessions). */
  repeatedEvents?: boolean;
  /** An eventfilter (or read=) that lets no Agent* event through. */
  agentEvents?: boolean;
  /**
   * How many hex digits end a channel's name (Asterisk: 8, `PJSIP/101-0000001a`). More (zero-padded) make
   * the long names a hostile PBX may send: `PJSIP/101-00000…0001a`, still endpoint 101.
   */
  channelSuffixDigits?: number;
  /**
   * manager.conf `channelvars=FROM_DID` (FreePBX installs that list it; real PBX output): every channel
   * snapshot carries `ChanVariable: FROM_DID=<value>`, empty until the inbound route sets it, inherited by
   * the call's later channels.
   */
  channelVars?: boolean;
}

type Fields = [string, string][];

/** One live channel of the PBX. */
/** What a new channel is created with; no `linkedid`: it starts its own. */
interface NewChannel {
  name: string;
  state: number;
  callerNum: string;
  context: string;
  exten: string;
  linkedid?: string;
  clock: number;
}

interface Chan {
  name: string;
  state: number;
  callerNum: string;
  callerName: string;
  connectedNum: string;
  context: string;
  exten: string;
  uniqueid: string;
  linkedid: string;
  bridge: string;
  application: string;
  createdAt: number;
  /** With `channelVars`: the listed variables' values, shown as `ChanVariable` in every snapshot. */
  chanVars?: Record<string, string>;
}

const STATES: Record<number, string> = { 0: 'Down', 4: 'Ring', 5: 'Ringing', 6: 'Up' };

export interface CallDescription {
  /** inbound (trunk → phones/queue), outbound (phone → trunk), internal (phone → phone). */
  kind: 'inbound' | 'outbound' | 'internal';
  /** inbound: the customer's number; outbound/internal: the calling extension. */
  from: string;
  /** inbound: extensions rung (more than one: a ringall ring group); outbound: the number; internal: the ext. */
  to: string | string[];
  /** inbound: the queue number when `to` are queue members (Local ;1/;2 pairs, tried one after another). */
  queue?: string;
  /** Who picks up (inbound: an extension of `to`; outbound/internal: any truthy value). Unset: nobody. */
  answeredBy?: string;
  /**
   * The company's number (the call's line). inbound: the DID the caller dialled (the trunk channel's Exten,
   * FreePBX's `__FROM_DID`; default 5550100); outbound: the caller ID the outbound route presents (FreePBX's
   * outbound CID: `CALLERID(all)` set on the phone's channel, a NewCallerid, then `CDR(outbound_cnum)`, and
   * the trunk leg's ConnectedLineNum; default 5550100, the trunk's CID).
   */
  line?: string;
  /**
   * inbound ring group (`to` with several): how its phones ring. `ringall` (default): all at once.
   * `hunt`: one after another, each Dial() from the caller's channel ending NOANSWER before the next.
   * `memoryhunt`: the first, then the first two, … (each round a new Dial() of all so far). So phones start
   * ringing after the call's first DialBegin (the answerer picks up in the first round that rings them).
   */
  strategy?: 'ringall' | 'hunt' | 'memoryhunt';
  /**
   * inbound: when no phone of `to` answers, the call is forwarded to this outside number (follow-me or
   * call-forward to a mobile): `Local/<number>@from-internal/n` ;1/;2, the ;2 half dialling a second trunk
   * (real PBX output), which answers and talks `talk` seconds.
   */
  forwardTo?: string;
  /** Every dialled phone answers 486. */
  busy?: boolean;
  /** Nobody answers, then voicemail answers the trunk. */
  voicemail?: boolean;
  /** Talk time in seconds (virtual clock). */
  talk?: number;
  /** Ring time in seconds (virtual clock). */
  ring?: number;
  recording?: boolean;
  /**
   * inbound: a withheld caller. `anonymous`: the trunk says so; `masked`: the dialplan masks it (`+31260xxxxxx`)
   * with presentation prohibited in a NewCallerid; `prohibited`: the number stays, presentation prohibited.
   */
  withheld?: 'anonymous' | 'masked' | 'prohibited';
  /** The answering phone's BridgeEnter before the caller's DialEnd ANSWER (the order is not fixed). */
  bridgeFirst?: boolean;
  /**
   * queue: the member's Local pair optimises away (`LocalOptimization: Yes`): the phone is swapped into the
   * caller's bridge and both halves hang up. A blind transfer of such a call comes after the `;2` Hangup and
   * the customer's channel dials the target through a new Local pair.
   */
  localOptimization?: boolean;
  /**
   * After the answer, the employee transfers to this extension (inbound; a queue call: blind, with
   * localOptimization). With holdEachRound a blind transfer's target rings until its own `pickUp()`.
   */
  transfer?: { kind: 'blind' | 'attended'; to: string };
  /** With `transfer`: seconds of talk before it (virtual clock; default 10). */
  talkBeforeTransfer?: number;
  /** FreePBX 16 (macro-dial-one, …) or 17 (dialOne-with-exten, …) contexts. */
  freepbx?: 16 | 17;
  /** Real milliseconds between steps (default 5). */
  stepMs?: number;
  /** Keep the call up after its answer (after the transfer, with one) until `hangUp()` on the handle. */
  holdOpen?: boolean;
  /** Keep the phones ringing until `pickUp()` on the handle (then the call goes on as described). */
  holdRinging?: boolean;
  /**
   * With `holdRinging`: every round of phones (a queue's next member, a hunt group's next round) rings until
   * its own `pickUp()`, so a test can see the card reach the phones that ring later.
   */
  holdEachRound?: boolean;
}

export interface PlayingCall {
  /** The call's Linkedid (= callId). */
  linkedid: string;
  /** Resolves when the call is fully over. */
  done: Promise<void>;
  /** Resolves once the call is answered (or right away when nobody answers). */
  answered: Promise<void>;
  /** Ends a `holdOpen` call. */
  hangUp(): void;
  /** Lets a `holdRinging` call be answered (or time out). */
  pickUp(): void;
}

export class AmiDouble extends TcpDouble {
  /** Every action received, in order. */
  readonly actions: Record<string, string>[] = [];
  private readonly sessions = new Set<Socket>();
  private readonly channels = new Map<string, Chan>();
  private counter = 0;
  private bridgeCounter = 0;
  private hexCounter = 0x10;
  private listening = true;
  private readonly observers: ((text: string) => void)[] = [];
  private listenPort = 0;
  private sequence = 1000;
  private heldRepeat?: string;
  /** Logins accepted so far (reconnects count). */
  logins = 0;

  private constructor(
    private readonly user: string,
    private readonly secret: string,
    readonly setup: PbxSetup,
  ) {
    super();
  }

  static async start(user = 'crm-ro', secret = 's3cr3t-ami-pass', setup: PbxSetup = {}): Promise<AmiDouble> {
    const double = new AmiDouble(user, secret, setup);
    await double.listen(0);
    double.listenPort = double.port;
    return double;
  }

  url(secret = this.secret): string {
    return `tcp://${encodeURIComponent(this.user)}:${encodeURIComponent(secret)}@127.0.0.1:${this.listenPort}`;
  }

  /** Calls `observer` with every event text the PBX emits (listened to or not). */
  observe(observer: (text: string) => void): void {
    this.observers.push(observer);
  }

  /** Channels alive on the PBX now. */
  get liveChannels(): number {
    return this.channels.size;
  }

  /** Drops every manager session and refuses connections (closed port) for `ms`; calls go on meanwhile. */
  async refuseFor(ms: number): Promise<void> {
    this.listening = false;
    await this.close();
    setTimeout(() => {
      void this.listen(this.listenPort).then(() => (this.listening = true));
    }, ms);
  }

  /**
   * Asterisk restarts: every session and live channel is gone, the port refuses for `ms`, and Uniqueid
   * counters start again from 0 (a new epoch). Calls must be over first.
   */
  async restart(ms: number): Promise<void> {
    this.channels.clear();
    this.counter = 0;
    this.sequence = 1;
    this.heldRepeat = undefined;
    await this.refuseFor(ms);
  }

  /** The PBX's clock now (epoch seconds). */
  pbxNow(): number {
    return Date.now() / 1000 + (this.setup.clockOffsetSec ?? 0);
  }

  /** Drops every manager session and refuses connections until `accept()`; calls go on meanwhile. */
  async refuse(): Promise<void> {
    this.listening = false;
    await this.close();
  }

  async accept(): Promise<void> {
    await this.listen(this.listenPort);
    this.listening = true;
  }

  get accepting(): boolean {
    return this.listening;
  }

  protected serve(socket: Socket): void {
    socket.write('Asterisk Call Manager/9.0.0\r\n');
    let buffer = '';
    let loggedIn = false;
    socket.on('close', () => this.sessions.delete(socket));
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      let end: number;
      while ((end = buffer.indexOf('\r\n\r\n')) >= 0) {
        const text = buffer.slice(0, end);
        buffer = buffer.slice(end + 4);
        const action: Record<string, string> = {};
        for (const line of text.split('\r\n')) {
          const colon = line.indexOf(':');
          if (colon > 0) action[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
        }
        this.actions.push(action);
        const id = action.ActionID;
        const reply = (fields: Fields) =>
          socket.write(frame([...fields, ...(id ? ([['ActionID', id]] as Fields) : [])]));
        if (action.Action === 'Login') {
          if (action.Username === this.user && action.Secret === this.secret) {
            loggedIn = true;
            this.logins++;
            reply([
              ['Response', 'Success'],
              ['Message', 'Authentication accepted'],
            ]);
            if (!/^off|no$/i.test(action.Events ?? '')) this.sessions.add(socket);
          } else {
            setTimeout(() => {
              reply([
                ['Response', 'Error'],
                ['Message', 'Authentication failed'],
              ]);
              socket.end();
            }, 100);
          }
        } else if (action.Action === 'Ping') {
          reply([
            ['Response', 'Success'],
            ['Ping', 'Pong'],
            ['Timestamp', this.pbxNow().toFixed(6)],
          ]);
        } else if (!loggedIn) {
          reply([
            ['Response', 'Error'],
            ['Message', 'Permission denied'],
          ]);
        } else if (action.Action === 'CoreShowChannels') {
          const items = [...this.channels.values()];
          const ack: Fields = [
            ['Response', 'Success'],
            ['EventList', 'start'],
            ['Message', 'Channels will follow'],
          ];
          socket.write(frame([...ack, ['ActionID', id ?? '']]));
          for (const chan of items) {
            socket.write(
              frame([
                ['Event', 'CoreShowChannel'],
                ['ActionID', id ?? ''],
                ...snapshot(chan, ''),
                ['Application', chan.application],
                ['ApplicationData', ''],
                ['Duration', hms(Math.max(0, this.pbxNow() - chan.createdAt) * 1000)],
                ['BridgeId', chan.bridge],
              ]),
            );
          }
          socket.write(
            frame([
              ['Event', 'CoreShowChannelsComplete'],
              ['ActionID', id ?? ''],
              ['EventList', 'Complete'],
              ['ListItems', String(items.length)],
            ]),
          );
        } else if (action.Action === 'Logoff') {
          reply([
            ['Response', 'Goodbye'],
            ['Message', 'Thanks for all the fish.'],
          ]);
          socket.end();
        } else {
          reply([
            ['Response', 'Error'],
            ['Message', 'Invalid/unknown command'],
          ]);
        }
      }
    });
  }

  // ---- calls ------------------------------------------------------------------------------------------

  /** Plays one call; see CallDescription. */
  play(call: CallDescription): PlayingCall {
    let hangUp: () => void = () => undefined;
    const release = new Promise<void>((resolve) => (hangUp = resolve));
    let markAnswered: () => void = () => undefined;
    const answered = new Promise<void>((resolve) => (markAnswered = resolve));
    // One latch per round of ringing phones; without holdEachRound every round waits on the first.
    const latches: { promise: Promise<void>; open: () => void }[] = [];
    const latch = (round: number) => {
      while (latches.length <= round) {
        let open: () => void = () => undefined;
        const promise = new Promise<void>((resolve) => (open = resolve));
        latches.push({ promise, open });
      }
      return latches[round];
    };
    let picked = 0;
    const pickUp = () => latch(picked++).open();
    const ringing = (round: number) => latch(call.holdEachRound ? round : 0).promise;
    const script = new CallScript(
      this,
      call,
      call.holdOpen ? release : undefined,
      markAnswered,
      call.holdRinging ? ringing : undefined,
    );
    const done = script.run().finally(markAnswered);
    return { linkedid: script.linkedid, done, answered, hangUp: () => hangUp(), pickUp: () => pickUp() };
  }

  // ---- what CallScript uses ---------------------------------------------------------------------------

  /** A new channel (Newchannel emitted). */
  newChannel({ name, state, callerNum, context, exten, linkedid, clock }: NewChannel): Chan {
    const uniqueid = `${Math.floor(this.pbxNow())}.${this.counter++}`;
    const chan: Chan = {
      name: `${name}`,
      state,
      callerNum,
      callerName: '<unknown>',
      connectedNum: '<unknown>',
      context,
      exten,
      uniqueid,
      linkedid: linkedid ?? uniqueid,
      bridge: '',
      application: '',
      createdAt: clock,
    };
    if (this.setup.channelVars) {
      chan.chanVars = { FROM_DID: this.channels.get(chan.linkedid)?.chanVars?.FROM_DID ?? '' };
    }
    this.channels.set(uniqueid, chan);
    this.emit('Newchannel', 'call', clock, [...snapshot(chan, '')]);
    return chan;
  }

  hex(): string {
    return (this.hexCounter++).toString(16).padStart(this.setup.channelSuffixDigits ?? 8, '0');
  }

  bridgeId(): string {
    return `b${(this.bridgeCounter++).toString(16).padStart(7, '0')}-0000-4000-8000-000000000000`;
  }

  removeChannel(chan: Chan): void {
    this.channels.delete(chan.uniqueid);
  }

  /** Writes one event to every listening session, framed as Asterisk frames it. */
  emit(name: string, privilege: string, clock: number, fields: Fields): void {
    const setup = this.setup;
    if (setup.agentEvents === false && name.startsWith('Agent')) return;
    const header: Fields = [
      ['Event', name],
      ['Privilege', `${privilege},all`],
    ];
    if (setup.timestampEvents !== false) header.push(['Timestamp', clock.toFixed(6)]);
    const sequence = this.sequence++;
    if (setup.managerDebug) {
      header.push(
        ['SequenceNumber', String(sequence)],
        ['File', 'manager_channels.c'],
        ['Line', '734'],
        ['Func', 'channel_snapshot_update'],
      );
    }
    const text = frame([...header, ...fields]);
    this.write(text);
    // Another manager session's copy of an earlier event: its SequenceNumber goes backwards.
    if (this.heldRepeat) this.write(this.heldRepeat);
    this.heldRepeat = setup.managerDebug && setup.repeatedEvents && sequence % 3 === 0 ? text : undefined;
  }

  private write(text: string): void {
    for (const observer of this.observers) observer(text);
    for (const session of this.sessions) if (session.writable) session.write(text);
  }
}

/** One call's event sequence (real PBX output), on its own virtual clock. */
class CallScript {
  readonly linkedid: string;
  private clock: number;
  /** Rounds of ringing phones so far (each waits on its own latch with holdEachRound). */
  private round = 0;
  private readonly step: number;
  private readonly fpbx: 16 | 17;
  private readonly first: Chan;

  constructor(
    private readonly pbx: AmiDouble,
    private readonly call: CallDescription,
    private readonly release: Promise<void> | undefined,
    private readonly answered: () => void,
    private readonly ringing?: (round: number) => Promise<void>,
  ) {
    this.clock = pbx.pbxNow();
    this.step = call.stepMs ?? 5;
    this.fpbx = call.freepbx ?? 17;
    // The first channel is created at once, so the Linkedid is known to the test.
    if (call.kind === 'inbound') {
      this.first = pbx.newChannel({
        name: `PJSIP/trunk1-${pbx.hex()}`,
        state: 4,
        callerNum: call.withheld === 'anonymous' ? 'anonymous' : call.from,
        context: 'from-pstn',
        exten: this.did,
        clock: this.clock,
      });
    } else {
      const target = String(call.to);
      this.first = pbx.newChannel({
        name: `PJSIP/${call.from}-${pbx.hex()}`,
        state: 4,
        callerNum: call.from,
        context: 'from-internal',
        exten: target,
        clock: this.clock,
      });
    }
    this.linkedid = this.first.linkedid;
  }

  /** The DID an inbound call came in on, or the caller ID an outbound one presents. */
  private get did(): string {
    return this.call.line ?? '5550100';
  }

  async run(): Promise<void> {
    await this.pause();
    if (this.call.kind === 'inbound') this.withhold(this.first);
    if (this.call.kind === 'inbound') await (this.call.queue ? this.queue() : this.inbound());
    else if (this.call.kind === 'outbound') await this.outbound();
    else await this.internal();
  }

  // ---- flows ------------------------------------------------------------------------------------------

  private async inbound(): Promise<void> {
    const trunk = this.first;
    const c = this.call;
    const targets = [c.to].flat();
    const group = targets.length > 1;
    this.varSet(trunk, '__FROM_DID', this.did, 'ext-did-0001', this.did);
    this.newExten(trunk, group ? 'ext-group' : 'ext-local', group ? '600' : targets[0], 'Goto', '');
    if (c.recording) this.record(trunk, group ? 'rg' : 'in', group ? '600' : targets[0]);
    const [dialContext, dialExten] = this.dialContext(group ? '600' : targets[0]);
    const rounds =
      c.strategy === 'hunt'
        ? targets.map((ext) => [ext])
        : c.strategy === 'memoryhunt'
          ? targets.map((_, index) => targets.slice(0, index + 1))
          : [targets];
    let winner: Chan | undefined;
    let phones: Chan[] = [];
    for (const round of rounds) {
      phones = round.map((ext) =>
        this.pbx.newChannel({
          name: `PJSIP/${ext}-${this.pbx.hex()}`,
          state: 0,
          callerNum: ext,
          context: 'from-internal',
          exten: 's',
          linkedid: trunk.linkedid,
          clock: this.clock,
        }),
      );
      for (const phone of phones) {
        phone.connectedNum = trunk.callerNum;
        trunk.context = dialContext;
        trunk.exten = dialExten;
        trunk.application = 'Dial';
        this.dial('DialBegin', trunk, phone, [
          ['DialString', `${phone.callerNum}/sip:${phone.callerNum}@192.0.2.10:5060`],
        ]);
      }
      await this.pause();
      if (c.busy) {
        for (const phone of phones) {
          this.dial('DialEnd', trunk, phone, [['DialStatus', 'BUSY']]);
          this.hangup(phone, 17, 'User busy');
        }
        continue;
      }
      for (const phone of phones) {
        this.state(phone, 5);
        this.dial('DialState', trunk, phone, [['DialStatus', 'RINGING']]);
      }
      await this.pause(c.ring ?? 5);
      if (this.ringing) await this.ringing(this.round++);
      winner = phones.find((phone) => phone.callerNum === c.answeredBy);
      if (winner) break;
      for (const phone of phones) {
        this.dial('DialEnd', trunk, phone, [['DialStatus', 'NOANSWER']]);
        this.hangup(phone, 19, 'User alerting, no answer');
      }
    }
    if (!winner) {
      await (c.forwardTo ? this.forward(trunk, c.forwardTo) : this.afterNoAnswer(trunk));
      return;
    }
    this.state(winner, 6);
    // app_dial: the losers' CANCEL before the winner's ANSWER.
    for (const phone of phones) {
      if (phone === winner) continue;
      this.dial('DialEnd', trunk, phone, [['DialStatus', 'CANCEL']]);
      this.hangup(phone, 19, 'User alerting, no answer');
    }
    let bridge: string;
    if (c.bridgeFirst) {
      // The phone's BridgeEnter may come before the caller's DialEnd (real PBX output).
      bridge = this.pbx.bridgeId();
      this.pbx.emit('BridgeCreate', 'call', this.clock, bridgeSnapshot(bridge, 0));
      this.enterBridge(winner, bridge, 1);
      this.dial('DialEnd', trunk, winner, [['DialStatus', 'ANSWER']]);
      this.state(trunk, 6);
      this.enterBridge(trunk, bridge, 2);
    } else {
      this.dial('DialEnd', trunk, winner, [['DialStatus', 'ANSWER']]);
      this.state(trunk, 6);
      bridge = this.bridge([trunk, winner]);
    }
    this.answered();
    await this.talkAndTransfer(trunk, winner, bridge);
  }

  private async queue(): Promise<void> {
    const trunk = this.first;
    const c = this.call;
    const queue = c.queue as string;
    this.varSet(trunk, '__FROM_DID', this.did, 'ext-did-0001', this.did);
    this.newExten(trunk, 'ext-queues', queue, 'Answer', '');
    this.state(trunk, 6); // queue calls are answered before Queue()
    if (c.recording) this.record(trunk, 'q', queue);
    this.varSet(trunk, '__NODEST', queue, 'ext-queues', queue);
    trunk.application = 'Queue';
    this.pbx.emit('QueueCallerJoin', 'agent', this.clock, [
      ...snapshot(trunk, ''),
      ['Queue', queue],
      ['Position', '1'],
      ['Count', '1'],
    ]);
    for (const agent of [c.to].flat()) {
      const hex = this.pbx.hex();
      const one = this.pbx.newChannel({
        name: `Local/${agent}@from-queue-${hex};1`,
        state: 0,
        callerNum: trunk.callerNum,
        context: 'from-queue',
        exten: agent,
        linkedid: trunk.linkedid,
        clock: this.clock,
      });
      const two = this.pbx.newChannel({
        name: `Local/${agent}@from-queue-${hex};2`,
        state: 4,
        callerNum: trunk.callerNum,
        context: 'from-queue',
        exten: agent,
        linkedid: trunk.linkedid,
        clock: this.clock,
      });
      const iface = `Local/${agent}@from-queue/n`;
      const member: Fields = [
        ['Queue', queue],
        ['MemberName', `Agent ${agent}`],
        ['Interface', iface],
      ];
      this.pbx.emit('AgentCalled', 'agent', this.clock, [
        ...snapshot(trunk, ''),
        ...snapshot(one, 'Dest'),
        ...member,
      ]);
      this.dial('DialBegin', trunk, one, [['DialString', iface]]);
      this.pbx.emit('LocalBridge', 'call', this.clock, [
        ...snapshot(one, 'LocalOne'),
        ...snapshot(two, 'LocalTwo'),
        ['Context', 'from-queue'],
        ['Exten', agent],
        ['LocalOptimization', 'No'],
      ]);
      const [ctx, ext] = this.dialContext(agent);
      two.context = ctx;
      two.exten = ext;
      const phone = this.pbx.newChannel({
        name: `PJSIP/${agent}-${this.pbx.hex()}`,
        state: 0,
        callerNum: agent,
        context: 'from-internal',
        exten: 's',
        linkedid: trunk.linkedid,
        clock: this.clock,
      });
      this.dial('DialBegin', two, phone, [['DialString', `${agent}/sip:${agent}@192.0.2.10:5060`]]);
      await this.pause();
      this.state(phone, 5);
      this.dial('DialState', two, phone, [['DialStatus', 'RINGING']]);
      this.dial('DialState', trunk, one, [['DialStatus', 'RINGING']]);
      await this.pause(c.ring ?? 5);
      if (this.ringing) await this.ringing(this.round++);
      if (agent !== c.answeredBy) {
        this.pbx.emit('AgentRingNoAnswer', 'agent', this.clock, [
          ...snapshot(trunk, ''),
          ...snapshot(one, 'Dest'),
          ...member,
          ['RingTime', String((c.ring ?? 5) * 1000)],
        ]);
        this.dial('DialEnd', trunk, one, [['DialStatus', 'NOANSWER']]);
        this.dial('DialEnd', two, phone, [['DialStatus', 'CANCEL']]);
        this.hangup(phone, 16, 'Normal Clearing');
        this.hangup(two, 16, 'Normal Clearing');
        this.hangup(one, 16, 'Normal Clearing');
        continue;
      }
      this.state(phone, 6);
      this.dial('DialEnd', two, phone, [['DialStatus', 'ANSWER']]);
      this.state(two, 6);
      this.bridge([two, phone]);
      this.state(one, 6);
      this.dial('DialEnd', trunk, one, [['DialStatus', 'ANSWER']]);
      this.pbx.emit('QueueCallerLeave', 'agent', this.clock, [
        ...snapshot(trunk, ''),
        ['Queue', queue],
        ['Position', '1'],
        ['Count', '0'],
      ]);
      this.pbx.emit('AgentConnect', 'agent', this.clock, [
        ...snapshot(trunk, ''),
        ...snapshot(one, 'Dest'),
        ...member,
        ['HoldTime', '3'],
        ['RingTime', String(c.ring ?? 5)],
      ]);
      const callerBridge = this.bridge([trunk, one]);
      this.answered();
      if (c.localOptimization) {
        await this.optimisedAway(trunk, one, two, phone, callerBridge);
        return;
      }
      await this.talk();
      this.pbx.emit('AgentComplete', 'agent', this.clock, [
        ...snapshot(trunk, ''),
        ...snapshot(one, 'Dest'),
        ...member,
        ['HoldTime', '3'],
        ['TalkTime', String(c.talk ?? 30)],
        ['Reason', 'caller'],
      ]);
      for (const chan of [trunk, one, two, phone]) this.leaveBridge(chan);
      for (const chan of [trunk, one, two, phone]) this.hangup(chan, 16, 'Normal Clearing');
      return;
    }
    this.pbx.emit('QueueCallerAbandon', 'agent', this.clock, [
      ...snapshot(trunk, ''),
      ['Queue', queue],
      ['Position', '1'],
      ['OriginalPosition', '1'],
      ['HoldTime', '20'],
    ]);
    this.hangup(trunk, 16, 'Normal Clearing');
  }

  /**
   * The member's Local pair optimises away (real PBX output): the phone leaves the Local bridge and is
   * swapped into the caller's, the halves leave and hang up (`;2` first). A blind transfer comes after the
   * `;2` Hangup; the customer's channel then dials the target through a new Local pair (same Linkedid).
   */
  private async optimisedAway(trunk: Chan, one: Chan, two: Chan, phone: Chan, bridge: string): Promise<void> {
    const transfer = this.call.transfer;
    if (!transfer) await this.talk();
    else await this.pause(10);
    this.leaveBridge(phone);
    this.leaveBridge(one);
    phone.bridge = bridge;
    this.pbx.emit('BridgeEnter', 'call', this.clock, [
      ...bridgeSnapshot(bridge, 2),
      ...snapshot(phone, ''),
      ['SwapUniqueid', one.uniqueid],
    ]);
    this.leaveBridge(two);
    this.hangup(two, 16, 'Normal Clearing');
    if (transfer) {
      this.pbx.emit('BlindTransfer', 'call', this.clock, [
        ['Result', 'Success'],
        ...snapshot(phone, 'Transferer'),
        ...snapshot(trunk, 'Transferee'),
        ...bridgeSnapshot(bridge, 2),
        ['IsExternal', 'Yes'],
        ['Context', 'from-internal-xfer'],
        ['Extension', transfer.to],
      ]);
      this.leaveBridge(phone);
    }
    this.hangup(one, 16, 'Normal Clearing');
    if (!transfer) {
      this.leaveBridge(phone);
      this.leaveBridge(trunk);
      this.hangup(trunk, 16, 'Normal Clearing');
      this.hangup(phone, 16, 'Normal Clearing');
      return;
    }
    this.hangup(phone, 16, 'Normal Clearing');
    this.leaveBridge(trunk);
    trunk.context = 'from-internal-xfer';
    trunk.exten = transfer.to;
    const hex = this.pbx.hex();
    const local = (half: 1 | 2, state: number) =>
      this.pbx.newChannel({
        name: `Local/${transfer.to}@from-internal-xfer-${hex};${half}`,
        state,
        callerNum: '',
        context: 'from-internal-xfer',
        exten: transfer.to,
        linkedid: trunk.linkedid,
        clock: this.clock,
      });
    const xOne = local(1, 0);
    const xTwo = local(2, 4);
    this.pbx.emit('LocalBridge', 'call', this.clock, [
      ...snapshot(xOne, 'LocalOne'),
      ...snapshot(xTwo, 'LocalTwo'),
      ['Context', 'from-internal-xfer'],
      ['Exten', transfer.to],
      ['LocalOptimization', 'Yes'],
    ]);
    this.dial('DialBegin', trunk, xOne, [['DialString', `Local/${transfer.to}@from-internal-xfer`]]);
    const target = this.pbx.newChannel({
      name: `PJSIP/${transfer.to}-${this.pbx.hex()}`,
      state: 0,
      callerNum: '',
      context: 'from-internal',
      exten: 's',
      linkedid: trunk.linkedid,
      clock: this.clock,
    });
    target.callerNum = transfer.to;
    this.pbx.emit('NewCallerid', 'call', this.clock, [
      ...snapshot(target, ''),
      ['CID-CallingPres', '0 (Presentation Allowed, Not Screened)'],
    ]);
    this.dial('DialBegin', xTwo, target, [
      ['DialString', `${transfer.to}/sip:${transfer.to}@192.0.2.12:5060`],
    ]);
    await this.pause();
    this.state(target, 5);
    await this.pause(1.3);
    if (this.ringing) await this.ringing(this.round++);
    this.state(target, 6);
    this.dial('DialEnd', xTwo, target, [['DialStatus', 'ANSWER']]);
    this.bridge([xTwo, target]);
    this.dial('DialEnd', trunk, xOne, [['DialStatus', 'ANSWER']]);
    const final = this.bridge([trunk, xOne]);
    this.leaveBridge(target);
    this.leaveBridge(xOne);
    target.bridge = final;
    this.pbx.emit('BridgeEnter', 'call', this.clock, [
      ...bridgeSnapshot(final, 2),
      ...snapshot(target, ''),
      ['SwapUniqueid', xOne.uniqueid],
    ]);
    this.leaveBridge(xTwo);
    this.hangup(xOne, 16, 'Normal Clearing');
    this.hangup(xTwo, 16, 'Normal Clearing');
    await this.talk();
    this.leaveBridge(trunk);
    this.leaveBridge(target);
    this.hangup(trunk, 16, 'Normal Clearing');
    this.hangup(target, 16, 'Normal Clearing');
  }

  private async outbound(): Promise<void> {
    const phone = this.first;
    const c = this.call;
    const number = String(c.to);
    this.newExten(phone, 'outrt-1', number, 'Macro', 'user-callerid');
    if (c.recording) this.record(phone, 'out', number);
    // The outbound route's caller ID: set on the phone's channel (a NewCallerid), written to
    // CDR(outbound_cnum) (a function write: only the Newexten's AppData shows it), presented to the trunk.
    this.newExten(phone, 'macro-outbound-callerid', 's', 'Set', `CALLERID(all)=<${this.did}>`);
    phone.callerNum = this.did;
    this.pbx.emit('NewCallerid', 'call', this.clock, [
      ...snapshot(phone, ''),
      ['CID-CallingPres', '0 (Presentation Allowed, Not Screened)'],
    ]);
    this.newExten(phone, 'macro-dialout-trunk', 's', 'Set', `CDR(outbound_cnum)=${this.did}`);
    // The dialled leg's caller ids are `<unknown>` at first; the number comes in NewCallerid (real output).
    const trunk = this.pbx.newChannel({
      name: `PJSIP/trunk1-${this.pbx.hex()}`,
      state: 0,
      callerNum: '',
      context: 'from-pstn',
      exten: 's',
      linkedid: phone.linkedid,
      clock: this.clock,
    });
    trunk.callerNum = number;
    this.pbx.emit('NewCallerid', 'call', this.clock, [
      ...snapshot(trunk, ''),
      ['CID-CallingPres', '0 (Presentation Allowed, Not Screened)'],
    ]);
    trunk.connectedNum = phone.callerNum;
    const [ctx, ext] = this.fpbx === 17 ? ['trunk-dial-with-exten', number] : ['macro-dialout-trunk', 's'];
    phone.context = ctx;
    phone.exten = ext;
    phone.application = 'Dial';
    this.dial('DialBegin', phone, trunk, [['DialString', `${number}@trunk1`]]);
    await this.pause();
    this.state(trunk, 5);
    this.dial('DialState', phone, trunk, [['DialStatus', 'RINGING']]);
    await this.pause(c.ring ?? 5);
    if (this.ringing) await this.ringing(0);
    if (c.busy || !c.answeredBy) {
      this.dial('DialEnd', phone, trunk, [['DialStatus', c.busy ? 'BUSY' : 'NOANSWER']]);
      this.hangup(trunk, c.busy ? 17 : 19, c.busy ? 'User busy' : 'User alerting, no answer');
      this.hangup(phone, 16, 'Normal Clearing');
      return;
    }
    this.state(trunk, 6);
    this.dial('DialEnd', phone, trunk, [['DialStatus', 'ANSWER']]);
    this.state(phone, 6);
    const bridge = this.bridge([phone, trunk]);
    this.answered();
    await this.talkAndTransfer(trunk, phone, bridge);
  }

  private async internal(): Promise<void> {
    const caller = this.first;
    const c = this.call;
    const ext = String(c.to);
    const callee = this.pbx.newChannel({
      name: `PJSIP/${ext}-${this.pbx.hex()}`,
      state: 0,
      callerNum: ext,
      context: 'from-internal',
      exten: 's',
      linkedid: caller.linkedid,
      clock: this.clock,
    });
    const [ctx, dialExten] = this.dialContext(ext);
    caller.context = ctx;
    caller.exten = dialExten;
    this.dial('DialBegin', caller, callee, [['DialString', `${ext}/sip:${ext}@192.0.2.11:5060`]]);
    await this.pause();
    this.state(callee, 5);
    await this.pause(c.ring ?? 3);
    if (!c.answeredBy) {
      this.dial('DialEnd', caller, callee, [['DialStatus', 'NOANSWER']]);
      this.hangup(callee, 19, 'User alerting, no answer');
      this.hangup(caller, 16, 'Normal Clearing');
      return;
    }
    this.state(callee, 6);
    this.dial('DialEnd', caller, callee, [['DialStatus', 'ANSWER']]);
    this.state(caller, 6);
    this.bridge([caller, callee]);
    this.answered();
    await this.talk();
    for (const chan of [caller, callee]) this.leaveBridge(chan);
    this.hangup(callee, 16, 'Normal Clearing');
    this.hangup(caller, 16, 'Normal Clearing');
  }

  /** Nobody answered: voicemail answers the trunk (Up, no bridge), or the caller gives up. */
  /** Forwarded out: trunk ⇄ Local ;1 … ;2 ⇄ a second trunk leg to `number`, which answers; the caller hangs up. */
  private async forward(trunk: Chan, number: string): Promise<void> {
    const hex = this.pbx.hex();
    const local = (half: 1 | 2, state: number) =>
      this.pbx.newChannel({
        name: `Local/${number}@from-internal-${hex};${half}`,
        state,
        callerNum: trunk.callerNum,
        context: 'from-internal',
        exten: number,
        linkedid: trunk.linkedid,
        clock: this.clock,
      });
    const one = local(1, 0);
    const two = local(2, 4);
    this.dial('DialBegin', trunk, one, [['DialString', `Local/${number}@from-internal/n`]]);
    this.pbx.emit('LocalBridge', 'call', this.clock, [
      ...snapshot(one, 'LocalOne'),
      ...snapshot(two, 'LocalTwo'),
      ['Context', 'from-internal'],
      ['Exten', number],
      ['LocalOptimization', 'No'],
    ]);
    const [ctx, ext] = this.fpbx === 17 ? ['trunk-dial-with-exten', number] : ['macro-dialout-trunk', 's'];
    two.context = ctx;
    two.exten = ext;
    const out = this.pbx.newChannel({
      name: `PJSIP/trunk2-${this.pbx.hex()}`,
      state: 0,
      callerNum: number,
      context: 'from-pstn',
      exten: 's',
      linkedid: trunk.linkedid,
      clock: this.clock,
    });
    out.connectedNum = trunk.callerNum;
    this.dial('DialBegin', two, out, [['DialString', `${number}@trunk2`]]);
    await this.pause();
    this.state(out, 5);
    this.dial('DialState', two, out, [['DialStatus', 'RINGING']]);
    await this.pause(this.call.ring ?? 5);
    this.state(out, 6);
    this.dial('DialEnd', two, out, [['DialStatus', 'ANSWER']]);
    this.state(two, 6);
    this.bridge([two, out]);
    this.state(one, 6);
    this.dial('DialEnd', trunk, one, [['DialStatus', 'ANSWER']]);
    this.state(trunk, 6);
    this.bridge([trunk, one]);
    this.answered();
    await this.talk();
    for (const chan of [trunk, one, two, out]) this.leaveBridge(chan);
    for (const chan of [trunk, one, two, out]) this.hangup(chan, 16, 'Normal Clearing');
  }

  private async afterNoAnswer(trunk: Chan): Promise<void> {
    if (this.call.voicemail) {
      this.newExten(trunk, 'macro-vm', 's', 'VoiceMail', `${[this.call.to].flat()[0]}@default,u`);
      trunk.application = 'VoiceMail';
      this.state(trunk, 6);
      await this.pause(20);
    }
    this.hangup(trunk, 16, 'Normal Clearing');
  }

  /** Talk, transfer if asked, then the customer hangs up. `employee` is the employee leg bridged with `outside`. */
  private async talkAndTransfer(outside: Chan, employee: Chan, bridge: string): Promise<void> {
    const transfer = this.call.transfer;
    if (!transfer) {
      await this.talk();
      this.leaveBridge(outside);
      this.leaveBridge(employee);
      this.hangup(outside, 16, 'Normal Clearing');
      this.hangup(employee, 16, 'Normal Clearing');
      return;
    }
    await this.pause(this.call.talkBeforeTransfer ?? 10);
    let target: Chan;
    if (transfer.kind === 'blind') {
      this.pbx.emit('BlindTransfer', 'call', this.clock, [
        ['Result', 'Success'],
        ...snapshot(employee, 'Transferer'),
        ...snapshot(outside, 'Transferee'),
        ...bridgeSnapshot(bridge, 2),
        ['IsExternal', 'Yes'],
        ['Context', 'from-internal-xfer'],
        ['Extension', transfer.to],
      ]);
      this.leaveBridge(outside);
      this.leaveBridge(employee);
      this.hangup(employee, 16, 'Normal Clearing');
      target = this.pbx.newChannel({
        name: `PJSIP/${transfer.to}-${this.pbx.hex()}`,
        state: 0,
        callerNum: transfer.to,
        context: 'from-internal',
        exten: 's',
        linkedid: outside.linkedid,
        clock: this.clock,
      });
      outside.context = 'from-internal-xfer';
      outside.exten = transfer.to;
      this.dial('DialBegin', outside, target, [
        ['DialString', `${transfer.to}/sip:${transfer.to}@192.0.2.12:5060`],
      ]);
      await this.pause();
      this.state(target, 5);
      await this.pause(1.3);
      if (this.ringing) await this.ringing(this.round++);
      this.state(target, 6);
      this.dial('DialEnd', outside, target, [['DialStatus', 'ANSWER']]);
      this.bridge([outside, target]);
    } else {
      // Consultation call from the employee's phone: its own Linkedid (phone to phone) until the transfer.
      const consult = this.pbx.newChannel({
        name: `${employee.name.replace(/-[0-9a-f]+$/, '')}-${this.pbx.hex()}`,
        state: 4,
        callerNum: employee.callerNum,
        context: 'from-internal',
        exten: transfer.to,
        clock: this.clock,
      });
      target = this.pbx.newChannel({
        name: `PJSIP/${transfer.to}-${this.pbx.hex()}`,
        state: 0,
        callerNum: transfer.to,
        context: 'from-internal',
        exten: 's',
        linkedid: consult.linkedid,
        clock: this.clock,
      });
      this.dial('DialBegin', consult, target, [
        ['DialString', `${transfer.to}/sip:${transfer.to}@192.0.2.12:5060`],
      ]);
      await this.pause();
      this.state(target, 5);
      await this.pause(3);
      this.state(target, 6);
      this.dial('DialEnd', consult, target, [['DialStatus', 'ANSWER']]);
      this.state(consult, 6);
      const second = this.bridge([consult, target]);
      await this.pause(5);
      // The target is swapped into the customer's bridge and takes the customer's (older) Linkedid there;
      // AttendedTransfer describes the moves after they happened, then the transferer's legs hang up.
      this.leaveBridge(consult);
      this.leaveBridge(target);
      target.linkedid = outside.linkedid;
      target.bridge = bridge;
      this.pbx.emit('BridgeEnter', 'call', this.clock, [
        ...bridgeSnapshot(bridge, 2),
        ...snapshot(target, ''),
        ['SwapUniqueid', employee.uniqueid],
      ]);
      this.leaveBridge(employee);
      this.pbx.emit('AttendedTransfer', 'call', this.clock, [
        ['Result', 'Success'],
        ...snapshot(employee, 'OrigTransferer'),
        ...bridgeSnapshot(bridge, 2, 'Orig'),
        ...snapshot(consult, 'SecondTransferer'),
        ...bridgeSnapshot(second, 2, 'Second'),
        ...snapshot(outside, 'Transferee'),
        ...snapshot(target, 'TransferTarget'),
        ['IsExternal', 'Yes'],
        ['DestType', 'Bridge'],
        ['DestBridgeUniqueid', bridge],
      ]);
      this.hangup(employee, 16, 'Normal Clearing');
      this.hangup(consult, 16, 'Normal Clearing');
    }
    await this.talk();
    this.leaveBridge(outside);
    this.leaveBridge(target);
    this.hangup(outside, 16, 'Normal Clearing');
    this.hangup(target, 16, 'Normal Clearing');
  }

  private async talk(): Promise<void> {
    if (this.release) await this.release;
    await this.pause(this.call.talk ?? 30);
  }

  // ---- events -------------------------------------------------------------------------------------------

  /** Advances the virtual clock by `seconds` and waits one real step. */
  private async pause(seconds = 0.2): Promise<void> {
    this.clock += seconds;
    await new Promise((resolve) => setTimeout(resolve, this.step));
  }

  private dialContext(exten: string): [string, string] {
    return this.fpbx === 17 ? ['dialOne-with-exten', exten] : ['macro-dial-one', 's'];
  }

  private dial(name: 'DialBegin' | 'DialState' | 'DialEnd', from: Chan, to: Chan, extra: Fields): void {
    this.pbx.emit(name, 'call', this.clock, [...snapshot(from, ''), ...snapshot(to, 'Dest'), ...extra]);
  }

  private state(chan: Chan, state: number): void {
    chan.state = state;
    this.pbx.emit('Newstate', 'call', this.clock, snapshot(chan, ''));
  }

  private varSet(chan: Chan, variable: string, value: string, context: string, exten: string): void {
    chan.context = context;
    chan.exten = exten;
    const name = variable.replace(/^_+/, '');
    if (chan.chanVars && name in chan.chanVars) chan.chanVars[name] = value;
    this.pbx.emit('VarSet', 'dialplan', this.clock, [
      ...snapshot(chan, ''),
      ['Variable', variable],
      ['Value', value],
    ]);
  }

  private newExten(chan: Chan, context: string, exten: string, app: string, data: string): void {
    chan.context = context;
    chan.exten = exten;
    this.pbx.emit('Newexten', 'dialplan', this.clock, [
      ...snapshot(chan, ''),
      ['Extension', exten],
      ['Application', app],
      ['AppData', data],
    ]);
  }

  /** FreePBX sub-record-check: MixMonitor, MIXMONITOR_FILENAME, Set(CDR(recordingfile)=…). */
  private record(chan: Chan, type: string, dest: string): void {
    const stamp = new Date(this.clock * 1000)
      .toISOString()
      .replace(/[-:]/g, '')
      .slice(0, 15)
      .replace('T', '-');
    const file = `${type}-${dest}-${chan.callerNum}-${stamp}-${chan.uniqueid}`;
    // FreePBX files it under monitor/YYYY/MM/DD/ of the PBX's (here UTC) date.
    const path = `/var/spool/asterisk/monitor/${stamp.slice(0, 4)}/${stamp.slice(4, 6)}/${stamp.slice(6, 8)}/${file}.wav`;
    this.newExten(chan, 'sub-record-check', 'recordcheck', 'MixMonitor', `${path},ai(LOCAL_MIXMON_ID),`);
    this.varSet(chan, 'MIXMONITOR_FILENAME', path, 'sub-record-check', 'recordcheck');
    this.varSet(chan, '__CALLFILENAME', file, 'sub-record-check', 'recordcheck');
    this.pbx.emit('MixMonitorStart', 'call', this.clock, snapshot(chan, ''));
    this.newExten(chan, 'sub-record-check', 'recordcheck', 'Set', `CDR(recordingfile)=${file}.wav`);
  }

  /** A withheld caller: masked by the dialplan, or presentation prohibited, told in a NewCallerid. */
  private withhold(trunk: Chan): void {
    const how = this.call.withheld;
    if (how !== 'masked' && how !== 'prohibited') return;
    if (how === 'masked') {
      trunk.callerNum = `${trunk.callerNum.slice(0, 6)}${'x'.repeat(Math.max(0, trunk.callerNum.length - 6))}`;
    }
    this.pbx.emit('NewCallerid', 'call', this.clock, [
      ...snapshot(trunk, ''),
      ['CID-CallingPres', '33 (Presentation Prohibited, Passed Screen)'],
    ]);
  }

  private enterBridge(chan: Chan, id: string, members: number): void {
    chan.bridge = id;
    this.pbx.emit('BridgeEnter', 'call', this.clock, [...bridgeSnapshot(id, members), ...snapshot(chan, '')]);
  }

  private bridge(chans: Chan[]): string {
    const id = this.pbx.bridgeId();
    this.pbx.emit('BridgeCreate', 'call', this.clock, bridgeSnapshot(id, 0));
    chans.forEach((chan, index) => {
      chan.bridge = id;
      this.pbx.emit('BridgeEnter', 'call', this.clock, [
        ...bridgeSnapshot(id, index + 1),
        ...snapshot(chan, ''),
      ]);
    });
    return id;
  }

  private leaveBridge(chan: Chan): void {
    if (!chan.bridge) return;
    const id = chan.bridge;
    chan.bridge = '';
    this.pbx.emit('BridgeLeave', 'call', this.clock, [...bridgeSnapshot(id, 1), ...snapshot(chan, '')]);
  }

  private hangup(chan: Chan, cause: number, text: string): void {
    // The hangup handler runs before the event is sent: trunks and Local ;2 halves report its place.
    if (chan.name.startsWith('PJSIP/trunk') || chan.name.endsWith(';2')) {
      chan.context = 'handlers';
      chan.exten = 'onhangup';
    }
    this.pbx.emit('Hangup', 'call', this.clock, [
      ...snapshot(chan, ''),
      ['Cause', String(cause)],
      ['Cause-txt', text],
    ]);
    this.pbx.removeChannel(chan);
  }
}

/** A channel snapshot block in Asterisk's order (manager_channels.c), with a prefix for the second channel. */
function snapshot(chan: Chan, prefix: string): Fields {
  return [
    [`${prefix}Channel`, chan.name],
    [`${prefix}ChannelState`, String(chan.state)],
    [`${prefix}ChannelStateDesc`, STATES[chan.state] ?? 'Unknown'],
    [`${prefix}CallerIDNum`, chan.callerNum || '<unknown>'],
    [`${prefix}CallerIDName`, chan.callerName || '<unknown>'],
    [`${prefix}ConnectedLineNum`, chan.connectedNum || '<unknown>'],
    [`${prefix}ConnectedLineName`, '<unknown>'],
    [`${prefix}Language`, 'en'],
    [`${prefix}AccountCode`, ''],
    [`${prefix}Context`, chan.context],
    [`${prefix}Exten`, chan.exten],
    [`${prefix}Priority`, '1'],
    [`${prefix}Uniqueid`, chan.uniqueid],
    [`${prefix}Linkedid`, chan.linkedid],
    ...Object.entries(chan.chanVars ?? {}).map(([name, value]): [string, string] => [
      `${prefix}ChanVariable`,
      `${name}=${value}`,
    ]),
  ];
}

function bridgeSnapshot(id: string, members: number, prefix = ''): Fields {
  return [
    [`${prefix}BridgeUniqueid`, id],
    [`${prefix}BridgeType`, 'basic'],
    [`${prefix}BridgeTechnology`, 'simple_bridge'],
    [`${prefix}BridgeCreator`, '<unknown>'],
    [`${prefix}BridgeName`, '<unknown>'],
    [`${prefix}BridgeNumChannels`, String(members)],
    [`${prefix}BridgeVideoSourceMode`, 'none'],
  ];
}

function frame(fields: Fields): string {
  return `${fields.map(([key, value]) => `${key}: ${value}`).join('\r\n')}\r\n\r\n`;
}

function hms(ms: number): string {
  const s = Math.floor(ms / 1000);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(Math.floor(s / 3600))}:${pad(Math.floor((s % 3600) / 60))}:${pad(s % 60)}`;
}
