import { stringify } from 'qs';
import { CallRecord, PortalStep } from './call';
import { cardKey, cardMoves, finishKey, ringGroupRest, samePerson } from './call-card';
import { deliveryPriority } from './call-lifecycle';
import { addTaskParams, completeTaskParams, findTaskParams, TASK_PRIORITY } from './missed-call-task';
import { attachTranscriptionParams, findTranscriptParams, TRANSCRIPT_PRIORITY } from './call-transcript';
import {
  attachRecordParams,
  finishParams,
  hideParams,
  PortalParams,
  registerParams,
  showParams,
  StepLabels,
  uploadRecordParams,
} from './portal-commands';

/**
 * What delivery sends next, as data: the step table says what each kind of portal command is, and
 * `planBatch` packs due calls into one `batch` request. Pure: no store, no clock, no HTTP. A new kind of
 * step (a ringing call's register, show/hide, a recording upload, a task) is one more entry in
 * `STEP_KINDS` (and its name in `PortalStep`), not one more branch in the delivery loop.
 */

/** One kind of portal command a call's step takes. */
export interface StepKind {
  /** The portal method (`telephony.externalcall.*`). */
  method: string;
  /**
   * The command's parameters, from the call as stored right before sending; `labels` names the call's other
   * commands in the same request (a later one may use an earlier one's answer, `$result[label]`).
   */
  params(call: CallRecord, labels?: StepLabels): PortalParams;
  /**
   * Priority class: calls whose next step has a lower class are packed first when not all fit, and the
   * store lists them first (`deliveryPriority`, stored beside `due_at`): 0 for a live call's register and
   * card moves, 2 for missed-call tasks, 1 for the rest; within a class the store's order (oldest due
   * first).
   */
  priority: number | ((call: CallRecord) => number);
  /**
   * The step of the same call that may ride in the same request after this one (both safe to repeat
   * together), or undefined. Register has none on purpose: register and finish of one call never share
   * a request (docs/decisions/delivery-and-budget.md).
   */
  sharesRequestWith?(call: CallRecord): PortalStep | undefined;
  /**
   * Bytes the command carries beyond `params` (file content added right before sending); the planner packs
   * them against `BatchLimits.maxPayloadBytes`, not against `maxBytes`.
   */
  payloadBytes?(call: CallRecord): number;
}

/** A recording to attach once the call is finished on the portal (it follows finish in its request). */
function recordingDue(call: CallRecord): PortalStep | undefined {
  const due =
    call.party.ended?.recordingUrl &&
    !call.recording.file &&
    !call.delivery.failed &&
    !call.recording.attached &&
    !call.recording.failed;
  return due ? 'attachRecord' : undefined;
}

/** Whether anyone but the user finish names still has the card open (finish closes only its own). */
function othersToHide(call: CallRecord): boolean {
  const finisher = finishKey(call);
  return cardMoves(call).hide.some((key) => finisher === undefined || !samePerson(call, key, finisher));
}

