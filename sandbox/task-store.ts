import { formatPortalDate, parseDateWithOffset } from './date-format';
import { applyFilter, applyOrder, FieldReader } from './list-query';

/** A task with the fields tasks.task.* read and write (upper-case names, as in `fields`). */
export interface TaskRecord {
  ID: number;
  TITLE: string;
  DESCRIPTION: string;
  RESPONSIBLE_ID: number;
  CREATED_BY: number;
  DEADLINE: number | null;
  PRIORITY: number;
  STATUS: number;
  GROUP_ID: number;
  CREATED_DATE: number;
  CHANGED_DATE: number;
  /** An external marker the caller sets (`fields[XML_ID]`); '' when none. */
  XML_ID: string;
  /** CRM records the task is bound to: `C_<id>`, `CO_<id>`, `L_<id>`, `D_<id>`. */
  UF_CRM_TASK: string[];
  /** When it was completed (`tasks.task.complete`, STATUS 5), else null. */
  CLOSED_DATE: number | null;
}

/** tasks.task.* answer with camelCase keys, unlike the upper-case `fields` they take. */
const CAMEL_NAMES: Record<string, string> = {
  ID: 'id',
  TITLE: 'title',
  DESCRIPTION: 'description',
  RESPONSIBLE_ID: 'responsibleId',
  CREATED_BY: 'createdBy',
  DEADLINE: 'deadline',
  PRIORITY: 'priority',
  STATUS: 'status',
  GROUP_ID: 'groupId',
  CREATED_DATE: 'createdDate',
  CHANGED_DATE: 'changedDate',
  XML_ID: 'xmlId',
  UF_CRM_TASK: 'ufCrmTask',
  CLOSED_DATE: 'closedDate',
};
const FIELD_BY_CAMEL = Object.fromEntries(
  Object.entries(CAMEL_NAMES).map(([upper, camel]) => [camel.toUpperCase(), upper]),
);

/** Accepts `RESPONSIBLE_ID` or `responsibleId` and gives the stored field name. */
export function taskFieldName(name: string): string | undefined {
  const upper = name.toUpperCase();
  return upper in CAMEL_NAMES ? upper : FIELD_BY_CAMEL[upper];
}

const readTaskField: FieldReader<TaskRecord> = (task, field) => {
  const name = taskFieldName(field);
  return name === undefined ? undefined : task[name as keyof TaskRecord];
};

export class TaskStore {
  private readonly tasks = new Map<number, TaskRecord>();
  private nextId = 1;

  get(id: number): TaskRecord | undefined {
    return this.tasks.get(id);
  }

  add(
    fields: Omit<TaskRecord, 'ID' | 'CREATED_DATE' | 'CHANGED_DATE' | 'CLOSED_DATE'>,
    now: number,
  ): TaskRecord {
    const task: TaskRecord = {
      ...fields,
      ID: this.nextId++,
      CREATED_DATE: now,
      CHANGED_DATE: now,
      CLOSED_DATE: null,
    };
    this.tasks.set(task.ID, task);
    return task;
  }

  delete(id: number): boolean {
    return this.tasks.delete(id);
  }

  query(filter: Record<string, unknown>, order: Record<string, unknown>): TaskRecord[] {
    const rows = applyFilter([...this.tasks.values()], filter, readTaskField);
    return applyOrder(rows, Object.keys(order).length > 0 ? order : { ID: 'ASC' }, readTaskField);
  }

  present(task: TaskRecord, select?: string[]): Record<string, unknown> {
    const full: Record<string, unknown> = {};
    for (const [upper, camel] of Object.entries(CAMEL_NAMES)) {
      const value = task[upper as keyof TaskRecord];
      full[camel] =
        value === null
          ? null
          : Array.isArray(value)
            ? [...value]
            : upper.endsWith('DATE') || upper === 'DEADLINE'
              ? formatPortalDate(value as number)
              : String(value);
    }
    if (select === undefined || select.length === 0 || select.includes('*')) return full;
    const picked: Record<string, unknown> = { id: full.id };
    for (const name of select) {
      const upper = taskFieldName(name);
      if (upper !== undefined) picked[CAMEL_NAMES[upper]] = full[CAMEL_NAMES[upper]];
    }
    return picked;
  }
}

export function parseDeadline(value: unknown): number | null | 'invalid' {
  if (value === undefined || value === null || value === '') return null;
  return parseDateWithOffset(value) ?? 'invalid';
}
