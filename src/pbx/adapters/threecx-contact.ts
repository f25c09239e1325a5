import { AuthSettings } from '../../config/settings';
import { CrmEntityType, LookupAnswer } from '../../crm/crm-match';

/**
 * What the 3CX template's contact lookup reads: one flat JSON object (3CX maps fields by path, and a flat
 * one keeps the template's Variables simple). `id` is there only for a match: the template's Rule tests it.
 */
export interface ThreeCxContact {
  phone: string;
  id?: number;
  entityType?: CrmEntityType;
  firstName?: string;
  lastName?: string;
  companyName?: string;
  name?: string;
  contactUrl?: string;
  responsibleUserId?: number | null;
  /** The responsible employee's internal number, when the portal's directory has it. */
  responsibleExtension?: string | null;
  /** Only when the portal could not say in time. */
  reason?: string;
}

const DETAILS_PATH: Record<CrmEntityType, string> = {
  CONTACT: 'contact',
  COMPANY: 'company',
  LEAD: 'lead',
};

export function toThreeCxContact(answer: LookupAnswer, portalUrl: string | undefined): ThreeCxContact {
  const { match } = answer;
  if (!match) return answer.reason ? { phone: answer.phone, reason: answer.reason } : { phone: answer.phone };
  // A lead's name may be its title ("Website enquiry"): whole, it reads the same in 3CX's "First Last".
  const person =
    match.entityType === 'CONTACT'
      ? splitName(match.name)
      : match.entityType === 'LEAD'
        ? { firstName: '', lastName: match.name }
        : undefined;
  return {
    phone: answer.phone,
    id: match.entityId,
    entityType: match.entityType,
    firstName: person?.firstName ?? '',
    lastName: person?.lastName ?? '',
    companyName: match.entityType === 'COMPANY' ? match.name : '',
    name: match.name,
    contactUrl: portalUrl
      ? `${portalUrl}/crm/${DETAILS_PATH[match.entityType]}/details/${match.entityId}/`
      : '',
    responsibleUserId: match.responsibleUserId,
    responsibleExtension: match.responsibleExtension,
  };
}

/** "Max Mustermann" → Max / Mustermann; a single word is the last name, as CRMs file it. */
function splitName(name: string): { firstName: string; lastName: string } {
  const words = name.trim().split(/\s+/);
  if (words.length < 2) return { firstName: '', lastName: words[0] ?? '' };
  return { firstName: words.slice(0, -1).join(' '), lastName: words[words.length - 1] };
}

/** The portal's web address (never the webhook's secret path): the OAuth portal, else the webhook's host. */
export function portalWebUrl(auth: AuthSettings): string | undefined {
  const address = auth.portalUrl ?? auth.webhookUrl;
  if (!address) return undefined;
  try {
    return new URL(address).origin;
  } catch {
    return undefined;
  }
}
