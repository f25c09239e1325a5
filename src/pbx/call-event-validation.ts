import { BadRequestException } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validateSync, ValidationError } from 'class-validator';
import { DateTime } from 'luxon';
import { CallEvent } from '../calls/call';
import { toE164, withheldIn } from '../common/phone-number';
import { LINE_RULE_TEXT, normaliseLine } from '../common/line-number';
import { CallEventDto } from './call-event.dto';
import { dropConstructorFields } from './constructor-fields';

export const MAX_EVENTS_PER_REQUEST = 500;

export interface FieldProblem {
  index?: number;
  field: string;
  problems: string[];
}

/**
 * Turns a PBX body (one event or an array of them) into normalised call events, or throws one 400 that
 * names every bad field and, for an array, the index of each bad event. Nothing of a bad body is stored.
 */
export function parseCallEvents(body: unknown, defaultCountry?: string): CallEvent[] {
  const isList = Array.isArray(body);
  const items: unknown[] = isList ? body : [body];
  if (isList && items.length === 0) throw badRequest('the body is an empty array: send 1 to 500 events', []);
  if (items.length > MAX_EVENTS_PER_REQUEST) {
    throw badRequest(`too many events: ${items.length} in one body, at most ${MAX_EVENTS_PER_REQUEST}`, []);
  }
  const problems: FieldProblem[] = [];
  const events: CallEvent[] = [];
  items.forEach((item, index) => {
    const at = isList ? index : undefined;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      problems.push({ index: at, field: '(event)', problems: ['each event must be a JSON object'] });
      return;
    }
    const dto = plainToInstance(CallEventDto, dropConstructorFields(item));
    const errors = validateSync(dto, { whitelist: true, forbidUnknownValues: true });
    if (errors.length) {
      problems.push(...errors.map((error) => toProblem(error, at)));
      return;
    }
    const event = normalise(dto, defaultCountry, at, problems);
    if (event) events.push(event);
  });
  if (problems.length) throw badRequest('invalid call events: nothing was stored', problems);
  return events;
}

function normalise(
  dto: CallEventDto,
  defaultCountry: string | undefined,
  index: number | undefined,
  problems: FieldProblem[],
): CallEvent | undefined {
  const event: CallEvent = { ...dto };
  if (dto.extensions !== undefined && dto.event !== 'call.started') {
    const problem =
      'extensions is only taken on call.started (on call.answered, extension names who answered)';
    problems.push({ index, field: 'extensions', problems: [problem] });
    return undefined;
  }
  if (dto.phoneNumber !== undefined) {
    const e164 = withheldIn(dto.phoneNumber) ?? toE164(dto.phoneNumber, defaultCountry);
    if (!e164) {
      const hint = defaultCountry ? '' : ' (a national number needs DEFAULT_COUNTRY on the bridge)';
      const problem = `phoneNumber is not a phone number${hint}; a withheld number is "anonymous"`;
      problems.push({ index, field: 'phoneNumber', problems: [problem] });
      return undefined;
    }
    event.phoneNumber = e164;
  }
  if (dto.line !== undefined) {
    const line = normaliseLine(dto.line, defaultCountry);
    if (line === undefined) {
      problems.push({ index, field: 'line', problems: [`line must be ${LINE_RULE_TEXT}`] });
      return undefined;
    }
    event.line = line;
  }
  for (const field of ['at', 'startedAt'] as const) {
    if (dto[field] !== undefined && !isRealDateTime(dto[field])) {
      problems.push({ index, field, problems: [`${field} is not a real date-time`] });
      return undefined;
    }
  }
  return event;
}

/** The parts of a date-time the DTO's pattern already took (ISO 8601 with a UTC offset). */
const DATE_TIME_PARTS =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?(?:\.\d+)?(?:Z|[+-](\d{2}):?(\d{2}))$/;
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Whether a date-time the DTO took names a real moment. Every event carries one or two, so the everyday
 * case (month, day, hour, minute and second within their ranges, an offset of at most 14 hours) is told
 * by comparing numbers; anything else (a 29 February, 24:00, an odd offset) is left to luxon's parser.
 */
function isRealDateTime(text: string): boolean {
  const parts = DATE_TIME_PARTS.exec(text);
  if (parts) {
    const [month, day, hour, minute, second] = [2, 3, 4, 5, 6].map((index) => Number(parts[index] ?? 0));
    const offsetHours = Number(parts[7] ?? 0);
    const offsetMinutes = Number(parts[8] ?? 0);
    const plain =
      month >= 1 &&
      month <= 12 &&
      day >= 1 &&
      day <= (month === 2 ? 28 : DAYS_IN_MONTH[month - 1]) &&
      hour <= 23 &&
      minute <= 59 &&
      second <= 59 &&
      offsetHours <= 14 &&
      offsetMinutes <= 59;
    if (plain) return true;
  }
  return DateTime.fromISO(text, { setZone: true }).isValid;
}

function toProblem(error: ValidationError, index: number | undefined): FieldProblem {
  return { index, field: error.property, problems: Object.values(error.constraints ?? {}) };
}

function badRequest(message: string, errors: FieldProblem[]): BadRequestException {
  return new BadRequestException({ statusCode: 400, error: 'Bad Request', message, errors });
}