export const STEP_KINDS: Readonly<Record<PortalStep, StepKind>> = {
  register: {
    method: 'telephony.externalcall.register',
    // The employee is fixed while marking the batch as sent; before that the size is estimated without it.
    params: (call) => registerParams(call, call.portal.user ?? {}),
    priority: deliveryPriority,
    // A ring group: the rest of it is shown the card in the same request (show is safe to repeat, and a
    // repeated register of an unfinished call answers the same CALL_ID).
    sharesRequestWith: (call) =>
      ringGroupRest(call, cardKey(call.party.extension, call.party.userId)).length > 0 ? 'show' : undefined,
  },
  show: {
    method: 'telephony.externalcall.show',
    params: showParams,
    priority: deliveryPriority,
    sharesRequestWith: (call) => (call.portal.callId && cardMoves(call).hide.length > 0 ? 'hide' : undefined),
  },
  hide: {
    method: 'telephony.externalcall.hide',
    params: hideParams,
    priority: deliveryPriority,
    sharesRequestWith: (call) => (call.party.ended && !call.delivery.failed ? recordingDue(call) : undefined),
  },
  finish: {
    method: 'telephony.externalcall.finish',
    params: finishParams,
    priority: 1,
    // The others shown the card are hidden with the finish (it closes only its own user's card).
    sharesRequestWith: (call) => (othersToHide(call) ? 'hide' : recordingDue(call)),
  },
  attachRecord: { method: 'telephony.externalcall.attachRecord', params: attachRecordParams, priority: 1 },
  // The recording the bridge holds: its content rides as FILE_CONTENT, or (too big) the answer's uploadUrl
  // takes the file.
  uploadRecord: {
    method: 'telephony.externalcall.attachRecord',
    params: uploadRecordParams,
    priority: 1,
    payloadBytes: (call) =>
      call.recording.file?.upload === 'content' ? (call.recording.file.wireBytes ?? 0) : 0,
  },
  // Missed-call tasks (missed-call-task.ts): below history, and each alone in its call's request.
  addTask: { method: 'tasks.task.add', params: addTaskParams, priority: TASK_PRIORITY },
  findTask: { method: 'tasks.task.list', params: findTaskParams, priority: TASK_PRIORITY },
  completeTask: { method: 'tasks.task.complete', params: completeTaskParams, priority: TASK_PRIORITY },
  // The transcript (call-transcript.ts): the last of a call's history, below everything, each alone; after
  // a lost answer the call's statistics say whether it arrived before it is sent again.
  attachTranscription: {
    method: 'telephony.call.attachTranscription',
    params: attachTranscriptionParams,
    priority: TRANSCRIPT_PRIORITY,
  },
  findTranscript: {
    method: 'voximplant.statistic.get',
    params: findTranscriptParams,
    priority: TRANSCRIPT_PRIORITY,
  },
};

/** The file content bytes one request carries by default: RECORDING_REQUEST_MAX_MB's default. */
export const DEFAULT_MAX_PAYLOAD_BYTES = 8_000_000;

/** The priority class of a call's next step. */
export function priorityOf(
  call: CallRecord,
  kinds: Readonly<Record<PortalStep, StepKind>> = STEP_KINDS,
): number {
  const priority = kinds[call.delivery.nextStep as PortalStep].priority;
  return typeof priority === 'number' ? priority : priority(call);
}

/**
 * The byte cap of one request's commands by default: 1 MB, what a proxy in front of a portal commonly
 * accepts (nginx's default body limit is 1 MiB). Today's 50 commands take some 30 KB, so it changes
 * nothing there; it keeps larger future steps (uploads, tasks) from building a request nobody accepts.
 */
export const DEFAULT_MAX_BATCH_BYTES = 1_000_000;

/**
 * Counted per command on top of its encoded label, method and parameters: the JSON around it, and what
 * marking the batch adds after planning (the register's employee, the CRM binding: well under this).
 */
const COMMAND_OVERHEAD_BYTES = 96;

/** One portal command planned for one call. */
export interface PlannedCommand {
  label: string;
  step: PortalStep;
}

/** A command as it goes on the wire (the shape of the portal client's `BatchCommand`). */
export interface WireCommand {
  label: string;
  method: string;
  params: PortalParams;
}

export interface BatchLimits {
  /** Commands per request (B24_BATCH_SIZE). */
  maxCommands: number;
  /** Bytes of encoded commands per request; default DEFAULT_MAX_BATCH_BYTES. */
  maxBytes?: number;
  /** Bytes of file content (`payloadBytes`) per request; default DEFAULT_MAX_PAYLOAD_BYTES. */
  maxPayloadBytes?: number;
  /** The step table; the default is STEP_KINDS (specs pass their own to test the mechanism). */
  kinds?: Readonly<Record<PortalStep, StepKind>>;
  /**
   * Commands of a method this request may still carry (the portal's operating-time limit); unlimited when
   * absent. Asked once per method per plan.
   */
  allowance?: (method: string) => number;
}

/** The commands the call's next step takes, in the order they are sent: the step and what may share its request. */
export function dueSteps(call: CallRecord, kinds = STEP_KINDS): PortalStep[] {
  const steps: PortalStep[] = [];
  const next = call.delivery.nextStep;
  let step = next === 'wait-start' || next === 'fetchRecord' || next === 'transcribe' ? undefined : next;
  while (step && !steps.includes(step)) {
    steps.push(step);
    step = kinds[step].sharesRequestWith?.(call);
  }
  return steps;
}

