import { formatPortalDate, parseDateWithOffset } from './date-format';
import { applyFilter, applyOrder, FieldReader } from './list-query';
import { isPlainObject } from './params';
import { phoneDigits } from './phone';
import { CrmSeedRecord } from './seed';

export type CrmEntityKind = 'LEAD' | 'CONTACT' | 'COMPANY' | 'DEAL';
export const CRM_ENTITY_TYPES: CrmEntityKind[] = ['LEAD', 'CONTACT', 'COMPANY', 'DEAL'];

/** One entry of a multi-value field (PHONE, EMAIL), as the portal returns it. */
export interface MultiFieldValue {
  ID: string;
  VALUE_TYPE: string;
  VALUE: string;
  TYPE_ID: 'PHONE' | 'EMAIL';
}

/** A stored record: scalar fields plus PHONE/EMAIL lists; dates are epoch ms. */
export interface CrmRecord {
  ID: number;
  fields: Record<string, unknown>;
  PHONE: MultiFieldValue[];
  EMAIL: MultiFieldValue[];
  DATE_CREATE: number;
  DATE_MODIFY: number;
}

export interface UserFieldDefinition {
  ID: string;
  ENTITY_ID: string;
  FIELD_NAME: string;
  USER_TYPE_ID: string;
  XML_ID: string | null;
  SORT: string;
  MULTIPLE: string;
  MANDATORY: string;
  SHOW_FILTER: string;
  SHOW_IN_LIST: string;
  EDIT_IN_LIST: string;
  IS_SEARCHABLE: string;
  EDIT_FORM_LABEL: string;
  LIST_COLUMN_LABEL: string;
  SETTINGS: Record<string, unknown>;
}

/** The standard writable fields of each entity; anything else (but a defined UF_ field) is ignored on write. */
const WRITABLE_FIELDS: Record<CrmEntityKind, string[]> = {
  LEAD: [
    'TITLE',
    'NAME',
    'SECOND_NAME',
    'LAST_NAME',
    'COMPANY_TITLE',
    'STATUS_ID',
    'SOURCE_ID',
    'SOURCE_DESCRIPTION',
    'COMMENTS',
    'OPPORTUNITY',
    'CURRENCY_ID',
    'ASSIGNED_BY_ID',
    'CONTACT_ID',
    'COMPANY_ID',
    'OPENED',
  ],
  CONTACT: [
    'NAME',
    'SECOND_NAME',
    'LAST_NAME',
    'POST',
    'COMMENTS',
    'COMPANY_ID',
    'SOURCE_ID',
    'TYPE_ID',
    'ASSIGNED_BY_ID',
    'LEAD_ID',
    'OPENED',
  ],
  COMPANY: ['TITLE', 'COMPANY_TYPE', 'INDUSTRY', 'COMMENTS', 'ASSIGNED_BY_ID', 'LEAD_ID', 'OPENED'],
  DEAL: [
    'TITLE',
    'STAGE_ID',
    'CATEGORY_ID',
    'OPPORTUNITY',
    'CURRENCY_ID',
    'CONTACT_ID',
    'COMPANY_ID',
    'CLOSEDATE',
    'BEGINDATE',
    'CLOSED',
    'COMMENTS',
    'ASSIGNED_BY_ID',
    'LEAD_ID',
    'OPENED',
  ],
};
const DEFAULTS: Record<CrmEntityKind, Record<string, unknown>> = {
  LEAD: { STATUS_ID: 'NEW', SOURCE_ID: 'CALL', OPPORTUNITY: '0.00', CURRENCY_ID: 'EUR', OPENED: 'Y' },
  CONTACT: { TYPE_ID: 'CLIENT', SOURCE_ID: 'CALL', OPENED: 'Y' },
  COMPANY: { COMPANY_TYPE: 'CUSTOMER', OPENED: 'Y' },
  DEAL: {
    STAGE_ID: 'NEW',
    CATEGORY_ID: 0,
    OPPORTUNITY: '0.00',
    CURRENCY_ID: 'EUR',
    CLOSED: 'N',
    OPENED: 'Y',
  },
};
const DATE_FIELDS = new Set(['CLOSEDATE', 'BEGINDATE']);
const HAS_MULTI_FIELDS: Record<CrmEntityKind, boolean> = {
  LEAD: true,
  CONTACT: true,
  COMPANY: true,
  DEAL: false,
};
const MULTI_FIELDS = ['PHONE', 'EMAIL'] as const;

export function hasMultiFields(entity: CrmEntityKind): boolean {
  return HAS_MULTI_FIELDS[entity];
}

/** Contacts, companies, leads and deals with their user fields, in memory. */
export class CrmStore {
  private tables = new Map<CrmEntityKind, Map<number, CrmRecord>>();
  private nextIds = new Map<CrmEntityKind, number>();
  private userFields = new Map<CrmEntityKind, UserFieldDefinition[]>();
  private nextMultiFieldId = 1;
  private nextUserFieldId = 1;

