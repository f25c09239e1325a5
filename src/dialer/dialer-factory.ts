import { DialSettings } from '../config/settings';
import { AmiDialer } from './ami-dialer';
import { Dialer } from './dialer';
import { EslDialer } from './esl-dialer';
import { HttpDialer } from './http-dialer';

/** The adapter DIAL_MODE chooses; undefined when click-to-call is off. */
export function createDialer(settings: DialSettings, timeoutMs = 5000): Dialer | undefined {
  switch (settings.mode) {
    case 'ami':
      return new AmiDialer({
        url: settings.amiUrl ?? '',
        channel: settings.amiChannel,
        context: settings.amiContext,
        timeoutMs,
      });
    case 'esl':
      return new EslDialer({ url: settings.eslUrl ?? '', originate: settings.eslOriginate, timeoutMs });
    case 'http':
      return new HttpDialer({
        url: settings.url ?? '',
        method: settings.method,
        authorization: settings.authorization,
        timeoutMs,
      });
    default:
      return undefined;
  }
}