/** The encoded size of one command, as the portal client puts it in a batch's `cmd` map (an estimate). */
export function commandBytes(label: string, method: string, params: PortalParams): number {
  return (
    Buffer.byteLength(label) +
    Buffer.byteLength(method) +
    Buffer.byteLength(stringify(params)) +
    COMMAND_OVERHEAD_BYTES
  );
}

/**
 * The calls and commands of one `batch` request. A call contributes the commands of its next step only
 * (and what may share that step's request): register and finish of one call never share a request,
 * because a lost answer to a request that both registered and finished a call could not be repeated
 * safely (a register after finish makes a second call). When only the finish fits, it goes alone;
 * attachRecord is the call's own next step once the finish is through.
 *
 * A call suspected of getting a request refused (`batchLimit`) caps the commands of the request it joins.
 */
export class BatchPlan {
  readonly entries: { callId: string; commands: PlannedCommand[] }[] = [];
  private size = 0;
  private bytes = 0;
  private payload = 0;
  private readonly entryBytes = new Map<string, number>();
  private readonly entryPayload = new Map<string, number>();
  private limit: number;
  private readonly maxBytes: number;
  private readonly maxPayloadBytes: number;
  private readonly kinds: Readonly<Record<PortalStep, StepKind>>;
  private readonly allowance?: (method: string) => number;
  /** Commands left per method under `allowance`, asked the first time a method comes up. */
  private readonly methodRoom = new Map<string, number>();

  constructor(maxCommands: number, options: Omit<BatchLimits, 'maxCommands'> = {}) {
    this.limit = maxCommands;
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BATCH_BYTES;
    this.maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
    this.kinds = options.kinds ?? STEP_KINDS;
    this.allowance = options.allowance;
  }

  get commandCount(): number {
    return this.size;
  }

  /** The estimated encoded size of the commands planned so far. */
  get byteCount(): number {
    return this.bytes;
  }

  /** The file content bytes the planned commands carry (`payloadBytes`). */
  get payloadByteCount(): number {
    return this.payload;
  }

  get callIds(): string[] {
    return this.entries.map((entry) => entry.callId);
  }

  /**
   * Adds as many of the call's due commands as fit, by count and by bytes, in order; returns whether any
   * did. A command over the byte cap on its own still goes alone in an empty request: the cap must not
   * make a call undeliverable.
   */
  add(call: CallRecord): boolean {
    const limit = Math.min(this.limit, call.delivery.batchLimit ?? Infinity);
    const index = this.entries.length;
    const commands: PlannedCommand[] = [];
    let bytes = 0;
    let payload = 0;
    const taken = new Map<string, number>();
    const labels: StepLabels = {};
    for (const step of dueSteps(call, this.kinds)) {
      if (this.size + commands.length >= limit) break;
      const method = this.kinds[step].method;
      if (this.roomFor(method) - (taken.get(method) ?? 0) <= 0) break;
      const label = `${step}_${index}`;
      const size = commandBytes(label, method, this.kinds[step].params(call, labels));
      labels[step] = label;
      const carried = this.kinds[step].payloadBytes?.(call) ?? 0;
      const empty = this.size === 0 && commands.length === 0;
      if (!empty && this.bytes + bytes + size > this.maxBytes) break;
      if (!empty && carried > 0 && this.payload + payload + carried > this.maxPayloadBytes) break;
      commands.push({ step, label });
      taken.set(method, (taken.get(method) ?? 0) + 1);
      bytes += size;
      payload += carried;
    }
    if (commands.length === 0) return false;
    for (const [method, count] of taken) this.methodRoom.set(method, this.roomFor(method) - count);
    this.entries.push({ callId: call.callId, commands });
    this.entryBytes.set(call.callId, bytes);
    this.entryPayload.set(call.callId, payload);
    this.size += commands.length;
    this.bytes += bytes;
    this.payload += payload;
    this.limit = limit;
    return true;
  }