  constructor(seed: Record<CrmEntityKind, CrmSeedRecord[]>) {
    for (const entity of CRM_ENTITY_TYPES) {
      const table = new Map<number, CrmRecord>();
      for (const row of seed[entity]) table.set(row.ID, this.fromSeed(entity, row));
      this.tables.set(entity, table);
      this.nextIds.set(entity, Math.max(0, ...table.keys()) + 1);
      this.userFields.set(entity, []);
    }
  }

  get(entity: CrmEntityKind, id: number): CrmRecord | undefined {
    return this.table(entity).get(id);
  }

  all(entity: CrmEntityKind): CrmRecord[] {
    return [...this.table(entity).values()];
  }

  add(entity: CrmEntityKind, fields: Record<string, unknown>, userId: number, now: number): CrmRecord {
    const id = this.nextIds.get(entity) ?? 1;
    this.nextIds.set(entity, id + 1);
    const record: CrmRecord = {
      ID: id,
      fields: { ...DEFAULTS[entity], ASSIGNED_BY_ID: userId, CREATED_BY_ID: userId, MODIFY_BY_ID: userId },
      PHONE: [],
      EMAIL: [],
      DATE_CREATE: now,
      DATE_MODIFY: now,
    };
    this.write(entity, record, fields);
    this.table(entity).set(id, record);
    return record;
  }

  update(
    entity: CrmEntityKind,
    record: CrmRecord,
    fields: Record<string, unknown>,
    userId: number,
    now: number,
  ): void {
    this.write(entity, record, fields);
    record.fields.MODIFY_BY_ID = userId;
    record.DATE_MODIFY = now;
  }

  delete(entity: CrmEntityKind, id: number): boolean {
    return this.table(entity).delete(id);
  }

  /** Records whose PHONE has the same digits, most recently changed first. */
  findByPhone(entity: CrmEntityKind, phone: unknown): CrmRecord[] {
    const digits = phoneDigits(phone);
    if (digits === '' || !hasMultiFields(entity)) return [];
    return this.all(entity)
      .filter((record) => record.PHONE.some((entry) => phoneDigits(entry.VALUE) === digits))
      .sort((a, b) => b.DATE_MODIFY - a.DATE_MODIFY || b.ID - a.ID);
  }

  findByEmail(entity: CrmEntityKind, email: unknown): CrmRecord[] {
    const wanted = String(email ?? '')
      .trim()
      .toLowerCase();
    if (wanted === '' || !hasMultiFields(entity)) return [];
    return this.all(entity).filter((record) =>
      record.EMAIL.some((entry) => entry.VALUE.toLowerCase() === wanted),
    );
  }

  query(entity: CrmEntityKind, filter: Record<string, unknown>, order: Record<string, unknown>): CrmRecord[] {
    const rows = applyFilter(this.all(entity), filter, readField);
    return applyOrder(rows, Object.keys(order).length > 0 ? order : { ID: 'ASC' }, readField);
  }

  userFieldsOf(entity: CrmEntityKind): UserFieldDefinition[] {
    return this.userFields.get(entity) ?? [];
  }

  addUserField(
    entity: CrmEntityKind,
    definition: Omit<UserFieldDefinition, 'ID' | 'ENTITY_ID'>,
  ): UserFieldDefinition {
    const created: UserFieldDefinition = {
      ID: String(this.nextUserFieldId++),
      ENTITY_ID: `CRM_${entity}`,
      ...definition,
    };
    this.userFieldsOf(entity).push(created);
    return created;
  }

  /** The record as get/list answer it: IDs and numbers as strings, dates with offset, PHONE/EMAIL lists. */
  present(entity: CrmEntityKind, record: CrmRecord, select?: string[]): Record<string, unknown> {
    const full: Record<string, unknown> = {
      ID: String(record.ID),
      ...Object.fromEntries(
        WRITABLE_FIELDS[entity].map((field) => [field, presentValue(field, record.fields[field])]),
      ),
      CREATED_BY_ID: presentValue('CREATED_BY_ID', record.fields.CREATED_BY_ID),
      MODIFY_BY_ID: presentValue('MODIFY_BY_ID', record.fields.MODIFY_BY_ID),
      DATE_CREATE: formatPortalDate(record.DATE_CREATE),
      DATE_MODIFY: formatPortalDate(record.DATE_MODIFY),
    };
    if (hasMultiFields(entity)) {
      full.HAS_PHONE = record.PHONE.length > 0 ? 'Y' : 'N';
      full.HAS_EMAIL = record.EMAIL.length > 0 ? 'Y' : 'N';
    }
    const userFields = Object.fromEntries(
      this.userFieldsOf(entity).map((uf) => [uf.FIELD_NAME, record.fields[uf.FIELD_NAME] ?? null]),
    );
    const multi = hasMultiFields(entity)
      ? { PHONE: record.PHONE.map((v) => ({ ...v })), EMAIL: record.EMAIL.map((v) => ({ ...v })) }
      : {};
    if (select === undefined) return { ...full, ...userFields, ...multi };
    return selectFields(select, full, userFields, multi);
  }

