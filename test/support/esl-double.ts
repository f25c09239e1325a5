import { randomUUID } from 'node:crypto';
import { Socket } from 'node:net';
import { TcpDouble } from './tcp-double';

/**
 * A FreeSWITCH 1.10 event socket double (mod_event_socket, inbound mode) over real TCP, for following calls
 * (PBX_EVENTS=esl). It speaks what real PBX output describes: `Content-Type: auth/request` on connect; commands
 * are LF lines ended by an empty line; `auth <password>` → `command/reply` `+OK accepted` (else `-ERR
 * invalid` and the connection closed); `event json <names…> CUSTOM <subclasses…>` → `+OK event listener
 * enabled json` (subscriptions are per connection); `api status`, `api show channels as json`, `api show
 * calls as json` → `api/response` with Content-Length; `exit` → `+OK bye`. Events are framed `Content-Length`,
 * `Content-Type: text/event-json`, empty line, then one JSON object: `Event-Name` (CUSTOM: `Event-Subclass`
 * first), the core headers (`Core-UUID`, `FreeSWITCH-Hostname`, …, `Event-Date-Timestamp` in µs,
 * `Event-Sequence`), the event's own headers (`Bridge-A-Unique-ID`, `CC-*`), the channel's basic data
 * (`Channel-State` … `Answer-State`, `Hangup-Cause`), the caller profile (`Caller-*`), `Other-Type` /
 * `Other-Leg-*`, then `variable_*` (every channel variable, multi-valued ones as JSON arrays) on the events
 * that carry them; RECORD_START adds `Record-File-Path` after the channel data.
 *
 * Calls are described in a few words (`inbound`, simultaneous ring, mod_callcenter `queue`, `outbound`,
 * `internal`, blind/attended transfers, voicemail, record_session) and played as real PBX output–4.7 orders
 * them: the vanilla `public` → `default` transfer (a `bl_xfer` transfer_history entry nobody asked for),
 * `user/` B-legs carrying `originator`, `dialed_user` and the a-leg's Channel-Call-UUID, losers hung up with
 * LOSE_RACE, one CHANNEL_BRIDGE per bridge, agent legs originated without a caller session (their own
 * Channel-Call-UUID, `cc_member_session_uuid`), voicemail answering the a-leg with no bridge.
 *
 * Event timestamps run on a virtual clock per call, so `talk: 90` makes a 90-second call without waiting;
 * the PBX's clock may run `clockOffsetMs` off the bridge's (event dates, `show channels` rows, variables
 * and `uuid_dump` alike). What real captures show (REAL-PBX.md §8) is reproduced too: `event plain` values
 * URL-encoded with `ARRAY::` multi-values, the directory lookup's REQUEST_PARAMS headers copied into a
 * phone leg's variables (`variable_Event-Name`), `bridge_uuid`/`signal_bond` naming the other leg, frames
 * written in seeded random chunk sizes (split anywhere, mid-header), and mod_json_cdr's a-leg record
 * (`callStats`, `callflow` newest profile first, `originated_legs` naming the b-leg twice, `app_log`) posted
 * before CHANNEL_HANGUP_COMPLETE goes out, as the default json_cdr.conf does.
 */

type Fields = [string, string | string[]][];

const CORE_UUID = '5f0f4a9c-6a1e-4d2b-9c7f-3e2a1b0c9d8e';
const DOMAIN = '203.0.113.10';
/** The company's number: the DID calls come in on, the caller ID calls go out with (unless a call says). */
const DID = '4930123456';

/** One live FreeSWITCH leg. */
interface Leg {
  uuid: string;
  name: string;
  direction: 'inbound' | 'outbound';
  callUuid: string;
  state: string;
  callState: string;
  answerState: 'ringing' | 'early' | 'answered' | 'hangup';
  callerNum: string;
  callerName: string;
  dest: string;
  context: string;
  initialContext: string;
  profileIndex: number;
  createdUs: number;
  answeredUs: number;
  bridgedUs: number;
  hangupUs: number;
  hangupCause?: string;
  sessionId: number;
  partner?: string;
  /** The originator's (a-leg's) profile, for Other-Leg-* on b-legs. */
  other?: Leg;
  application: string;
  presenceId: string;
  /** Presentation prohibited (the caller profile's hide-number flag). */
  hideNumber?: boolean;
  /** Channel variables in the order they were set; a name set again keeps its place (ARRAY:: values: arrays). */
  vars: Map<string, string | string[]>;
  /** Caller profiles, oldest first (a dialplan transfer adds one), with the legs each dialled. */
  profiles: { index: number; context: string; dest: string; createdUs: number; dialled: Leg[] }[];
  /** The applications run, for mod_json_cdr's app_log. */
  apps: { app_name: string; app_data: string; app_stamp: string }[];
  /** record_session's file, until RECORD_STOP at the hang-up. */
  recording?: string;
}

export interface EslCallDescription {
  /** inbound (trunk → phones/queue), outbound (phone → gateway), internal (phone → phone). */
  kind: 'inbound' | 'outbound' | 'internal';
  /** inbound: the customer's number; outbound/internal: the calling extension. */
  from: string;
  /** inbound: the users rung (several: simultaneous ring, `user/101,user/102`); outbound: the number; internal: the user. */
  to: string | string[];
  /** inbound: mod_callcenter queue name; `to` are its agents, offered one after another. */
  queue?: string;
  /** Who picks up (inbound: a user of `to`; outbound/internal: any truthy value). Unset: nobody. */
  answeredBy?: string;
  /**
   * The company's number (the call's line). inbound: the DID the caller dialled (the a-leg's
   * Caller-Destination-Number before the dialplan's transfer; default 4930123456); outbound: the caller ID
   * presented to the gateway (the dialplan sets the a-leg's `effective_caller_id_number`, which the gateway
   * leg's caller profile carries; default 4930123456).
   */
  line?: string;
  /** Every dialled phone answers 486 (USER_BUSY). */
  busy?: boolean;
  /** Nobody answers, then voicemail answers the a-leg. */
  voicemail?: boolean;
  talk?: number;
  ring?: number;
  /**
   * Recording the a-leg: record_session FusionPBX-style (`true`: record_path/record_name set first) or
   * `plain` (only the application: its file in RECORD_START/STOP and the CDR's app_log); `uuid_record`
   * (started over the API: in RECORD_START/STOP only, not in the CDR).
   */
  recording?: boolean | 'plain' | 'uuid_record';
  /** The caller withholds its number: SIP Privacy `id` (the caller profile's hide-number flag). */
  privacy?: boolean;
  /** The phone answers and the caller hangs up within the same second (billsec 0, billmsec > 0). */
  quick?: boolean;
  /** A blind transfer's target rings until `pickUpTransfer()`. */
  holdTransferRinging?: boolean;
  /** After the answer, the employee transfers (SIP REFER) to this user. */
  transfer?: { kind: 'blind' | 'attended'; to: string };
  /** Click-to-call: the `{crm_call_id=…}` the dialer's originate set on the phone's leg. */
  crmCallId?: string;
  stepMs?: number;
  holdOpen?: boolean;
  holdRinging?: boolean;
}

export interface PlayingEslCall {
  /** The a-leg's uuid (= Channel-Call-UUID = callId, and mod_json_cdr's `variables.uuid`). */
  callId: string;
  done: Promise<void>;
  answered: Promise<void>;
  hangUp(): void;
  pickUp(): void;
  pickUpTransfer(): void;
}

/** mod_json_cdr's a-leg record as it would post it (`encode=false`). */
export type EslCdr = Record<string, unknown> & { variables: Record<string, string> };

