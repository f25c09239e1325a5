import { GlobSet } from '../../common/glob';
import { userOfChannel } from '../../pbx/adapters/freeswitch-cdr';
import { InternalNumbers, internalBecause } from '../../pbx/adapters/internal-numbers';
import { EslEvent, header } from './esl-message';

/** What a FreeSWITCH leg is to the bridge: the outside party (a trunk), an employee's phone, or other. */
export interface LegClass {
  kind: 'trunk' | 'phone' | 'other';
  /** A phone's internal number. */
  extension?: string;
}

/**
 * Tells trunk legs from phone legs (real PBX output): PBX_TRUNKS patterns when set, else gateways, the
 * `user/` endpoint's `dialed_user`, the `public` context (where calls from trunks land) and internal
 * numbers. FreeSWITCH's `Call-Direction` is per leg and relative to the switch, so it cannot tell.
 */
export class Legs {
  private readonly trunks: GlobSet;

  constructor(
    trunkPatterns: readonly string[],
    private readonly numbers: InternalNumbers,
  ) {
    this.trunks = new GlobSet(trunkPatterns);
  }

  classify(event: EslEvent): LegClass {
    const name = header(event, 'Channel-Name') ?? '';
    if (!/^(sofia|verto\.rtc|rtc|freetdm)\//i.test(name)) return { kind: 'other' };
    const dialled = header(event, 'Call-Direction') === 'outbound';
    const user = this.userOf(event, dialled);
    if (this.trunks.size > 0) {
      if (this.trunks.matchesAny(name)) return { kind: 'trunk' };
      return { kind: 'phone', extension: user };
    }
    if (header(event, 'variable_sip_gateway_name') || header(event, 'variable_sip_gateway')) {
      return { kind: 'trunk' };
    }
    const dialledUser = header(event, 'variable_dialed_user');
    if (dialled && dialledUser && internalBecause(dialledUser, this.numbers)) {
      return { kind: 'phone', extension: dialledUser };
    }
    if (!dialled && header(event, 'Caller-Context') === 'public') return { kind: 'trunk' };
    if (user && internalBecause(user, this.numbers)) return { kind: 'phone', extension: user };
    return { kind: 'trunk' };
  }

  /** A `show channels` row as the headers `classify` reads (resync: channels first seen in the list). */
  classifyRow(row: Record<string, string>): LegClass {
    const dialled = row.direction === 'outbound';
    const presenceUser = row.presence_id?.split('@')[0];
    return this.classify({
      'Channel-Name': row.name,
      'Call-Direction': row.direction,
      'Caller-Context': row.initial_context || row.context,
      'Caller-Caller-ID-Number': row.cid_num,
      'Caller-Destination-Number': row.dest,
      // The user/ endpoint sets presence_id (user@domain) on the legs it dials.
      ...(dialled && presenceUser ? { variable_dialed_user: presenceUser } : {}),
    });
  }

  private userOf(event: EslEvent, dialled: boolean): string | undefined {
    if (dialled) {
      return (
        header(event, 'variable_dialed_user') ??
        userPart(header(event, 'Caller-Destination-Number')) ??
        userOfChannel(header(event, 'Channel-Name'))
      );
    }
    return (
      header(event, 'variable_user_name') ??
      header(event, 'variable_sip_auth_username') ??
      header(event, 'Caller-Caller-ID-Number') ??
      userOfChannel(header(event, 'Channel-Name'))
    );
  }
}

/** `101`, `101@pbx.example.com` or `sip:101@…` (a bridge to a sofia contact) → `101`. */
function userPart(value: string | undefined): string | undefined {
  return (
    value
      ?.replace(/^sips?:/i, '')
      .split('@')[0]
      .trim() || undefined
  );
}
