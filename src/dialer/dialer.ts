import { LINE_RULE_TEXT, LINE_TEXT_PATTERN, normaliseLine } from '../common/line-number';

/**
 * The PBX side of click-to-call (docs/API.md): a `Dialer` asks the PBX to ring an employee's extension and
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
  /**
   * The click's line (its LINE_NUMBER, docs/API.md "Lines") in line form (`normaliseLine`), so the PBX's
   * dialplan can pick the trunk and caller ID; none when the click named none.
   */
  line?: string;
}

/** The PBX did not take the request: `message` names the cause and never carries a secret. */
export class DialError extends Error {}

/**
 * The PBX spoke its protocol and refused the login (the page's "test connection" says `login refused`,
 * never the server's words; `isCredentialsRefused`).
 */
export class LoginRefused extends DialError {
  readonly credentialsRefused = true;
}

/** A request the bridge refuses to send as it is (a value the protocol would split): never retried. */
export class DialRefused extends Error {}

/**
 * The shape of a portal's CALL_ID, as `telephony.externalcall.register` and the click event give it:
 * `externalCall.<hex>.<unix time>`. Nothing else is ever sent to a PBX as one.
 */
export const PORTAL_CALL_ID_SHAPE = /^externalCall\.[0-9a-f]{1,64}\.\d{1,12}$/i;

/** Why a click's CALL_ID is refused (not of the portal's shape), or undefined when it is one. */
export function portalCallIdProblem(callId: string): string | undefined {
  if (PORTAL_CALL_ID_SHAPE.test(callId)) return undefined;
  return `CALL_ID ${JSON.stringify(callId.slice(0, 80))} is not a portal call id (externalCall.<hex>.<digits>): refused, never dialled`;
}

/**
 * A value written into a line-based protocol (an AMI header, an event-socket command): refused when it holds
 * a line break or another control character, which would end the header and start one of the sender's.
 */
export function protocolValue(value: string, what: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(value)) {
    throw new DialRefused(`${what} holds a line break or control character: refused, never sent to the PBX`);
  }
  return value;
}

export abstract class Dialer {
  /** What health shows: `ami tcp://pbx.local:5038`, never credentials. */
  abstract readonly target: string;

  /** Resolves once the PBX accepted the request; rejects with a DialError naming the cause. */
  abstract originate(request: OriginateRequest): Promise<void>;

  /**
   * Connects and logs in, placing no call (the application's page's "test connection"); rejects with a
   * DialError naming the cause. Adapters that cannot log in without placing a call say so.
   */
  checkLogin(): Promise<void> {
    return Promise.reject(new DialError('this dial mode has no login to test without placing a call'));
  }
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

/**
 * A value that goes unchanged into a PBX's argument list (an AMI `Variable:` value, split by Asterisk on
 * commas; a FreeSWITCH `{var=value}` prefix, split on commas and closed by `}`): refused unless it is only
 * letters, digits and `._:-`, which neither splits nor quotes.
 */
export function argumentValue(value: string, what: string): string {
  if (!/^[\w.:-]*$/.test(value)) {
    throw new DialRefused(`${what} holds characters the PBX would split on: refused, never sent to the PBX`);
  }
  return value;
}

/**
 * The click's line as it goes into a PBX command (AMI `CRM_LINE`, ESL `crm_line`, `{line}`): `''` for none;
 * refused unless it has the line's shape (LINE_TEXT_PATTERN: letters, digits and `._+-`), so no `,`, `}`,
 * space or line break can split the command or start another.
 */
export function lineValue(line: string | undefined): string {
  if (!line) return '';
  if (!LINE_TEXT_PATTERN.test(line)) {
    throw new DialRefused(`the line is not ${LINE_RULE_TEXT}: refused, never sent to the PBX`);
  }
  return line;
}

/**
 * A click's LINE_NUMBER as the originate's line (`normaliseLine`, as LINES and the intake write lines); one
 * that is no line is left out, and `warn` is told: the click is still dialled, on the PBX's default trunk.
 */
export function clickLine(raw: string | undefined, warn: (problem: string) => void): string | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const line = normaliseLine(raw);
  if (line === undefined) {
    warn(
      `its LINE_NUMBER ${JSON.stringify(raw.slice(0, 60))} is not ${LINE_RULE_TEXT}: dialled without a line`,
    );
  }
  return line;
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