/** How `restart()` takes FreeSWITCH down (see there). */
export interface EslRestartOptions {
  /**
   * mod_event_socket's shutdown killed the listener before the hung-up legs' CHANNEL_HANGUP_COMPLETE was
   * written to it (the session threads were still posting their CDRs): the socket never sees the hang-ups.
   */
  hangupsUnseen?: boolean;
}

export interface EslDoubleOptions {
  /** How far the PBX's clock is off the bridge's (ms; negative: behind). */
  clockOffsetMs?: number;
  /** Seeds the chunk sizes frames are written in. */
  seed?: number;
}

interface Subscriber {
  names: Set<string>;
  subclasses: Set<string>;
  /** `event plain`: URL-encoded `Header: value` lines instead of one JSON object. */
  plain: boolean;
}

export class EslDouble extends TcpDouble {
  /** Every command received, in order (the auth line too, for a test to check). */
  readonly commands: string[] = [];
  private readonly subscribers = new Map<Socket, Subscriber>();
  private readonly legs = new Map<string, Leg>();
  private readonly observers: ((frame: string, event: Record<string, string | string[]>) => void)[] = [];
  private sequence = 1000;
  private sessions = 0;
  /** This run's Core-UUID (switch_core_init makes a new one each start). */
  coreUuid = CORE_UUID;
  /** Resolved by `restart()`: switch_core_session_hupall ends every live session. */
  private hupall = deferred();
  /** The calls being played, until their script ends. */
  private readonly playing = new Set<Promise<void>>();
  private hexCounter = 0x10;
  private listenPort = 0;
  private random: () => number;
  logins = 0;
  /** How far the PBX's clock is off the bridge's (ms). */
  clockOffsetMs: number;
  /**
   * mod_json_cdr: called with each a-leg's record at its hang-up, awaited before CHANNEL_HANGUP_COMPLETE is
   * fired (json_cdr.conf's default); `cdrAfterHangup` posts it after the event instead.
   */
  onCdr?: (cdr: EslCdr) => Promise<unknown>;
  cdrAfterHangup = false;

  private constructor(
    private readonly password: string,
    options: EslDoubleOptions,
  ) {
    super();
    this.clockOffsetMs = options.clockOffsetMs ?? 0;
    this.random = seeded(options.seed ?? 35);
  }

  static async start(password = 'Cl0eCon-s3cr3t', options: EslDoubleOptions = {}): Promise<EslDouble> {
    const double = new EslDouble(password, options);
    await double.listen(0);
    double.listenPort = double.port;
    return double;
  }

  url(password = this.password): string {
    return `tcp://:${encodeURIComponent(password)}@127.0.0.1:${this.listenPort}`;
  }

  /** Calls `observer` with every event the switch fires (subscribed to or not), framed and as an object. */
  observe(observer: (frame: string, event: Record<string, string | string[]>) => void): void {
    this.observers.push(observer);
  }

  get liveChannels(): number {
    return this.legs.size;
  }

  /** The PBX's clock now (µs). */
  nowUs(): number {
    return (Date.now() + this.clockOffsetMs) * 1000;
  }

  /** Drops every event socket connection and refuses new ones for `ms`; calls go on meanwhile. */
  async refuseFor(ms: number): Promise<void> {
    await this.refuse();
    setTimeout(() => void this.accept(), ms);
  }

  /** Drops every event socket connection and refuses new ones until `accept()`; calls go on meanwhile. */
  async refuse(): Promise<void> {
    await this.close();
  }

  async accept(): Promise<void> {
    await this.listen(this.listenPort);
  }

  /**
   * `fsctl shutdown restart` (switch_core_session_ctl SCSC_SHUTDOWN → switch_core_destroy): every live
   * session is hung up with SYSTEM_SHUTDOWN (runtime.shutdown_cause; switch_core_session_hupall), each leg's
   * CHANNEL_HANGUP_COMPLETE goes to the listeners still connected and mod_json_cdr posts each a-leg's CDR
   * (json_cdr.conf's default: synchronously, before the event) — a call held open has talked its `talk`
   * seconds by then, on its own clock; then the modules shut down: mod_event_socket closes its listeners
   * and its port. Resolves once FreeSWITCH is down; the port refuses until `accept()` (it is starting).
   * The new process has a new Core-UUID, its session counter and Event-Sequence begin again, and `show
   * channels` is empty; its clock is the same machine's (clockOffsetMs stays). Only calls talking or held
   * ringing (`holdOpen`, `holdRinging`) may be live.
   */
  async restart(options: EslRestartOptions = {}): Promise<void> {
    if (options.hangupsUnseen) this.subscribers.clear();
    this.hupall.resolve();
    await Promise.all([...this.playing]);
    await this.closeListeners();
    this.hupall = deferred();
    this.coreUuid = randomUUID();
    this.sessions = 0;
    this.sequence = 1;
    this.legs.clear();
  }

  /** Between `restart()`'s hupall and the new process. */
  get hangingUpAll(): boolean {
    return this.hupall.done;
  }

  /** Resolves when switch_core_session_hupall hangs up every session (a restart). */
  get shuttingDown(): Promise<void> {
    return this.hupall.promise;
  }

  /** mod_event_socket's shutdown: what was written to a listener is delivered, then the socket is shut. */
  private async closeListeners(): Promise<void> {
    await Promise.all(
      [...this.subscribers.keys()].map(
        (socket) => new Promise<void>((resolve) => socket.end(() => resolve())),
      ),
    );
    this.subscribers.clear();
    await this.close();
  }

