import { GlobSet } from '../../common/glob';
import { InternalNumbers, internalBecause } from '../../pbx/adapters/internal-numbers';

/** What a channel is to the bridge: a trunk (the outside party), an employee's phone, a Local half, or other. */
export type ChannelKind = 'trunk' | 'phone' | 'local' | 'other';

export interface ChannelClass {
  kind: ChannelKind;
  /** A phone's internal number; for a Local half, the internal number it dials (`Local/101@from-queue`). */
  extension?: string;
}

/**
 * Tells trunks from phones by channel name (`PJSIP/<endpoint>-<8 hex>`, `Local/<exten>@<context>-<hex>;1`).
 * With PBX_TRUNKS patterns (`PJSIP/trunk*`, `*` matches anything) a channel matching one is a trunk and any
 * other endpoint an employee's phone; without them an endpoint is a phone when its name is an internal number
 * (the employee directory knows it, or it has at most PBX_INTERNAL_MAX_DIGITS digits) and a trunk otherwise.
 */
export class Endpoints {
  private readonly trunks: GlobSet;

  constructor(
    trunkPatterns: readonly string[],
    private readonly numbers: InternalNumbers,
  ) {
    this.trunks = new GlobSet(trunkPatterns);
  }

  classify(channel: string | undefined): ChannelClass {
    if (!channel) return { kind: 'other' };
    const slash = channel.indexOf('/');
    if (slash <= 0) return { kind: 'other' };
    const tech = channel.slice(0, slash);
    const resource = channel.slice(slash + 1);
    if (/^local$/i.test(tech)) {
      const exten = resource.split('@')[0];
      return { kind: 'local', extension: internalBecause(exten, this.numbers) ? exten : undefined };
    }
    if (/^(message|announcer|recorder|snoop|bridge|cbanchor|cbrtpstream)$/i.test(tech)) {
      return { kind: 'other' };
    }
    const endpoint = resource.replace(/-[0-9a-f]+$/i, '').split('/')[0];
    if (this.trunks.size > 0) {
      if (this.trunks.matchesAny(channel)) return { kind: 'trunk' };
      return { kind: 'phone', extension: endpoint };
    }
    if (internalBecause(endpoint, this.numbers)) return { kind: 'phone', extension: endpoint };
    return { kind: 'trunk' };
  }

  /** The internal number in a queue member's interface (`Local/102@from-queue/n`, `PJSIP/102`). */
  memberExtension(interfaceName: string | undefined, memberName: string | undefined): string | undefined {
    const fromInterface = interfaceName?.match(/^[A-Za-z0-9]+\/([^@/]+)/)?.[1];
    for (const candidate of [fromInterface, memberName]) {
      if (candidate && internalBecause(candidate, this.numbers)) return candidate;
    }
    return undefined;
  }
}
