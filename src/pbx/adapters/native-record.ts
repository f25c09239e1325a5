import { applyDecorators, BadRequestException } from '@nestjs/common';
import { ClassConstructor, plainToInstance, Transform } from 'class-transformer';
import { IsNotEmpty, IsOptional, IsString, validateSync, ValidationError } from 'class-validator';
import { isWithheldCaller, WITHHELD_NUMBER } from '../../common/phone-number';
import { FieldSources } from '../call-event-submission';
import { FieldProblem } from '../call-event-validation';
import { dropConstructorFields } from '../constructor-fields';

/**
 * What an adapter makes of one PBX post: call events shaped like the JSON API's body (the fields of
 * `CallEventDto`, not yet validated: `CallEventSubmission` does that for every PBX alike), or the reason a
 * well-formed post carries no call event at all.
 */
export interface AdapterOutcome {
  events: Record<string, unknown>[];
  /** The PBX's own name of each event field, so a 400 says which PBX field was wrong. */
  sources: FieldSources;
  /** Why nothing is stored: a b-leg, an internal call, an event type without a call. */
  ignored?: string;
  /** The PBX named no direction and the adapter inferred it: which rule decided, kept on the call. */
  directionInferred?: string;
}

/** The answer to a PBX post: the JSON API's `{accepted, duplicates}`, the call it was about, or why not. */
export interface AdapterAnswer {
  accepted: number;
  duplicates: number;
  callId?: string;
  ignored?: string;
}

/** A record's events: its call.ended, after a call.answered naming `answerer` when someone picked up. */
export function endedAndAnswered(
  ended: Record<string, unknown> & { callId: string },
  answerer: string | undefined,
  answeredAt: () => string,
): Record<string, unknown>[] {
  if (!answerer) return [ended];
  return [{ event: 'call.answered', callId: ended.callId, extension: answerer, at: answeredAt() }, ended];
}

export function ignoredPost(reason: string): AdapterOutcome {
  return { events: [], sources: {}, ignored: reason };
}

/**
 * An inbound call whose caller withheld the number (or whose number is masked or missing): a real call,
 * posted on as `anonymous` (SPEC §9), so it is registered without a number and bound to nobody.
 */
export function withheldCaller(outcome: AdapterOutcome): AdapterOutcome {
  const events = outcome.events.map((event) =>
    event.direction === 'inbound' &&
    (event.phoneNumber === undefined ||
      (typeof event.phoneNumber === 'string' && isWithheldCaller(event.phoneNumber)))
      ? { ...event, phoneNumber: WITHHELD_NUMBER }
      : event,
  );
  return { ...outcome, events };
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A PBX record checked against its DTO; a 400 naming every bad field by its path in the PBX's format
 * (`variables.uuid`, `callflow.0.caller_profile`; `at` says where a nested record sits: `msg`), in the
 * same shape as the JSON API's 400s.
 */
export function validateNative<T extends object>(
  type: ClassConstructor<T>,
  plain: unknown,
  what: string,
  at?: string,
): T {
  if (!isRecord(plain)) {
    throw nativeBadRequest(`the body is not a ${what}`, [
      { field: at ?? '(body)', problems: [`expected a ${what}`] },
    ]);
  }
  const record = plainToInstance(type, dropConstructorFields(plain));
  const errors = validateSync(record, { forbidUnknownValues: false });
  if (errors.length) throw nativeBadRequest(`invalid ${what}: nothing was stored`, flatten(errors, at));
  return record;
}

export function nativeBadRequest(message: string, errors: FieldProblem[]): BadRequestException {
  return new BadRequestException({ statusCode: 400, error: 'Bad Request', message, errors });
}

/** One problem for one field, e.g. a value the DTO accepted but that means nothing (30 February). */
export function badField(what: string, field: string, problem: string): BadRequestException {
  return nativeBadRequest(`invalid ${what}: nothing was stored`, [{ field, problems: [problem] }]);
}

function flatten(errors: ValidationError[], parent?: string): FieldProblem[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const own = error.constraints ? [{ field, problems: Object.values(error.constraints) }] : [];
    return [...own, ...flatten(error.children ?? [], field)];
  });
}

/** Form fields and JSON values alike: trimmed text, `''` (an unset dialplan variable) as absent. */
export function optionalText({ value }: { value: unknown }): unknown {
  if (typeof value === 'number') return String(value);
  if (typeof value !== 'string') return value;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

/** Optional text compared without case (`Inbound`, `INBOUND`). */
export function lowerText({ value }: { value: unknown }): unknown {
  const cleaned = optionalText({ value });
  return typeof cleaned === 'string' ? cleaned.toLowerCase() : cleaned;
}

/** An optional text field of a PBX record (`optionalText`). */
export function OptionalText(): PropertyDecorator {
  return applyDecorators(Transform(optionalText), IsOptional(), IsString());
}

/** A required text field of a PBX record (`text`), not empty. */
export function RequiredText(): PropertyDecorator {
  return applyDecorators(Transform(text), IsString(), IsNotEmpty());
}

/** Required text: trimmed, numbers as their digits (PBXs are loose about JSON types). */
export function text({ value }: { value: unknown }): unknown {
  if (typeof value === 'number') return String(value);
  return typeof value === 'string' ? value.trim() : value;
}