  protected serve(socket: Socket): void {
    socket.setNoDelay(true);
    socket.write('Content-Type: auth/request\n\n');
    let authed = false;
    let buffer = '';
    const reply = (text: string) =>
      this.write(socket, `Content-Type: command/reply\nReply-Text: ${text}\n\n`);
    const api = (body: string) =>
      this.write(socket, `Content-Type: api/response\nContent-Length: ${Buffer.byteLength(body)}\n\n${body}`);
    socket.on('close', () => this.subscribers.delete(socket));
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const command = buffer.slice(0, end).split('\n')[0].trim();
        buffer = buffer.slice(end + 2);
        this.commands.push(command);
        if (command.startsWith('auth ')) {
          authed = command.slice(5) === this.password;
          if (authed) this.logins++;
          reply(authed ? '+OK accepted' : '-ERR invalid');
          if (!authed) socket.end();
        } else if (command === 'exit') {
          reply('+OK bye');
          socket.end();
        } else if (!authed) {
          reply('-ERR command not found');
        } else if (/^event (json|plain) /.test(command)) {
          const [, format, ...words] = command.split(/\s+/);
          const custom = words.indexOf('CUSTOM');
          const names = new Set(custom >= 0 ? words.slice(0, custom) : words);
          const subclasses = new Set(custom >= 0 ? words.slice(custom + 1) : []);
          if (custom >= 0) names.add('CUSTOM');
          this.subscribers.set(socket, { names, subclasses, plain: format === 'plain' });
          reply(`+OK event listener enabled ${format}`);
        } else if (command === 'api status') {
          api(this.status());
        } else if (command === 'api show channels as json') {
          api(this.showChannels());
        } else if (command === 'api show calls as json') {
          api(this.showCalls());
        } else if (/^api uuid_dump \S+ json$/.test(command)) {
          const leg = this.legs.get(command.split(' ')[2]);
          api(
            leg ? JSON.stringify(this.eventOf('CHANNEL_DATA', this.nowUs(), leg)) : '-ERR No such channel!\n',
          );
        } else if (command.startsWith('api ')) {
          api(`-ERR ${command.slice(4).split(' ')[0]} Command not found!\n`);
        } else {
          reply('-ERR command not found');
        }
      }
    });
  }

  private status(): string {
    return [
      'UP 0 years, 0 days, 2 hours, 14 minutes, 5 seconds, 120 milliseconds, 44 microseconds',
      'FreeSWITCH (Version 1.10.12 -release 64bit) is ready',
      `${this.sessions} session(s) since startup`,
      `${this.legs.size} session(s) - peak 60, last 5min 12 `,
      '0 session(s) per Sec out of max 30, peak 8, last 5min 2 ',
      '1000 session(s) max',
      'min idle cpu 0.00/97.33',
      'Current Stack Size/Max 240K/8192K',
      '',
    ].join('\n');
  }

  /** `show channels as json` (switch_core_sqldb's channels table). */
  private showChannels(): string {
    const rows = [...this.legs.values()].map((leg) => channelRow(leg));
    return JSON.stringify(rows.length ? { row_count: rows.length, rows } : { row_count: 0 });
  }

  /** `show calls as json` (the basic_calls view): a bridged pair once, with the b-leg's `b_` columns. */
  private showCalls(): string {
    const rows: Record<string, string>[] = [];
    const seen = new Set<string>();
    for (const leg of this.legs.values()) {
      if (seen.has(leg.uuid)) continue;
      seen.add(leg.uuid);
      const b = leg.partner ? this.legs.get(leg.partner) : undefined;
      const row: Record<string, string> = {};
      const a = channelRow(leg);
      for (const key of CALL_COLUMNS) row[key] = a[key] ?? '';
      for (const key of CALL_COLUMNS.filter((k) => k !== 'hostname' && k !== 'call_uuid')) {
        row[`b_${key}`] = b ? (channelRow(b)[key] ?? '') : '';
      }
      row.call_created_epoch = b ? String(Math.floor(leg.bridgedUs / 1e6)) : '';
      if (b) seen.add(b.uuid);
      rows.push(row);
    }
    return JSON.stringify(rows.length ? { row_count: rows.length, rows } : { row_count: 0 });
  }

  // ---- calls ------------------------------------------------------------------------------------------

  play(call: EslCallDescription): PlayingEslCall {
    let hangUp: () => void = () => undefined;
    const release = new Promise<void>((resolve) => (hangUp = resolve));
    let markAnswered: () => void = () => undefined;
    const answered = new Promise<void>((resolve) => (markAnswered = resolve));
    let pickUp: () => void = () => undefined;
    const ringing = new Promise<void>((resolve) => (pickUp = resolve));
    let pickUpTransfer: () => void = () => undefined;
    const transferRinging = new Promise<void>((resolve) => (pickUpTransfer = resolve));
    const script = new EslCallScript(this, call, markAnswered, {
      release: call.holdOpen ? release : undefined,
      ringing: call.holdRinging ? ringing : undefined,
      transferRinging: call.holdTransferRinging ? transferRinging : undefined,
    });
    const done = script.run().finally(markAnswered);
    this.playing.add(done);
    void done.finally(() => this.playing.delete(done));
    return {
      callId: script.callId,
      done,
      answered,
      hangUp: () => hangUp(),
      pickUp: () => pickUp(),
      pickUpTransfer: () => pickUpTransfer(),
    };
  }

  // ---- what the script uses -----------------------------------------------------------------------------

  newLeg(
    fields: Omit<
      Leg,
      | 'uuid'
      | 'sessionId'
      | 'vars'
      | 'profileIndex'
      | 'answeredUs'
      | 'bridgedUs'
      | 'hangupUs'
      | 'callUuid'
      | 'initialContext'
      | 'presenceId'
      | 'state'
      | 'callState'
      | 'answerState'
      | 'application'
      | 'profiles'
      | 'apps'
    > & { callUuid?: string; presenceId?: string },
    vars: Fields,
  ): Leg {
    const uuid = randomUUID();
    this.sessions++;
    const leg: Leg = {
      ...fields,
      uuid,
      callUuid: fields.callUuid ?? uuid,
      state: 'CS_INIT',
      callState: 'DOWN',
      answerState: 'ringing',
      initialContext: fields.context,
      profileIndex: 1,
      answeredUs: 0,
      bridgedUs: 0,
      hangupUs: 0,
      sessionId: this.sessions,
      application: '',
      presenceId: fields.presenceId ?? '',
      vars: new Map(),
      profiles: [
        { index: 1, context: fields.context, dest: fields.dest, createdUs: fields.createdUs, dialled: [] },
      ],
      apps: [],
    };
    this.legs.set(uuid, leg);
    setVars(leg, [
      ['direction', leg.direction],
      ['uuid', uuid],
      ['session_id', String(leg.sessionId)],
      ...vars,
      ['call_uuid', leg.callUuid],
    ]);
    return leg;
  }

  hex(): string {
    return (this.hexCounter++).toString(16).padStart(8, '0');
  }

  bridged(a: Leg, b: Leg): void {
    a.partner = b.uuid;
    b.partner = a.uuid;
  }

  removeLeg(leg: Leg): void {
    this.legs.delete(leg.uuid);
  }

  leg(uuid: string | undefined): Leg | undefined {
    return uuid ? this.legs.get(uuid) : undefined;
  }

  /** Fires one event about `leg` (or none): framed as mod_event_socket frames `event json`. */
  fire(name: string, clockUs: number, leg: Leg | undefined, options: EventOptions = {}): void {
    const event = this.eventOf(name, clockUs, leg, options);
    const body = JSON.stringify(event);
    const frame = `Content-Length: ${Buffer.byteLength(body)}\nContent-Type: text/event-json\n\n${body}`;
    for (const observer of this.observers) observer(frame, event);
    for (const [socket, subscriber] of this.subscribers) {
      const wanted = options.subclass
        ? subscriber.names.has('CUSTOM') && subscriber.subclasses.has(options.subclass)
        : subscriber.names.has(name) || subscriber.names.has('ALL');
      if (!wanted || !socket.writable) continue;
      if (!subscriber.plain) {
        this.write(socket, frame);
        continue;
      }
      const plain = plainBody(event);
      this.write(
        socket,
        `Content-Length: ${Buffer.byteLength(plain)}\nContent-Type: text/event-plain\n\n${plain}`,
      );
    }
  }

  /** One event about `leg` (or none), headers in mod_event_socket's order. */
  eventOf(
    name: string,
    clockUs: number,
    leg: Leg | undefined,
    options: EventOptions = {},
  ): Record<string, string | string[]> {
    const date = new Date(clockUs / 1000);
    const event: Record<string, string | string[]> = {};
    if (options.subclass) event['Event-Subclass'] = options.subclass;
    Object.assign(event, {
      'Event-Name': name,
      'Core-UUID': this.coreUuid,
      'FreeSWITCH-Hostname': 'pbx-berlin-1',
      'FreeSWITCH-Switchname': 'pbx-berlin-1',
      'FreeSWITCH-IPv4': DOMAIN,
      'FreeSWITCH-IPv6': '::1',
      'Event-Date-Local': date.toISOString().replace('T', ' ').slice(0, 19),
      'Event-Date-GMT': date.toUTCString(),
      'Event-Date-Timestamp': String(Math.round(clockUs)),
      'Event-Calling-File': CALLING[name]?.[0] ?? 'switch_channel.c',
      'Event-Calling-Function': CALLING[name]?.[1] ?? 'switch_channel_perform_set_running_state',
      'Event-Calling-Line-Number': CALLING[name]?.[2] ?? '1124',
      'Event-Sequence': String(this.sequence++),
    });
    for (const [key, value] of options.before ?? []) event[key] = value;
    if (leg) {
      Object.assign(event, basicData(leg));
      const other = leg.other ?? (leg.partner ? this.legs.get(leg.partner) : undefined);
      if (other) {
        event['Other-Type'] = leg.other ? 'originator' : 'originatee';
        for (const [key, value] of Object.entries(profile(other))) event[`Other-Leg-${key}`] = value;
      }
      if (options.variables !== false) for (const [key, value] of leg.vars) event[`variable_${key}`] = value;
    }
    for (const [key, value] of options.after ?? []) event[key] = value;
    return event;
  }

  /** Writes `text` in seeded random chunk sizes: TCP may split a frame anywhere, mid-header included. */
  private write(socket: Socket, text: string): void {
    const bytes = Buffer.from(text);
    for (let at = 0; at < bytes.length;) {
      const size = 1 + Math.floor(this.random() ** 2 * 1500);
      socket.write(bytes.subarray(at, at + size));
      at += size;
    }
  }
}

