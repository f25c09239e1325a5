/** The CRM records a phone number can belong to, in the order a lookup prefers them (docs/API.md). */
export const CRM_ENTITY_ORDER = ['CONTACT', 'COMPANY', 'LEAD'] as const;
export type CrmEntityType = (typeof CRM_ENTITY_ORDER)[number];

/** The client a phone number belongs to, as the portal knows it. */
export interface CrmMatch {
  entityType: CrmEntityType;
  entityId: number;
  /** The person's name, else the record's title. */
  name: string;
  /** The portal user responsible for the record (`ASSIGNED_BY_ID`). */
  responsibleUserId: number | null;
}

/** What `telephony.externalcall.register` takes to bind a call to a client explicitly. */
export interface CrmBinding {
  CRM_ENTITY_TYPE: CrmEntityType;
  CRM_ENTITY_ID: number;
}

/** The answer of `GET /v1/lookup`. */
export interface LookupAnswer {
  phone: string;
  match: (CrmMatch & { responsibleExtension: string | null }) | null;
  /** Only when the portal could not be asked in time and nothing was cached. */
  reason?: string;
}
