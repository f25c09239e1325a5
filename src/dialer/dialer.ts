/**
 * The PBX side of click-to-call (SPEC.md §6): a `Dialer` asks the PBX to ring an employee's extension and
 * then dial a number, carrying the portal's CALL_ID so the PBX's report of the call names it. One adapter per
 * DIAL_MODE (`ami-dialer.ts`, `esl-dialer.ts`, `http-dialer.ts`).
 */
export interface OriginateRequest {
  /** The employee's internal number. */
  extension: string;
  /** The number to dial. */
  number: string;
  /** The portal's CALL_ID. */
  crmCallId: string;
  /** The employee's portal user. */
  userId: number;
  /** What the employee's phone shows while it rings. */
  callerId?: string;
}

/** The PBX did not take the request: `message` names the cause and never carries a secret. */
export class DialError extends Error {}

export abstract class Dialer {
  /** What health shows: `ami tcp://pbx.local:5038`, never credentials. */
  abstract readonly target: string;

  /** Resolves once the PBX accepted the request; rejects with a DialError naming the cause. */
  abstract originate(request: OriginateRequest): Promise<void>;
}

/** A value that goes into a line-based protocol: no line breaks, no control characters. */
export function oneLine(value: string): string {
  // eslint-disable-next-line no-control-regex -- removing control characters is the point
  return value.replace(/[\u0000-\u001f\u007f]/g, '');
}

/** A dial string (number or extension): digits, letters and `+*#._-` only, so it cannot change a command. */
export function dialString(value: string): string {
  return value.replace(/[^\w+*#.-]/g, '');
}

/** Fills `{name}` placeholders; unknown names stay as they are. */
export function fillTemplate(
  template: string,
  values: Record<string, string>,
  encode: (value: string) => string = (value) => value,
): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) =>
    name in values ? encode(values[name]) : whole,
  );
}

/** A connection error's code and address, e.g. `ECONNREFUSED 127.0.0.1:5038`. */
export function networkCause(error: unknown): string {
  const { code, address, port, message } = error as NodeJS.ErrnoException & {
    address?: string;
    port?: number;
  };
  if (code && address) return `${code} ${address}${port ? `:${port}` : ''}`;
  return code ?? message ?? String(error);
}
