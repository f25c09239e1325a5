import { CRM_ENTITY_TYPES, CrmEntityKind } from '../crm-store';
import { pageOf } from '../list-query';
import { MethodContext, MethodDefinition, MethodResult } from '../method-registry';
import { intParam, isPlainObject, listParam, objectParam, param, Params, stringParam } from '../params';
import { portalErrors } from '../sandbox-portal-error';

/** crm.duplicate.findbycomm takes at most this many values. */
export const MAX_DUPLICATE_VALUES = 20;

const ENTITY_NAMES: Record<CrmEntityKind, string> = {
  LEAD: 'lead',
  CONTACT: 'contact',
  COMPANY: 'company',
  DEAL: 'deal',
};

function requireId(params: Params): number {
  const id = intParam(params, 'id');
  if (id === undefined || Number.isNaN(id) || id <= 0) {
    throw portalErrors.validation('ID is not defined or invalid.');
  }
  return id;
}

function requireFields(params: Params): Record<string, unknown> {
  const fields = param(params, 'fields');
  if (!isPlainObject(fields) || Object.keys(fields).length === 0) {
    throw portalErrors.validation("Parameter 'fields' must be array.");
  }
  return fields;
}

function list(entity: CrmEntityKind) {
  return (params: Params, context: MethodContext): MethodResult => {
    const select = listParam(params, 'select').map(String);
    const rows = context.state.crm.query(entity, objectParam(params, 'filter'), objectParam(params, 'order'));
    const page = pageOf(rows, intParam(params, 'start'));
    const result = page.rows.map((record) =>
      context.state.crm.present(entity, record, select.length > 0 ? select : ['*']),
    );
    return { result, total: page.total, next: page.next };
  };
}

function get(entity: CrmEntityKind) {
  return (params: Params, context: MethodContext): MethodResult => {
    const record = context.state.crm.get(entity, requireId(params));
    if (!record) throw portalErrors.notFound();
    return { result: context.state.crm.present(entity, record) };
  };
}

function add(entity: CrmEntityKind) {
  return (params: Params, context: MethodContext): MethodResult => {
    const fields = requireFields(params);
    if (
      entity === 'DEAL' &&
      fields.CONTACT_ID !== undefined &&
      !context.state.crm.get('CONTACT', Number(fields.CONTACT_ID))
    ) {
      throw portalErrors.validation(`Contact with ID ${String(fields.CONTACT_ID)} is not found`);
    }
    const id = context.state.crm.add(entity, fields, context.caller.userId, context.now).ID;
    context.state.events.fire(`ONCRM${entity}ADD`, { FIELDS: { ID: String(id) } }, context.caller.userId);
    return { result: id };
  };
}

function update(entity: CrmEntityKind) {
  return (params: Params, context: MethodContext): MethodResult => {
    const record = context.state.crm.get(entity, requireId(params));
    if (!record) throw portalErrors.notFound();
    context.state.crm.update(entity, record, requireFields(params), context.caller.userId, context.now);
    const data = { FIELDS: { ID: String(record.ID) } };
    context.state.events.fire(`ONCRM${entity}UPDATE`, data, context.caller.userId);
    return { result: true };
  };
}

function remove(entity: CrmEntityKind) {
  return (params: Params, context: MethodContext): MethodResult => {
    const id = requireId(params);
    if (!context.state.crm.delete(entity, id)) throw portalErrors.notFound();
    context.state.events.fire(`ONCRM${entity}DELETE`, { FIELDS: { ID: String(id) } }, context.caller.userId);
    return { result: true };
  };
}

function userFieldList(entity: CrmEntityKind) {
  return (_params: Params, context: MethodContext): MethodResult => {
    const fields = context.state.crm.userFieldsOf(entity).map((field) => ({ ...field }));
    return { result: fields, total: fields.length };
  };
}