type EventOptions = { before?: Fields; after?: Fields; subclass?: string; variables?: boolean };

/** One call's event sequence (real PBX output–4.7), on its own virtual clock (µs). */
class EslCallScript {
  readonly callId: string;
  private clockUs: number;
  private readonly step: number;
  private readonly first: Leg;
  private readonly release?: Promise<void>;
  private readonly ringing?: Promise<void>;
  private readonly transferRinging?: Promise<void>;

  constructor(
    private readonly pbx: EslDouble,
    private readonly call: EslCallDescription,
    private readonly answered: () => void,
    holds: { release?: Promise<void>; ringing?: Promise<void>; transferRinging?: Promise<void> },
  ) {
    ({ release: this.release, ringing: this.ringing, transferRinging: this.transferRinging } = holds);
    this.clockUs = pbx.nowUs();
    this.step = call.stepMs ?? 5;
    if (call.kind === 'inbound') {
      const from = call.from;
      this.first = pbx.newLeg(
        {
          name: `sofia/external/${from}@sip.carrier.example`,
          direction: 'inbound',
          callerNum: from,
          callerName: from,
          dest: call.line ?? DID,
          context: 'public',
          createdUs: this.clockUs,
          hideNumber: call.privacy,
        },
        [
          ['sip_from_user', from],
          ['sip_from_host', 'sip.carrier.example'],
          ['channel_name', `sofia/external/${from}@sip.carrier.example`],
          ['sip_network_ip', '198.51.100.7'],
          ['sofia_profile_name', 'external'],
          ['sip_req_user', call.line ?? DID],
          ['sip_to_user', call.line ?? DID],
          ['sip_call_id', `${pbx.hex()}@198.51.100.7`],
          ...(call.privacy ? ([['sip_Privacy', 'id']] as Fields) : []),
        ],
      );
    } else {
      this.first = this.phoneALeg(call.from, String(call.to));
    }
    this.callId = this.first.uuid;
    this.fire('CHANNEL_CREATE', this.first);
  }

  async run(): Promise<void> {
    await this.pause();
    if (this.call.kind === 'inbound') await (this.call.queue ? this.queue() : this.inbound());
    else await this.dialOut();
  }

  // ---- flows ------------------------------------------------------------------------------------------

  private async inbound(): Promise<void> {
    const a = this.first;
    const c = this.call;
    const users = [c.to].flat();
    // Vanilla public.xml: `transfer` into default (a bl_xfer entry nobody asked for).
    this.transferTo(a, users[0]);
    if (c.recording) this.recordSession(a);
    setVars(a, [
      ['call_timeout', '30'],
      ['current_application', 'bridge'],
      ['current_application_data', users.map((u) => `user/${u}@${DOMAIN}`).join(',')],
    ]);
    const phones = users.map((user) => this.userLeg(a, user));
    await this.pause();
    if (c.busy) {
      for (const phone of phones) await this.hangup(phone, 'USER_BUSY');
      await this.afterNoAnswer(a);
      return;
    }
    await this.pause(c.ring ?? 5);
    if (this.ringing) await Promise.race([this.ringing, this.pbx.shuttingDown]);
    if (this.shutDown) {
      for (const phone of phones) await this.hangup(phone, 'SYSTEM_SHUTDOWN');
      await this.hangup(a, 'SYSTEM_SHUTDOWN');
      return;
    }
    const winner = phones.find((phone) => phone.vars.get('dialed_user') === c.answeredBy);
    if (!winner) {
      for (const phone of phones) await this.hangup(phone, 'NO_ANSWER');
      await this.afterNoAnswer(a);
      return;
    }
    // Answered early in a second, hung up within it: billsec 0 (whole seconds subtracted), billmsec not.
    if (c.quick) await this.pause(1.1 - (this.clockUs / 1e6 - Math.floor(this.clockUs / 1e6)));
    this.answer(winner);
    for (const phone of phones) if (phone !== winner) await this.hangup(phone, 'LOSE_RACE');
    this.answer(a);
    this.bridge(a, winner);
    this.answered();
    await this.talkAndTransfer(a, winner);
  }

  private async queue(): Promise<void> {
    const a = this.first;
    const c = this.call;
    const queue = `${c.queue as string}@default`;
    this.transferTo(a, c.queue as string);
    a.application = 'callcenter';
    setVars(a, [
      ['current_application', 'callcenter'],
      ['current_application_data', queue],
    ]);
    const memberUuid = randomUUID();
    const member: Fields = [
      ['CC-Queue', queue],
      ['CC-Member-UUID', memberUuid],
      ['CC-Member-Session-UUID', a.uuid],
      ['CC-Member-CID-Name', a.callerName],
      ['CC-Member-CID-Number', a.callerNum],
    ];
    this.answer(a); // mod_callcenter answers the member and plays music on hold
    setVars(a, [
      ['cc_queue', queue],
      ['cc_member_uuid', memberUuid],
      ['cc_member_session_uuid', a.uuid],
    ]);
    this.custom('member-queue-start', a, [['CC-Action', 'member-queue-start'], ...member]);
    for (const agent of [c.to].flat()) {
      const name = `${agent}@default`;
      this.custom('agent-offering', a, [
        ['CC-Action', 'agent-offering'],
        ['CC-Agent', name],
        ['CC-Agent-Type', 'callback'],
        ['CC-Agent-System', 'single_box'],
        ...member,
        ['CC-Member-DNIS', a.dest],
      ]);
      // Originated with no caller session: its own Channel-Call-UUID, the member's in cc_member_session_uuid.
      const leg = this.pbx.newLeg(
        {
          name: `sofia/internal/${agent}@192.0.2.${20 + Number(agent.slice(-1))}:5060`,
          direction: 'outbound',
          callerNum: a.callerNum,
          callerName: a.callerName,
          dest: agent,
          context: 'default',
          createdUs: this.clockUs,
          presenceId: `${agent}@${DOMAIN}`,
        },
        [
          ['cc_side', 'agent'],
          ['cc_queue', queue],
          ['cc_agent', name],
          ['cc_agent_type', 'callback'],
          ['cc_member_uuid', memberUuid],
          ['cc_member_session_uuid', a.uuid],
          ['dialed_user', agent],
          ['dialed_domain', DOMAIN],
          ['presence_id', `${agent}@${DOMAIN}`],
        ],
      );
      this.fire('CHANNEL_CREATE', leg);
      await this.pause();
      await this.pause(c.ring ?? 5);
      if (this.ringing) await this.ringing;
      if (agent !== c.answeredBy) {
        await this.hangup(leg, 'NO_ANSWER');
        this.custom('bridge-agent-fail', a, [
          ['CC-Action', 'bridge-agent-fail'],
          ['CC-Hangup-Cause', 'NO_ANSWER'],
          ['CC-Agent', name],
          ['CC-Agent-System', 'single_box'],
          ...member,
          ['CC-Agent-Called-Time', String(Math.floor(this.clockUs / 1e6) - 5)],
          ['CC-Agent-Aborted-Time', String(Math.floor(this.clockUs / 1e6))],
        ]);
        continue;
      }
      this.answer(leg);
      this.custom('bridge-agent-start', leg, [
        ['CC-Action', 'bridge-agent-start'],
        ['CC-Agent', name],
        ['CC-Agent-System', 'single_box'],
        ['CC-Agent-UUID', leg.uuid],
        ...member,
        ['CC-Agent-Called-Time', String(Math.floor(this.clockUs / 1e6) - 5)],
        ['CC-Agent-Answered-Time', String(Math.floor(this.clockUs / 1e6))],
        ['CC-Member-Joined-Time', String(Math.floor(a.createdUs / 1e6))],
      ]);
      this.bridge(a, leg); // uuid_bridge member ↔ agent
      this.answered();
      await this.talk();
      this.unbridge(a, leg);
      this.custom('bridge-agent-end', leg, [
        ['CC-Action', 'bridge-agent-end'],
        ['CC-Hangup-Cause', 'NORMAL_CLEARING'],
        ['CC-Agent', name],
        ['CC-Agent-System', 'single_box'],
        ['CC-Agent-UUID', leg.uuid],
        ['CC-Agent-Bridged', 'true'],
        ...member,
      ]);
      this.custom('member-queue-end', a, [
        ['CC-Action', 'member-queue-end'],
        ['CC-Cause', 'Terminated'],
        ...member,
      ]);
      await this.hangup(a, 'NORMAL_CLEARING');
      await this.hangup(leg, 'NORMAL_CLEARING');
      return;
    }
    this.custom('member-queue-end', a, [
      ['CC-Action', 'member-queue-end'],
      ['CC-Cause', 'Cancel'],
      ['CC-Cancel-Reason', 'NONE'],
      ...member,
    ]);
    setVars(a, [
      ['cc_cause', 'cancel'],
      ['cc_cancel_reason', 'NONE'],
    ]);
    await this.hangup(a, 'NORMAL_CLEARING');
  }

