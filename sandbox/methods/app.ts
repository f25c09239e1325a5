import { MethodContext, MethodDefinition, MethodResult } from '../method-registry';
import { Params } from '../params';

const LICENSE = { LICENSE: 'en_project', LICENSE_TYPE: 'project', LICENSE_FAMILY: 'project' };

/**
 * app.info: which application (for a token) or which rights (for a webhook) a credential has, with the
 * portal's member_id and domain so a client can check that an install post really came from this portal.
 */
function appInfo(_params: Params, context: MethodContext): MethodResult {
  const { caller, state } = context;
  const portal = { member_id: state.identity.memberId, DOMAIN: state.identity.domain };
  if (caller.kind === 'webhook') {
    return { result: { SCOPE: [...caller.scopes], ...LICENSE, INSTALLED: true, ...portal } };
  }
  return {
    result: {
      ID: caller.app.id,
      CODE: caller.app.code,
      VERSION: 1,
      STATUS: 'L',
      INSTALLED: true,
      PAYMENT_EXPIRED: 'N',
      DAYS: null,
      LANGUAGE_ID: 'en',
      ...LICENSE,
      SCOPE: [...caller.scopes],
      client_id: caller.app.clientId,
      ...portal,
    },
  };
}

export const appMethods: MethodDefinition[] = [{ name: 'app.info', scope: null, handler: appInfo }];