function userFieldAdd(entity: CrmEntityKind) {
  return (params: Params, context: MethodContext): MethodResult => {
    const fields = requireFields(params);
    const name = String(fields.FIELD_NAME ?? '').toUpperCase();
    if (!/^UF_[A-Z0-9_]+$/.test(name)) {
      throw portalErrors.core('FIELD_NAME must start with UF_ and hold only A-Z, 0-9 and _');
    }
    if (context.state.crm.userFieldsOf(entity).some((existing) => existing.FIELD_NAME === name)) {
      throw portalErrors.core(`A user field named ${name} already exists`);
    }
    const label = (key: string) => (typeof fields[key] === 'string' ? (fields[key] as string) : name);
    const created = context.state.crm.addUserField(entity, {
      FIELD_NAME: name,
      USER_TYPE_ID: typeof fields.USER_TYPE_ID === 'string' ? fields.USER_TYPE_ID : 'string',
      XML_ID: typeof fields.XML_ID === 'string' ? fields.XML_ID : null,
      SORT: String(fields.SORT ?? '100'),
      MULTIPLE: fields.MULTIPLE === 'Y' ? 'Y' : 'N',
      MANDATORY: fields.MANDATORY === 'Y' ? 'Y' : 'N',
      SHOW_FILTER: fields.SHOW_FILTER === 'Y' ? 'Y' : 'N',
      SHOW_IN_LIST: fields.SHOW_IN_LIST === 'N' ? 'N' : 'Y',
      EDIT_IN_LIST: fields.EDIT_IN_LIST === 'N' ? 'N' : 'Y',
      IS_SEARCHABLE: fields.IS_SEARCHABLE === 'Y' ? 'Y' : 'N',
      EDIT_FORM_LABEL: label('EDIT_FORM_LABEL'),
      LIST_COLUMN_LABEL: label('LIST_COLUMN_LABEL'),
      SETTINGS: isPlainObject(fields.SETTINGS) ? fields.SETTINGS : {},
    });
    return { result: Number(created.ID) };
  };
}

/** `{CONTACT: [ids], LEAD: [ids], COMPANY: [ids]}` holding only the types that matched, or `[]`. */
function findByCommunication(params: Params, context: MethodContext): MethodResult {
  const type = (stringParam(params, 'type') ?? '').toUpperCase();
  if (type !== 'PHONE' && type !== 'EMAIL') {
    throw portalErrors.validation('Communication type is not defined or not supported. Use PHONE or EMAIL.');
  }
  const values = listParam(params, 'values');
  if (values.length === 0) throw portalErrors.validation('Communication values are not defined.');
  if (values.length > MAX_DUPLICATE_VALUES) {
    throw portalErrors.validation(`Too many communication values: at most ${MAX_DUPLICATE_VALUES}.`);
  }
  const entityParam = stringParam(params, 'entity_type')?.toUpperCase();
  if (entityParam && !['LEAD', 'CONTACT', 'COMPANY'].includes(entityParam)) {
    throw portalErrors.validation(`Entity type '${entityParam}' is not supported in current context.`);
  }
  const entities: CrmEntityKind[] = entityParam
    ? [entityParam as CrmEntityKind]
    : ['LEAD', 'CONTACT', 'COMPANY'];
  const found: Record<string, number[]> = {};
  for (const entity of entities) {
    const ids = new Set<number>();
    for (const value of values) {
      const records =
        type === 'PHONE'
          ? context.state.crm.findByPhone(entity, value)
          : context.state.crm.findByEmail(entity, value);
      records.forEach((record) => ids.add(record.ID));
    }
    if (ids.size > 0) found[entity] = [...ids].sort((a, b) => a - b);
  }
  return { result: Object.keys(found).length > 0 ? found : [] };
}

function entityMethods(entity: CrmEntityKind): MethodDefinition[] {
  const prefix = `crm.${ENTITY_NAMES[entity]}`;
  const methods: MethodDefinition[] = [
    { name: `${prefix}.list`, scope: 'crm', handler: list(entity) },
    { name: `${prefix}.get`, scope: 'crm', handler: get(entity) },
    { name: `${prefix}.add`, scope: 'crm', handler: add(entity) },
    { name: `${prefix}.update`, scope: 'crm', handler: update(entity) },
    { name: `${prefix}.delete`, scope: 'crm', handler: remove(entity) },
  ];
  if (entity !== 'LEAD') {
    methods.push(
      { name: `${prefix}.userfield.list`, scope: 'crm', handler: userFieldList(entity) },
      { name: `${prefix}.userfield.add`, scope: 'crm', handler: userFieldAdd(entity) },
    );
  }
  return methods;
}

export const crmMethods: MethodDefinition[] = [
  ...CRM_ENTITY_TYPES.flatMap(entityMethods),
  { name: 'crm.duplicate.findbycomm', scope: 'crm', handler: findByCommunication },
];