  /** outbound (a gateway leg) and internal (a user/ leg), from the phone's a-leg. */
  private async dialOut(): Promise<void> {
    const a = this.first;
    const c = this.call;
    const target = String(c.to);
    if (c.recording) this.recordSession(a);
    // To a gateway the dialplan presents the company's caller ID (`effective_caller_id_number`), which the
    // gateway leg's caller profile then carries (real PBX output: its CHANNEL_CREATE's Caller-Caller-ID-Number).
    const presented = c.line ?? DID;
    if (c.kind !== 'internal') setVars(a, [['effective_caller_id_number', presented]]);
    const b =
      c.kind === 'internal'
        ? this.userLeg(a, target)
        : this.pbx.newLeg(
            {
              name: `sofia/external/${target}@sip.carrier.example`,
              direction: 'outbound',
              callerNum: presented,
              callerName: a.callerName,
              dest: target,
              context: 'default',
              createdUs: this.clockUs,
              callUuid: a.callUuid,
              other: a,
            },
            [
              ['originator', a.uuid],
              ['originator_codec', 'PCMA@8000h@20i'],
              ['signal_bond', a.uuid],
              ['sip_gateway_name', 'carrier'],
              ['sip_profile_name', 'external'],
              ['sip_to_user', target],
            ],
          );
    if (c.kind !== 'internal') {
      a.profiles[a.profiles.length - 1].dialled.push(b);
      this.fire('CHANNEL_CREATE', b);
    }
    await this.pause();
    await this.pause(c.ring ?? 5);
    if (this.ringing) await this.ringing;
    if (c.busy || !c.answeredBy) {
      await this.hangup(b, c.busy ? 'USER_BUSY' : 'NO_ANSWER');
      await this.hangup(a, c.busy ? 'USER_BUSY' : 'NO_ANSWER');
      return;
    }
    this.answer(b);
    this.answer(a);
    this.bridge(a, b);
    this.answered();
    await this.talkAndTransfer(b, a);
  }

  /** Nobody answered: voicemail answers the a-leg (no bridge), or the caller gives up. */
  private async afterNoAnswer(a: Leg): Promise<void> {
    if (this.call.voicemail) {
      a.application = 'voicemail';
      setVars(a, [
        ['current_application', 'voicemail'],
        ['current_application_data', `default ${DOMAIN} ${[this.call.to].flat()[0]}`],
      ]);
      this.answer(a);
      await this.pause(20);
      setVars(a, [['voicemail_message_len', '18']]);
    }
    await this.hangup(a, 'NORMAL_CLEARING');
  }

  /** Talk, transfer if asked, then the outside party hangs up. `employee` is the phone leg bridged with `outside`. */
  private async talkAndTransfer(outside: Leg, employee: Leg): Promise<void> {
    const transfer = this.call.transfer;
    if (!transfer) {
      await this.talk();
      // switch_core_session_hupall at a restart ends both legs with the shutdown cause.
      const cause = this.shutDown ? 'SYSTEM_SHUTDOWN' : 'NORMAL_CLEARING';
      this.unbridge(outside, employee);
      await this.hangup(outside, cause);
      await this.hangup(employee, cause);
      return;
    }
    await this.pause(10);
    let target: Leg;
    if (transfer.kind === 'blind') {
      // SIP REFER from the employee: the outside leg is session-transferred to the exten and dials it.
      setVars(employee, [
        ['transfer_to', `blind:${transfer.to}`],
        ['transfer_destination', `blind:${transfer.to}`],
        ['endpoint_disposition', 'BLIND_TRANSFER'],
      ]);
      this.unbridge(outside, employee);
      await this.hangup(employee, 'BLIND_TRANSFER');
      this.transferTo(outside, transfer.to);
      target = this.userLeg(outside, transfer.to);
      await this.pause(3);
      if (this.transferRinging) await this.transferRinging;
      this.answer(target);
      this.bridge(outside, target);
    } else {
      // A consultation call from the employee's phone (phone to phone) until the REFER with Replaces.
      const consult = this.phoneALeg(
        String(employee.vars.get('dialed_user') ?? employee.callerNum),
        transfer.to,
      );
      this.fire('CHANNEL_CREATE', consult);
      target = this.userLeg(consult, transfer.to);
      await this.pause(3);
      this.answer(target);
      this.answer(consult);
      this.bridge(consult, target);
      await this.pause(5);
      this.unbridge(outside, employee);
      this.unbridge(consult, target);
      const stamp = Math.floor(this.clockUs / 1e6);
      pushVar(
        outside,
        'transfer_history',
        `${stamp}:${randomUUID()}:att_xfer:${transfer.to}@${DOMAIN}/${outside.callerNum}@${DOMAIN}`,
      );
      pushVar(
        target,
        'transfer_history',
        `${stamp}:${randomUUID()}:att_xfer:${transfer.to}@${DOMAIN}/${outside.callerNum}@${DOMAIN}`,
      );
      this.bridge(outside, target);
      await this.hangup(employee, 'ATTENDED_TRANSFER');
      await this.hangup(consult, 'ATTENDED_TRANSFER');
    }
    await this.talk();
    this.unbridge(outside, target);
    await this.hangup(outside, 'NORMAL_CLEARING');
    await this.hangup(target, 'NORMAL_CLEARING');
  }

