import { applyFilter, applyOrder, pageOf } from '../list-query';
import { MethodContext, MethodDefinition, MethodResult } from '../method-registry';
import { intParam, isPlainObject, param, Params, stringParam } from '../params';
import { portalErrors } from '../sandbox-portal-error';
import { EmployeeSeed } from '../seed';

/** User fields that may also be given as top-level parameters of user.get. */
const TOP_LEVEL_FILTER_FIELDS = new Set([
  'ID',
  'ACTIVE',
  'NAME',
  'LAST_NAME',
  'EMAIL',
  'UF_PHONE_INNER',
  'WORK_POSITION',
  'USER_TYPE',
]);

/** user.get takes its filter as FILTER[...] or, as older clients do, as top-level fields (`?ID=1`). */
function userFilter(params: Params): Record<string, unknown> {
  const nested = param(params, 'FILTER');
  const filter: Record<string, unknown> = isPlainObject(nested) ? { ...nested } : {};
  for (const [key, value] of Object.entries(params)) {
    if (TOP_LEVEL_FILTER_FIELDS.has(key.replace(/^[=!<>%@]+/, '').toUpperCase())) filter[key] = value;
  }
  return filter;
}

function readUserField(employee: EmployeeSeed, field: string): unknown {
  if (field === 'ACTIVE') return employee.ACTIVE ? 'Y' : 'N';
  return (employee as unknown as Record<string, unknown>)[field];
}

/** The portal writes ACTIVE as a boolean in answers but filters take Y/N, true/false or 1/0. */
function normaliseActive(filter: Record<string, unknown>): Record<string, unknown> {
  for (const key of Object.keys(filter)) {
    if (key.replace(/^[=!]+/, '').toUpperCase() !== 'ACTIVE') continue;
    const value = String(filter[key]).toLowerCase();
    filter[key] = ['y', 'true', '1'].includes(value) ? 'Y' : 'N';
  }
  return filter;
}

function userGet(params: Params, context: MethodContext): MethodResult {
  const filter = normaliseActive(userFilter(params));
  const sortField = stringParam(params, 'sort') ?? 'ID';
  const direction = stringParam(params, 'order') ?? 'ASC';
  const rows = applyOrder(
    applyFilter(context.state.employees.all(), filter, readUserField),
    { [sortField]: direction },
    readUserField,
  );
  const page = pageOf(rows, intParam(params, 'start'));
  return {
    result: page.rows.map((employee) => context.state.employees.present(employee)),
    total: page.total,
    next: page.next,
  };
}

function currentEmployee(context: MethodContext): EmployeeSeed {
  const employee = context.state.employees.get(context.caller.userId);
  if (!employee) throw portalErrors.invalidCredentials();
  return employee;
}

function userCurrent(_params: Params, context: MethodContext): MethodResult {
  return { result: context.state.employees.present(currentEmployee(context)) };
}

function profile(_params: Params, context: MethodContext): MethodResult {
  const employee = currentEmployee(context);
  return {
    result: {
      ID: String(employee.ID),
      ADMIN: employee.ADMIN === true,
      NAME: employee.NAME,
      LAST_NAME: employee.LAST_NAME,
      PERSONAL_GENDER: '',
      PERSONAL_PHOTO: null,
      TIME_ZONE: '',
      TIME_ZONE_OFFSET: 0,
    },
  };
}

/**
 * user.admin: whether the caller (the webhook's user, or the user an OAuth token was issued to) is a
 * portal administrator; the seed's `ADMIN` says who is.
 */
function userAdmin(_params: Params, context: MethodContext): MethodResult {
  return { result: context.state.employees.get(context.caller.userId)?.ADMIN === true };
}

export const userMethods: MethodDefinition[] = [
  { name: 'user.get', scope: 'user', handler: userGet },
  { name: 'user.current', scope: null, handler: userCurrent },
  { name: 'profile', scope: null, handler: profile },
  { name: 'user.admin', scope: null, handler: userAdmin },
];
