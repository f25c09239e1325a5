import { pageOf } from '../list-query';
import { MethodContext, MethodDefinition, MethodResult } from '../method-registry';
import { intParam, isPlainObject, listParam, objectParam, param, Params } from '../params';
import { portalErrors, SandboxPortalError } from '../sandbox-portal-error';
import { parseDeadline, taskFieldName, TaskRecord } from '../task-store';

const taskNotFound = () => new SandboxPortalError(400, 'ERROR_CORE', 'Task not found or not accessible');

function requireTaskId(params: Params): number {
  const id = intParam(params, 'taskId') ?? intParam(params, 'id');
  if (id === undefined || Number.isNaN(id) || id <= 0) {
    throw portalErrors.core('taskId is not defined or invalid');
  }
  return id;
}

/** Task fields by their stored names, from `fields` written in upper case or camelCase. */
function taskFields(params: Params): Partial<Record<keyof TaskRecord, unknown>> {
  const fields = param(params, 'fields');
  if (!isPlainObject(fields)) throw portalErrors.core('fields is not defined');
  const named: Partial<Record<keyof TaskRecord, unknown>> = {};
  for (const [key, value] of Object.entries(fields)) {
    const name = taskFieldName(key);
    if (name !== undefined) named[name as keyof TaskRecord] = value;
  }
  return named;
}

function integerField(value: unknown, field: string): number {
  const number = Number(value);
  if (!Number.isInteger(number)) throw portalErrors.core(`${field} must be an integer`);
  return number;
}

function deadlineField(value: unknown): number | null {
  const deadline = parseDeadline(value);
  if (deadline === 'invalid') throw portalErrors.core('DEADLINE should be in the ISO-8601 format');
  return deadline;
}

/** `UF_CRM_TASK`: a list (or one value) of `C_<id>`, `CO_<id>`, `L_<id>`, `D_<id>`. */
function crmBindingsField(value: unknown): string[] {
  if (value === undefined || value === null || value === '') return [];
  const values = Array.isArray(value) ? value : isPlainObject(value) ? Object.values(value) : [value];
  return values.map((binding) => {
    const text = String(binding);
    if (!/^(C|CO|L|D)_\d+$/.test(text)) throw portalErrors.core(`UF_CRM_TASK: ${text} is not a CRM binding`);
    return text;
  });
}

function add(params: Params, context: MethodContext): MethodResult {
  const fields = taskFields(params);
  if (typeof fields.TITLE !== 'string' || fields.TITLE.trim() === '') {
    throw portalErrors.core('TITLE: the task has no title');
  }
  const responsible =
    fields.RESPONSIBLE_ID === undefined
      ? context.caller.userId
      : integerField(fields.RESPONSIBLE_ID, 'RESPONSIBLE_ID');
  if (!context.state.employees.get(responsible)) {
    throw portalErrors.core(`RESPONSIBLE_ID: user ${responsible} is not found`);
  }
  const task = context.state.tasks.add(
    {
      TITLE: fields.TITLE,
      DESCRIPTION: typeof fields.DESCRIPTION === 'string' ? fields.DESCRIPTION : '',
      RESPONSIBLE_ID: responsible,
      CREATED_BY: context.caller.userId,
      DEADLINE: deadlineField(fields.DEADLINE),
      PRIORITY: fields.PRIORITY === undefined ? 1 : integerField(fields.PRIORITY, 'PRIORITY'),
      STATUS: 2,
      GROUP_ID: fields.GROUP_ID === undefined ? 0 : integerField(fields.GROUP_ID, 'GROUP_ID'),
      XML_ID: fields.XML_ID === undefined ? '' : String(fields.XML_ID),
      UF_CRM_TASK: crmBindingsField(fields.UF_CRM_TASK),
    },
    context.now,
  );
  return { result: { task: context.state.tasks.present(task) } };
}

function get(params: Params, context: MethodContext): MethodResult {
  const task = context.state.tasks.get(requireTaskId(params));
  if (!task) throw taskNotFound();
  return { result: { task: context.state.tasks.present(task, listParam(params, 'select').map(String)) } };
}

function update(params: Params, context: MethodContext): MethodResult {
  const task = context.state.tasks.get(requireTaskId(params));
  if (!task) throw taskNotFound();
  const fields = taskFields(params);
  if (fields.TITLE !== undefined) task.TITLE = String(fields.TITLE);
  if (fields.DESCRIPTION !== undefined) task.DESCRIPTION = String(fields.DESCRIPTION);
  if (fields.RESPONSIBLE_ID !== undefined) {
    task.RESPONSIBLE_ID = integerField(fields.RESPONSIBLE_ID, 'RESPONSIBLE_ID');
  }
  if (fields.DEADLINE !== undefined) task.DEADLINE = deadlineField(fields.DEADLINE);
  if (fields.PRIORITY !== undefined) task.PRIORITY = integerField(fields.PRIORITY, 'PRIORITY');
  if (fields.STATUS !== undefined) task.STATUS = integerField(fields.STATUS, 'STATUS');
  if (fields.XML_ID !== undefined) task.XML_ID = String(fields.XML_ID);
  if (fields.UF_CRM_TASK !== undefined) task.UF_CRM_TASK = crmBindingsField(fields.UF_CRM_TASK);
  task.CHANGED_DATE = context.now;
  return { result: { task: context.state.tasks.present(task) } };
}

/** Completes the task (STATUS 5); completing a completed task is refused, as on the portal. */
function complete(params: Params, context: MethodContext): MethodResult {
  const task = context.state.tasks.get(requireTaskId(params));
  if (!task) throw taskNotFound();
  if (task.STATUS === 5) throw portalErrors.core('Action is not allowed: the task is already completed');
  task.STATUS = 5;
  task.CLOSED_DATE = context.now;
  task.CHANGED_DATE = context.now;
  return { result: { task: context.state.tasks.present(task) } };
}

function remove(params: Params, context: MethodContext): MethodResult {
  if (!context.state.tasks.delete(requireTaskId(params))) throw taskNotFound();
  return { result: { task: true } };
}

function list(params: Params, context: MethodContext): MethodResult {
  const rows = context.state.tasks.query(objectParam(params, 'filter'), objectParam(params, 'order'));
  const page = pageOf(rows, intParam(params, 'start'));
  const select = listParam(params, 'select').map(String);
  return {
    result: { tasks: page.rows.map((task) => context.state.tasks.present(task, select)) },
    total: page.total,
    next: page.next,
  };
}

export const taskMethods: MethodDefinition[] = [
  { name: 'tasks.task.add', scope: 'task', handler: add },
  { name: 'tasks.task.get', scope: 'task', handler: get },
  { name: 'tasks.task.update', scope: 'task', handler: update },
  { name: 'tasks.task.delete', scope: 'task', handler: remove },
  { name: 'tasks.task.complete', scope: 'task', handler: complete },
  { name: 'tasks.task.list', scope: 'task', handler: list },
];