  private async talk(): Promise<void> {
    if (this.release) await Promise.race([this.release, this.pbx.shuttingDown]);
    await this.pause(this.call.quick ? 0.4 : (this.call.talk ?? 30));
  }

  // ---- legs and events ------------------------------------------------------------------------------------

  /** A registered phone calling: an inbound a-leg in its user_context, authenticated as the user. */
  private phoneALeg(user: string, dest: string): Leg {
    const host = `192.0.2.${20 + Number(user.slice(-1))}`;
    return this.pbx.newLeg(
      {
        name: `sofia/internal/${user}@${host}:5060`,
        direction: 'inbound',
        callerNum: user,
        callerName: `Extension ${user}`,
        dest,
        context: 'default',
        createdUs: this.clockUs,
        presenceId: `${user}@${DOMAIN}`,
      },
      [
        ['sip_from_user', user],
        ['sip_from_host', DOMAIN],
        ['channel_name', `sofia/internal/${user}@${host}:5060`],
        ['sofia_profile_name', 'internal'],
        ['sip_auth_username', user],
        ['sip_auth_realm', DOMAIN],
        ['user_name', user],
        ['domain_name', DOMAIN],
        ['user_context', 'default'],
        ['effective_caller_id_number', user],
        // sofia's directory lookup copies its REQUEST_PARAMS event headers into the channel's variables.
        ['Event-Name', 'REQUEST_PARAMS'],
        ['Core-UUID', this.pbx.coreUuid],
        ['Event-Date-Timestamp', String(Math.round(this.clockUs))],
        ['Event-Calling-Function', 'sofia_handle_sip_i_invite'],
        ['sip_authorized', 'true'],
        ...(this.call.crmCallId && user === this.call.from
          ? ([['crm_call_id', this.call.crmCallId]] as Fields)
          : []),
      ],
    );
  }

  /** `bridge user/<n>@domain` from `a`: the b-leg, with originator, dialed_user and a's Channel-Call-UUID. */
  private userLeg(a: Leg, user: string): Leg {
    setVars(a, [
      ['dialed_user', user],
      ['dialed_domain', DOMAIN],
    ]);
    const host = `192.0.2.${20 + Number(user.slice(-1))}`;
    const leg = this.pbx.newLeg(
      {
        name: `sofia/internal/${user}@${host}:5060`,
        direction: 'outbound',
        callerNum: a.callerNum,
        callerName: a.callerName,
        dest: user,
        context: 'default',
        createdUs: this.clockUs,
        callUuid: a.callUuid,
        other: a,
        presenceId: `${user}@${DOMAIN}`,
      },
      [
        ['originator', a.uuid],
        ['originator_codec', 'PCMA@8000h@20i'],
        ['originating_leg_uuid', a.uuid],
        ['signal_bond', a.uuid],
        ['dialed_user', user],
        ['dialed_domain', DOMAIN],
        ['presence_id', `${user}@${DOMAIN}`],
        ['sip_profile_name', 'internal'],
      ],
    );
    a.profiles[a.profiles.length - 1].dialled.push(leg);
    this.fire('CHANNEL_CREATE', leg);
    return leg;
  }

  /** A dialplan transfer (vanilla public → default, or a blind transfer): a new caller profile, bl_xfer. */
  private transferTo(leg: Leg, exten: string): void {
    pushVar(
      leg,
      'transfer_history',
      `${Math.floor(this.clockUs / 1e6)}:${randomUUID()}:bl_xfer:${exten}/default/XML`,
    );
    setVars(leg, [['transfer_source', String(leg.vars.get('transfer_history'))]]);
    if (leg.context === 'public') this.ran(leg, 'transfer', `${exten} XML default`);
    leg.context = 'default';
    leg.dest = exten;
    leg.profileIndex++;
    leg.profiles.push({
      index: leg.profileIndex,
      context: 'default',
      dest: exten,
      createdUs: this.clockUs,
      dialled: [],
    });
  }

  /** An application the dialplan ran on `leg` (mod_json_cdr's app_log). */
  private ran(leg: Leg, app: string, data: string): void {
    leg.apps.push({ app_name: app, app_data: data, app_stamp: String(Math.round(this.clockUs)) });
  }

  /**
   * record_session (RECORD_START; RECORD_STOP comes at the hang-up). FusionPBX-style sets record_path and
   * record_name first; a plain one leaves its file only in the events and the CDR's app_log.
   */
  private recordSession(leg: Leg): void {
    const fusion = this.call.recording === true;
    const path = fusion
      ? `/var/lib/freeswitch/recordings/${DOMAIN}/archive/2026/Nov/26`
      : '/var/lib/freeswitch/recordings';
    const name = `${leg.uuid}.wav`;
    if (fusion) {
      setVars(leg, [
        ['record_path', path],
        ['record_name', name],
      ]);
    }
    if (this.call.recording !== 'uuid_record') {
      setVars(leg, [
        ['current_application', 'record_session'],
        ['current_application_data', `${path}/${name}`],
      ]);
      this.ran(leg, 'record_session', `${path}/${name}`);
    }
    leg.recording = `${path}/${name}`;
    this.fire('RECORD_START', leg, { after: [['Record-File-Path', `${path}/${name}`]] });
  }

  private answer(leg: Leg): void {
    leg.state = 'CS_EXECUTE';
    leg.callState = 'ACTIVE';
    leg.answerState = 'answered';
    leg.answeredUs = this.clockUs;
    this.fire('CHANNEL_ANSWER', leg);
  }

  /** One CHANNEL_BRIDGE per bridge: the a side's data with Bridge-A/B-Unique-ID before it. */
  private bridge(a: Leg, b: Leg): void {
    this.pbx.bridged(a, b);
    a.bridgedUs = this.clockUs;
    b.bridgedUs = this.clockUs;
    // bridge_uuid and signal_bond name the other leg (no bridge id); originated_legs lists it twice.
    setVars(a, [
      ['bridge_channel', b.name],
      ['bridge_uuid', b.uuid],
      ['signal_bond', b.uuid],
      ['last_bridge_to', b.uuid],
      ['bridge_epoch', String(Math.floor(this.clockUs / 1e6))],
    ]);
    if (b.vars.get('originator') === a.uuid) {
      pushVar(a, 'originated_legs', `${b.uuid};Outbound Call;${b.dest}`);
      pushVar(a, 'originated_legs', `${b.uuid};Outbound Call;${b.dest}`);
      this.ran(a, 'bridge', String(a.vars.get('current_application_data') ?? `user/${b.dest}@${DOMAIN}`));
    }
    setVars(b, [
      ['bridge_uuid', a.uuid],
      ['last_bridge_to', a.uuid],
      ['bridge_epoch', String(Math.floor(this.clockUs / 1e6))],
    ]);
    this.fire('CHANNEL_BRIDGE', a, {
      before: [
        ['Bridge-A-Unique-ID', a.uuid],
        ['Bridge-B-Unique-ID', b.uuid],
      ],
    });
  }

  private unbridge(a: Leg, b: Leg): void {
    if (a.partner !== b.uuid) return;
    a.partner = undefined;
    b.partner = undefined;
    // FreeSWITCH resets a leg's call_uuid to its own uuid on unbridge.
    for (const leg of [a, b]) {
      leg.callUuid = leg.uuid;
      setVars(leg, [['call_uuid', leg.uuid]]);
    }
    this.fire('CHANNEL_UNBRIDGE', a, {
      before: [
        ['Bridge-A-Unique-ID', a.uuid],
        ['Bridge-B-Unique-ID', b.uuid],
      ],
    });
  }