  /** How many commands of each method the plan carries. */
  commandsByMethod(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const { commands } of this.entries) {
      for (const { step } of commands) {
        const method = this.kinds[step].method;
        counts.set(method, (counts.get(method) ?? 0) + 1);
      }
    }
    return counts;
  }

  /** The methods that had no room left under the allowance while planning (their commands wait). */
  exhaustedMethods(): string[] {
    return [...this.methodRoom].filter(([, room]) => room <= 0).map(([method]) => method);
  }

  private roomFor(method: string): number {
    let room = this.methodRoom.get(method);
    if (room === undefined) {
      room = this.allowance ? this.allowance(method) : Infinity;
      this.methodRoom.set(method, room);
    }
    return room;
  }

  /**
   * The same plan with only the calls in `steps` (the others were dropped while being marked as sent), each
   * with only the steps listed for it (a card move left with nobody to show or hide is dropped).
   */
  only(steps: ReadonlyMap<string, readonly PortalStep[]>): BatchPlan {
    const kept = new BatchPlan(this.limit, {
      maxBytes: this.maxBytes,
      maxPayloadBytes: this.maxPayloadBytes,
      kinds: this.kinds,
    });
    for (const entry of this.entries) {
      const keep = steps.get(entry.callId);
      if (!keep) continue;
      const commands = entry.commands.filter((command) => keep.includes(command.step));
      if (commands.length === 0) continue;
      kept.entries.push({ callId: entry.callId, commands });
      kept.entryBytes.set(entry.callId, this.entryBytes.get(entry.callId)!);
      kept.size += commands.length;
      kept.bytes += this.entryBytes.get(entry.callId)!;
      kept.entryPayload.set(entry.callId, this.entryPayload.get(entry.callId) ?? 0);
      kept.payload += this.entryPayload.get(entry.callId) ?? 0;
    }
    return kept;
  }

  /** The wire commands, built from the calls as stored right before sending. */
  commands(calls: ReadonlyMap<string, CallRecord>): WireCommand[] {
    return this.entries.flatMap((entry) => {
      const call = calls.get(entry.callId)!;
      const labels: StepLabels = {};
      return entry.commands.map(({ label, step }) => {
        const command = {
          label,
          method: this.kinds[step].method,
          params: this.kinds[step].params(call, labels),
        };
        labels[step] = label;
        return command;
      });
    });
  }
}

/** What one look at the due calls plans: the request to send, and the held calls whose hold expired. */
export interface BatchProposal {
  plan: BatchPlan;
  /** Calls waiting for a call.started (`wait-start`) that are due: their hold expired, they are parked. */
  expiredHolds: string[];
  /** Calls whose recording the bridge downloads next (`fetchRecord`): no portal command, the bridge's work. */
  fetches: string[];
  /** Calls whose recording the transcription service is asked for next (`transcribe`): the bridge's work. */
  transcribes: string[];
}

/**
 * Plans one request from the due calls (oldest due first, as the store lists them): higher priority
 * classes first, then in the given order; a call that does not fit (a suspect's smaller request, a large
 * command) leaves room for later calls that do.
 */
export function planBatch(due: readonly CallRecord[], limits: BatchLimits): BatchProposal {
  const kinds = limits.kinds ?? STEP_KINDS;
  const plan = new BatchPlan(limits.maxCommands, {
    maxBytes: limits.maxBytes,
    maxPayloadBytes: limits.maxPayloadBytes,
    kinds,
    allowance: limits.allowance,
  });
  const expiredHolds: string[] = [];
  const fetches: string[] = [];
  const transcribes: string[] = [];
  const sendable: CallRecord[] = [];
  for (const call of due) {
    if (call.delivery.nextStep === 'wait-start') expiredHolds.push(call.callId);
    else if (call.delivery.nextStep === 'fetchRecord') fetches.push(call.callId);
    else if (call.delivery.nextStep === 'transcribe') transcribes.push(call.callId);
    else if (call.delivery.nextStep) sendable.push(call);
  }
  // Array.prototype.sort is stable: within a class the store's order stays.
  sendable.sort((a, b) => priorityOf(a, kinds) - priorityOf(b, kinds));
  for (const call of sendable) plan.add(call);
  return { plan, expiredHolds, fetches, transcribes };
}
