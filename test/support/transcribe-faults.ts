/**
 * Faults the transcription test server can be told to show, each for the next `times` requests, for
 * `forMs` from now, or (neither) until cleared.
 */
export type TranscribeFaultSpec =
  /** Answer this status (503 overloaded, 429 rate limited, 500…) before doing any work. */
  | { kind: 'status'; status: number; retryAfterSec?: number; times?: number; forMs?: number }
  /** Answer 400 for a file (every file, or those whose name contains `fileName`): a file it refuses. */
  | { kind: 'refuse'; fileName?: string; times?: number; forMs?: number }
  /** Hold the answer back `ms` after the work is done. */
  | { kind: 'slow'; ms: number; times?: number; forMs?: number }
  /** Do the work, then destroy the connection without an answer. */
  | { kind: 'lose-answer'; times?: number; forMs?: number };

export type ActiveTranscribeFault = TranscribeFaultSpec & {
  id: number;
  remaining: number | null;
  until: number | null;
};

const KINDS = ['status', 'refuse', 'slow', 'lose-answer'];

/** The spec, or a message naming the field that is wrong. */
export function parseTranscribeFault(body: unknown): TranscribeFaultSpec | string {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'send a JSON object';
  const spec = body as Record<string, unknown>;
  if (!KINDS.includes(spec.kind as string)) return `kind must be one of ${KINDS.join(', ')}`;
  const positiveInt = (name: string) =>
    spec[name] === undefined || (Number.isInteger(spec[name]) && (spec[name] as number) > 0)
      ? null
      : `${name} must be a positive integer`;
  const problem =
    positiveInt('times') ??
    positiveInt('forMs') ??
    (spec.kind === 'status' &&
    !(Number.isInteger(spec.status) && (spec.status as number) >= 400 && (spec.status as number) <= 599)
      ? 'status must be an HTTP error status (400-599)'
      : null) ??
    (spec.kind === 'status' ? positiveInt('retryAfterSec') : null) ??
    (spec.kind === 'slow' && !(Number.isInteger(spec.ms) && (spec.ms as number) >= 0)
      ? 'ms must be a non-negative integer'
      : null) ??
    (spec.kind === 'refuse' && spec.fileName !== undefined && typeof spec.fileName !== 'string'
      ? 'fileName must be a string'
      : null);
  return problem ?? (spec as TranscribeFaultSpec);
}

/** The active faults, consumed in the order they were added. */
export class TranscribeFaults {
  private faults: ActiveTranscribeFault[] = [];
  private nextId = 1;

  add(spec: TranscribeFaultSpec): ActiveTranscribeFault {
    const fault = {
      ...spec,
      id: this.nextId++,
      remaining: spec.times ?? null,
      until: spec.forMs === undefined ? null : Date.now() + spec.forMs,
    } as ActiveTranscribeFault;
    this.faults.push(fault);
    return { ...fault };
  }

  list(): ActiveTranscribeFault[] {
    this.expire();
    return this.faults.map((fault) => ({ ...fault }));
  }

  clear(): void {
    this.faults = [];
  }

  /** The first live fault of `kind` that `applies`, used once. */
  take<K extends TranscribeFaultSpec['kind']>(
    kind: K,
    applies: (fault: Extract<ActiveTranscribeFault, { kind: K }>) => boolean = () => true,
  ): Extract<ActiveTranscribeFault, { kind: K }> | undefined {
    this.expire();
    const fault = this.faults.find(
      (candidate): candidate is Extract<ActiveTranscribeFault, { kind: K }> =>
        candidate.kind === kind && applies(candidate as Extract<ActiveTranscribeFault, { kind: K }>),
    );
    if (!fault) return undefined;
    if (fault.remaining !== null) {
      fault.remaining -= 1;
      if (fault.remaining <= 0) this.faults = this.faults.filter((candidate) => candidate !== fault);
    }
    return { ...fault };
  }

  private expire(): void {
    const now = Date.now();
    this.faults = this.faults.filter((fault) => fault.until === null || fault.until > now);
  }
}