  private async hangup(leg: Leg, cause: string): Promise<void> {
    if (leg.partner) {
      const partner = this.pbx.leg(leg.partner);
      if (partner) partner.partner = undefined;
      leg.partner = undefined;
    }
    leg.state = 'CS_REPORTING';
    leg.callState = 'HANGUP';
    leg.answerState = 'hangup';
    leg.hangupCause = cause;
    leg.hangupUs = this.clockUs;
    // switch_channel_set_timestamps: *sec are differences of whole seconds, *msec of milliseconds.
    const epoch = (us: number) => Math.floor(us / 1e6);
    const seconds = (from: number) => String(from ? epoch(this.clockUs) - epoch(from) : 0);
    const millis = (from: number) => String(from ? Math.round((this.clockUs - from) / 1000) : 0);
    if (leg.recording) {
      setVars(leg, [
        ['record_seconds', seconds(leg.answeredUs || leg.createdUs)],
        ['record_ms', millis(leg.answeredUs || leg.createdUs)],
      ]);
      this.fire('RECORD_STOP', leg, { after: [['Record-File-Path', leg.recording]] });
      leg.recording = undefined;
    }
    setVars(leg, [
      ['hangup_cause', cause],
      ['hangup_cause_q850', Q850[cause] ?? '16'],
      ['start_epoch', String(epoch(leg.createdUs))],
      ['answer_epoch', String(epoch(leg.answeredUs))],
      ['end_epoch', String(epoch(this.clockUs))],
      ['duration', seconds(leg.createdUs)],
      ['billsec', seconds(leg.answeredUs)],
      ['billmsec', millis(leg.answeredUs)],
      ['sip_hangup_disposition', leg === this.first && !this.shutDown ? 'recv_bye' : 'send_bye'],
    ]);
    const cdr =
      leg === this.first && this.pbx.onCdr ? cdrOf(leg, this.clockUs, this.pbx.coreUuid) : undefined;
    if (cdr && !this.pbx.cdrAfterHangup) await this.pbx.onCdr?.(cdr);
    this.fire('CHANNEL_HANGUP_COMPLETE', leg);
    this.pbx.removeLeg(leg);
    if (cdr && this.pbx.cdrAfterHangup) await this.pbx.onCdr?.(cdr);
  }

  /** Whether FreeSWITCH is hanging everything up (a restart); set once `shuttingDown` resolved. */
  private get shutDown(): boolean {
    return this.pbx.hangingUpAll;
  }

  private custom(action: string, leg: Leg, fields: Fields): void {
    void action;
    this.pbx.fire('CUSTOM', this.clockUs, leg, { subclass: 'callcenter::info', before: fields });
  }

  private fire(name: string, leg: Leg, options: { before?: Fields; after?: Fields } = {}): void {
    this.pbx.fire(name, this.clockUs, leg, options);
  }

  /** Advances the virtual clock by `seconds` and waits one real step. */
  private async pause(seconds = 0.2): Promise<void> {
    this.clockUs += seconds * 1e6;
    await new Promise((resolve) => setTimeout(resolve, this.step));
  }
}

// ---- formatting -------------------------------------------------------------------------------------------

const CALLING: Record<string, [string, string, string]> = {
  CHANNEL_CREATE: ['switch_core_state_machine.c', 'switch_core_session_run', '627'],
  CHANNEL_ANSWER: ['switch_channel.c', 'switch_channel_perform_mark_answered', '3905'],
  CHANNEL_BRIDGE: ['switch_ivr_bridge.c', 'switch_ivr_multi_threaded_bridge', '1640'],
  CHANNEL_UNBRIDGE: ['switch_ivr_bridge.c', 'switch_ivr_multi_threaded_bridge', '1774'],
  CHANNEL_HANGUP_COMPLETE: ['switch_core_state_machine.c', 'switch_core_session_reporting_state', '1008'],
  RECORD_START: ['switch_ivr_async.c', 'record_callback', '1291'],
  RECORD_STOP: ['switch_ivr_async.c', 'record_callback', '1415'],
  CHANNEL_DATA: ['mod_commands.c', 'uuid_dump_function', '5843'],
  CUSTOM: ['mod_callcenter.c', 'cc_send_presence', '1110'],
};

const Q850: Record<string, string> = {
  NORMAL_CLEARING: '16',
  USER_BUSY: '17',
  NO_ANSWER: '19',
  LOSE_RACE: '26',
  ORIGINATOR_CANCEL: '487',
  SYSTEM_SHUTDOWN: '16', // switch_channel_cause_q850: a cause past INTERWORKING is NORMAL_CLEARING
  BLIND_TRANSFER: '16',
  ATTENDED_TRANSFER: '16',
};

/** switch_channel_event_set_basic_data's order: state, names, directions, call uuid, answer state, profile. */
function basicData(leg: Leg): Record<string, string> {
  return {
    'Channel-State': leg.state,
    'Channel-Call-State': leg.callState,
    'Channel-State-Number': leg.state === 'CS_REPORTING' ? '11' : leg.state === 'CS_INIT' ? '2' : '4',
    'Channel-Name': leg.name,
    'Unique-ID': leg.uuid,
    'Call-Direction': leg.direction,
    'Presence-Call-Direction': leg.direction,
    'Channel-HIT-Dialplan': leg.direction === 'inbound' ? 'true' : 'false',
    ...(leg.presenceId ? { 'Channel-Presence-ID': leg.presenceId } : {}),
    'Channel-Call-UUID': leg.callUuid,
    'Answer-State': leg.answerState,
    ...(leg.hangupCause ? { 'Hangup-Cause': leg.hangupCause } : {}),
    'Channel-Read-Codec-Name': 'PCMA',
    'Channel-Read-Codec-Rate': '8000',
    'Channel-Read-Codec-Bit-Rate': '64000',
    'Channel-Write-Codec-Name': 'PCMA',
    'Channel-Write-Codec-Rate': '8000',
    'Channel-Write-Codec-Bit-Rate': '64000',
    ...Object.fromEntries(Object.entries(profile(leg)).map(([key, value]) => [`Caller-${key}`, value])),
  };
}

/** The caller profile's fields (switch_caller_profile_event_set_data), prefixed Caller- or Other-Leg-. */
function profile(leg: Leg): Record<string, string> {
  return {
    Direction: leg.direction,
    'Logical-Direction': leg.direction,
    Username: leg.direction === 'inbound' && leg.context !== 'public' ? leg.callerNum : '',
    Dialplan: 'XML',
    'Caller-ID-Name': leg.callerName,
    'Caller-ID-Number': leg.callerNum,
    'Orig-Caller-ID-Name': leg.callerName,
    'Orig-Caller-ID-Number': leg.callerNum,
    'Network-Addr': leg.name.includes('external') ? '198.51.100.7' : '192.0.2.21',
    ANI: leg.callerNum,
    'Destination-Number': leg.dest,
    'Unique-ID': leg.uuid,
    Source: 'mod_sofia',
    Context: leg.context,
    'Channel-Name': leg.name,
    'Profile-Index': String(leg.profileIndex),
    'Profile-Created-Time': String(Math.round(leg.createdUs)),
    'Channel-Created-Time': String(Math.round(leg.createdUs)),
    'Channel-Answered-Time': String(Math.round(leg.answeredUs)),
    'Channel-Progress-Time': '0',
    'Channel-Progress-Media-Time': '0',
    'Channel-Hangup-Time': String(Math.round(leg.hangupUs)),
    'Channel-Transfer-Time': '0',
    'Channel-Resurrect-Time': '0',
    'Channel-Bridged-Time': String(Math.round(leg.bridgedUs)),
    'Channel-Last-Hold': '0',
    'Channel-Hold-Accum': '0',
    'Screen-Bit': 'true',
    'Privacy-Hide-Name': String(Boolean(leg.hideNumber)),
    'Privacy-Hide-Number': String(Boolean(leg.hideNumber)),
  };
}

