import { EgressPolicy } from '../common/egress';
import { DialSettings } from '../config/settings';
import { AmiDialer } from './ami-dialer';
import { Dialer } from './dialer';
import { EslDialer } from './esl-dialer';
import { HttpDialer } from './http-dialer';

/**
 * The adapter DIAL_MODE chooses; undefined when click-to-call is off. `egress`: who its connections may
 * reach (the operator's own settings: unrestricted; a portal's in multi mode: the deployment's tenant rule).
 * A destination the rule refuses still builds a dialer: each click then fails at once with the refusal.
 */
export function createDialer(
  settings: DialSettings,
  egress: EgressPolicy,
  timeoutMs = 5000,
): Dialer | undefined {
  const reach = { timeoutMs, egress };
  switch (settings.mode) {
    case 'ami':
      return new AmiDialer({
        url: settings.amiUrl ?? '',
        channel: settings.amiChannel,
        context: settings.amiContext,
        ...reach,
      });
    case 'esl':
      return new EslDialer({ url: settings.eslUrl ?? '', originate: settings.eslOriginate, ...reach });
    case 'http':
      return new HttpDialer({
        url: settings.url ?? '',
        method: settings.method,
        authorization: settings.authorization,
        ...reach,
      });
    default:
      return undefined;
  }
}
