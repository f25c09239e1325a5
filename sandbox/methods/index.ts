import { MethodRegistry } from '../method-registry';
import { appMethods } from './app';
import { crmMethods } from './crm';
import { eventMethods } from './events';
import { taskMethods } from './tasks';
import { telephonyMethods } from './telephony';
import { transcriptMethods } from './transcripts';
import { userMethods } from './users';

/** Every REST method the sandbox portal serves (batch is handled by the router). */
export function portalMethods(): MethodRegistry {
  return new MethodRegistry([
    ...telephonyMethods,
    ...transcriptMethods,
    ...crmMethods,
    ...userMethods,
    ...taskMethods,
    ...appMethods,
    ...eventMethods,
  ]);
}