  private fromSeed(entity: CrmEntityKind, row: CrmSeedRecord): CrmRecord {
    const modified = parseDateWithOffset(row.DATE_MODIFY) ?? Date.now();
    const created = parseDateWithOffset(row.DATE_CREATE) ?? modified;
    const record: CrmRecord = {
      ID: row.ID,
      fields: { ...DEFAULTS[entity], CREATED_BY_ID: row.ASSIGNED_BY_ID, MODIFY_BY_ID: row.ASSIGNED_BY_ID },
      PHONE: [],
      EMAIL: [],
      DATE_CREATE: created,
      DATE_MODIFY: modified,
    };
    this.write(entity, record, row);
    return record;
  }

  private write(entity: CrmEntityKind, record: CrmRecord, fields: Record<string, unknown>): void {
    const definedUserFields = new Set(this.userFieldsOf(entity).map((uf) => uf.FIELD_NAME));
    for (const [rawKey, value] of Object.entries(fields)) {
      const key = rawKey.toUpperCase();
      if (WRITABLE_FIELDS[entity].includes(key) || definedUserFields.has(key)) {
        record.fields[key] = DATE_FIELDS.has(key) ? (parseDateWithOffset(value) ?? value) : value;
      } else if ((MULTI_FIELDS as readonly string[]).includes(key) && hasMultiFields(entity)) {
        this.writeMultiField(record, key as 'PHONE' | 'EMAIL', value);
      }
    }
  }

  /** Entries without ID are added; with ID they change that entry, or remove it when VALUE is empty. */
  private writeMultiField(record: CrmRecord, type: 'PHONE' | 'EMAIL', value: unknown): void {
    const entries = Array.isArray(value) ? value : isPlainObject(value) ? Object.values(value) : [value];
    for (const entry of entries) {
      const item: Record<string, unknown> = isPlainObject(entry) ? entry : { VALUE: entry };
      const existing = item.ID !== undefined ? record[type].find((v) => v.ID === String(item.ID)) : undefined;
      const text = item.VALUE === undefined || item.VALUE === null ? '' : String(item.VALUE);
      if (existing && text === '') record[type] = record[type].filter((v) => v !== existing);
      else if (existing) existing.VALUE = text;
      else if (text !== '') {
        const valueType =
          typeof item.VALUE_TYPE === 'string' && item.VALUE_TYPE !== '' ? item.VALUE_TYPE : 'WORK';
        record[type].push({
          ID: String(this.nextMultiFieldId++),
          VALUE_TYPE: valueType,
          VALUE: text,
          TYPE_ID: type,
        });
      }
    }
  }

  private table(entity: CrmEntityKind): Map<number, CrmRecord> {
    const table = this.tables.get(entity);
    if (!table) throw new Error(`no CRM table for ${entity}`);
    return table;
  }
}

/** Values as filters and ordering see them: PHONE/EMAIL as lists of values, dates as epoch ms. */
const readField: FieldReader<CrmRecord> = (record, field) => {
  if (field === 'ID') return record.ID;
  if (field === 'PHONE' || field === 'EMAIL') return record[field].map((entry) => entry.VALUE);
  if (field === 'DATE_CREATE' || field === 'DATE_MODIFY') return record[field];
  if (field === 'HAS_PHONE') return record.PHONE.length > 0 ? 'Y' : 'N';
  if (field === 'HAS_EMAIL') return record.EMAIL.length > 0 ? 'Y' : 'N';
  return record.fields[field];
};

function presentValue(field: string, value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (DATE_FIELDS.has(field) && typeof value === 'number') return formatPortalDate(value);
  return typeof value === 'number' ? String(value) : value;
}

/** `*` is every standard field but PHONE/EMAIL; `UF_*` every user field; other names pick themselves. */
function selectFields(
  select: string[],
  standard: Record<string, unknown>,
  userFields: Record<string, unknown>,
  multi: Record<string, unknown>,
): Record<string, unknown> {
  const picked: Record<string, unknown> = { ID: standard.ID };
  for (const raw of select) {
    const name = raw.toUpperCase();
    if (name === '*') Object.assign(picked, standard);
    else if (name === 'UF_*') Object.assign(picked, userFields);
    else if (name in standard) picked[name] = standard[name];
    else if (name in userFields) picked[name] = userFields[name];
    else if (name in multi) picked[name] = multi[name];
  }
  return picked;
}