const CHANNEL_COLUMNS = [
  'uuid',
  'direction',
  'created',
  'created_epoch',
  'name',
  'state',
  'cid_name',
  'cid_num',
  'ip_addr',
  'dest',
  'application',
  'application_data',
  'dialplan',
  'context',
  'read_codec',
  'read_rate',
  'read_bit_rate',
  'write_codec',
  'write_rate',
  'write_bit_rate',
  'secure',
  'hostname',
  'presence_id',
  'presence_data',
  'accountcode',
  'callstate',
  'callee_name',
  'callee_num',
  'callee_direction',
  'call_uuid',
  'sent_callee_name',
  'sent_callee_num',
  'initial_cid_name',
  'initial_cid_num',
  'initial_ip_addr',
  'initial_dest',
  'initial_dialplan',
  'initial_context',
];

const CALL_COLUMNS = [
  'uuid',
  'direction',
  'created',
  'created_epoch',
  'name',
  'state',
  'cid_name',
  'cid_num',
  'ip_addr',
  'dest',
  'presence_id',
  'presence_data',
  'accountcode',
  'callstate',
  'callee_name',
  'callee_num',
  'callee_direction',
  'call_uuid',
  'hostname',
  'sent_callee_name',
  'sent_callee_num',
];

/** One row of switch_core_sqldb's channels table, in its column order. */
function channelRow(leg: Leg): Record<string, string> {
  const values: Record<string, string> = {
    uuid: leg.uuid,
    direction: leg.direction,
    created: new Date(leg.createdUs / 1000).toISOString().replace('T', ' ').slice(0, 19),
    created_epoch: String(Math.floor(leg.createdUs / 1e6)),
    name: leg.name,
    state: leg.state,
    cid_name: leg.callerName,
    cid_num: leg.callerNum,
    ip_addr: leg.name.includes('external') ? '198.51.100.7' : '192.0.2.21',
    dest: leg.dest,
    application: leg.application,
    application_data: '',
    dialplan: 'XML',
    context: leg.context,
    read_codec: 'PCMA',
    read_rate: '8000',
    read_bit_rate: '64000',
    write_codec: 'PCMA',
    write_rate: '8000',
    write_bit_rate: '64000',
    secure: '',
    hostname: 'pbx-berlin-1',
    presence_id: leg.presenceId,
    presence_data: '',
    accountcode: '',
    callstate: leg.callState,
    callee_name: '',
    callee_num: '',
    callee_direction: '',
    call_uuid: leg.callUuid,
    sent_callee_name: '',
    sent_callee_num: '',
    initial_cid_name: leg.callerName,
    initial_cid_num: leg.callerNum,
    initial_ip_addr: leg.name.includes('external') ? '198.51.100.7' : '192.0.2.21',
    initial_dest: leg.profiles[0]?.dest ?? leg.dest,
    initial_dialplan: 'XML',
    initial_context: leg.initialContext,
  };
  return Object.fromEntries(CHANNEL_COLUMNS.map((key) => [key, values[key]]));
}

function setVars(leg: Leg, vars: Fields): void {
  for (const [name, value] of vars) leg.vars.set(name, value);
}

/** A multi-valued variable (ARRAY::): one value is a string, several an array (as `event json` sends them). */
function pushVar(leg: Leg, name: string, value: string): void {
  const current = leg.vars.get(name);
  if (current === undefined) leg.vars.set(name, value);
  else leg.vars.set(name, [...[current].flat(), value]);
}

/**
 * mod_json_cdr's record of an a-leg (the cgrates captures' shape): `core-uuid`, `switchname`,
 * `channel_data`, `callStats` (camelCase), `variables` (multi-values as `ARRAY::a|:b` strings), `app_log`,
 * then `callflow` with the newest caller profile first, each naming the legs it dialled.
 */
function cdrOf(leg: Leg, endUs: number, coreUuid: string): EslCdr {
  const variables = Object.fromEntries(
    [...leg.vars].map(([name, value]) => [name, Array.isArray(value) ? `ARRAY::${value.join('|:')}` : value]),
  );
  const profileOf = (of: Leg, context: string, dest: string) => ({
    username: of.direction === 'inbound' && context !== 'public' ? of.callerNum : '',
    dialplan: 'XML',
    caller_id_name: of.callerName,
    ani: of.callerNum,
    aniii: '',
    caller_id_number: of.callerNum,
    network_addr: of.name.includes('external') ? '198.51.100.7' : '192.0.2.21',
    rdnis: '',
    destination_number: dest,
    uuid: of.uuid,
    source: 'mod_sofia',
    context,
    chan_name: of.name,
  });
  const callflow = [...leg.profiles].reverse().map((profile, i) => ({
    dialplan: 'XML',
    profile_index: String(profile.index),
    extension: { name: profile.dest, number: profile.dest },
    caller_profile: {
      ...profileOf(leg, profile.context, profile.dest),
      ...(profile.dialled.length
        ? {
            originatee: {
              originatee_caller_profiles: profile.dialled.map((b) => profileOf(b, b.context, b.dest)),
            },
          }
        : {}),
    },
    times: {
      created_time: String(Math.round(leg.createdUs)),
      profile_created_time: String(Math.round(profile.createdUs)),
      answered_time: String(Math.round(leg.answeredUs)),
      bridged_time: String(Math.round(leg.bridgedUs)),
      hangup_time: String(Math.round(endUs)),
      transfer_time:
        i === 0 ? '0' : String(Math.round(leg.profiles[leg.profiles.length - i]?.createdUs ?? 0)),
    },
  }));
  return {
    'core-uuid': coreUuid,
    switchname: 'pbx-berlin-1',
    channel_data: { state: 'CS_REPORTING', state_number: '11', direction: leg.direction },
    callStats: {
      audio: { inbound: { raw_bytes: 0, media_packet_count: 0, mos: 4.5 }, outbound: { raw_bytes: 0 } },
    },
    variables,
    app_log: { applications: leg.apps },
    callflow,
  };
}

/** `event plain`: one `Header: value` line each, values URL-encoded, multi-values `ARRAY::a|:b` (encoded too). */
function plainBody(event: Record<string, string | string[]>): string {
  const lines = Object.entries(event).map(
    ([name, value]) => `${name}: ${urlEncoded(Array.isArray(value) ? `ARRAY::${value.join('|:')}` : value)}`,
  );
  return `${lines.join('\n')}\n\n`;
}

/** switch_url_encode: only its unsafe characters and bytes outside printable ASCII (`/` and `,` stay). */
function urlEncoded(value: string): string {
  return [...Buffer.from(value)]
    .map((byte) =>
      byte < 0x20 || byte > 0x7e || '\r\n "#%&+:;<=>?@[\\]^`{|}'.includes(String.fromCharCode(byte))
        ? `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
        : String.fromCharCode(byte),
    )
    .join('');
}

function deferred(): { promise: Promise<void>; resolve: () => void; done: boolean } {
  const handle = { promise: Promise.resolve(), resolve: () => undefined as void, done: false };
  handle.promise = new Promise<void>((resolve) => {
    handle.resolve = () => {
      handle.done = true;
      resolve();
    };
  });
  return handle;
}

/** A small seeded generator (mulberry32): the same chunk sizes every run of a seed. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
