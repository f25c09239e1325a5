import { LookupSettings } from '../config/settings';
import { BatchCommand, BatchOutcome, PortalClient, SendOptions } from '../portal/portal-client';
import { PortalError } from '../portal/portal-error';
import { CRM_ENTITY_ORDER, CrmEntityType, CrmMatch } from './crm-match';
import { portalPhoneForms } from './phone-forms';

/** One number costs a findbycomm and a list per entity type, all in one batch request. */
export const COMMANDS_PER_NUMBER = 1 + CRM_ENTITY_ORDER.length;

const LIST_METHOD: Record<CrmEntityType, string> = {
  CONTACT: 'crm.contact.list',
  COMPANY: 'crm.company.list',
  LEAD: 'crm.lead.list',
};

const NAME_FIELDS: Record<CrmEntityType, string[]> = {
  CONTACT: ['NAME', 'LAST_NAME'],
  COMPANY: ['TITLE'],
  LEAD: ['NAME', 'LAST_NAME', 'TITLE'],
};

interface ListedRecord {
  ID?: unknown;
  NAME?: unknown;
  LAST_NAME?: unknown;
  TITLE?: unknown;
  ASSIGNED_BY_ID?: unknown;
  DATE_MODIFY?: unknown;
}

/** Per number: its best match, `null` when the portal knows none, or why the portal could not say. */
export type SearchResults = Map<string, CrmMatch | null | PortalError>;

/**
 * Asks the portal who has a phone number. `crm.duplicate.findbycomm` finds the ids through the portal's
 * phone index (every written form at once); in the same batch, `crm.<type>.list` filtered by those ids
 * (`$result[…]` references) reads name, responsible and DATE_MODIFY, newest first. One request per
 * lookup, and several numbers can share one.
 */
export class CrmSearch {
  private readonly defaultCountry?: string;

  constructor(
    private readonly client: PortalClient,
    settings: LookupSettings,
  ) {
    this.defaultCountry = settings.defaultCountry;
  }

  /** How many numbers one batch request can look up (0 when B24_BATCH_SIZE is too small for one). */
  get numbersPerRequest(): number {
    return Math.floor(this.client.maxBatchSize / COMMANDS_PER_NUMBER);
  }

  /** Why `count` numbers cannot share one request, or undefined when they can. */
  capacityProblem(count: number): Error | undefined {
    if (count <= this.numbersPerRequest) return undefined;
    return new Error(
      `B24_BATCH_SIZE is ${this.client.maxBatchSize}, but looking up ${count} number(s) takes ` +
        `${count * COMMANDS_PER_NUMBER} commands in one batch request`,
    );
  }

  /** Rejects only when the request as a whole failed; one number's failed command is that number's result. */
  async find(phones: string[], options: SendOptions): Promise<SearchResults> {
    const problem = this.capacityProblem(phones.length);
    if (problem) throw problem;
    const commands = phones.flatMap((phone, index) =>
      searchCommands(`n${index}`, portalPhoneForms(phone, this.defaultCountry)),
    );
    const outcome = await this.client.batch(commands, options);
    return new Map(phones.map((phone, index) => [phone, resultFor(outcome, `n${index}`)]));
  }
}

/** The commands for one number; `key` keeps the labels of several numbers in one batch apart. */
export function searchCommands(key: string, phoneForms: string[]): BatchCommand[] {
  const found = `dup_${key}`;
  return [
    { label: found, method: 'crm.duplicate.findbycomm', params: { type: 'PHONE', values: phoneForms } },
    ...CRM_ENTITY_ORDER.map((type) => ({
      label: listLabel(type, key),
      method: LIST_METHOD[type],
      params: {
        filter: { ID: `$result[${found}][${type}]` },
        select: ['ID', ...NAME_FIELDS[type], 'ASSIGNED_BY_ID', 'DATE_MODIFY'],
        order: { DATE_MODIFY: 'DESC', ID: 'DESC' },
        // No count: only the first rows matter.
        start: -1,
      },
    })),
  ];
}

/**
 * The best match among the answers for `key`: contact, then company, then lead, most recently changed
 * first. A type findbycomm did not name has no list answer (its reference cannot be resolved), so its
 * error is ignored; rows are kept only when findbycomm named their id, in case a portal ran the list
 * with an empty filter.
 */
export function resultFor(outcome: BatchOutcome, key: string): CrmMatch | null | PortalError {
  const found = `dup_${key}`;
  if (outcome.errors[found]) return outcome.errors[found];
  const ids = outcome.results[found];
  if (typeof ids !== 'object' || ids === null || Array.isArray(ids)) return null;
  for (const type of CRM_ENTITY_ORDER) {
    const wanted = new Set(idsOf((ids as Record<string, unknown>)[type]));
    if (wanted.size === 0) continue;
    const label = listLabel(type, key);
    if (outcome.errors[label]) return outcome.errors[label];
    const rows = outcome.results[label];
    const candidates = (Array.isArray(rows) ? (rows as ListedRecord[]) : [])
      .filter((row) => wanted.has(Number(row.ID)))
      .sort(newestFirst);
    if (candidates.length > 0) return toMatch(type, candidates[0]);
  }
  return null;
}

function listLabel(type: CrmEntityType, key: string): string {
  return `${type.toLowerCase()}_${key}`;
}

function idsOf(value: unknown): number[] {
  const list = Array.isArray(value) ? value : typeof value === 'object' && value ? Object.values(value) : [];
  return list.map(Number).filter((id) => Number.isInteger(id) && id > 0);
}

function newestFirst(a: ListedRecord, b: ListedRecord): number {
  const modified = (row: ListedRecord) => Date.parse(String(row.DATE_MODIFY ?? '')) || 0;
  return modified(b) - modified(a) || Number(b.ID) - Number(a.ID);
}

function toMatch(entityType: CrmEntityType, row: ListedRecord): CrmMatch {
  const text = (value: unknown) => (typeof value === 'string' ? value.trim() : '');
  const person = [text(row.NAME), text(row.LAST_NAME)].filter(Boolean).join(' ');
  const responsible = Number(row.ASSIGNED_BY_ID);
  return {
    entityType,
    entityId: Number(row.ID),
    name: person || text(row.TITLE),
    responsibleUserId: Number.isInteger(responsible) && responsible > 0 ? responsible : null,
  };
}
