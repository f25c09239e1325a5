import { crmCallIdOf } from '../../calls/click-match';
import { EslEvent, header } from './esl-message';
import { LegClass, Legs } from './legs';

/** One FreeSWITCH leg (channel) as the tracker last saw it. */
export interface Leg {
  uuid: string;
  kind: LegClass['kind'];
  extension?: string;
  /** The leg it is bridged with now (CHANNEL_BRIDGE's other Unique-ID). */
  partner?: string;
  /** Click-to-call: the portal's CALL_ID the dialer put on the originate (`crm_call_id`). */
  crmCallId?: string;
}

/** The legs of one FreeSWITCH and who is bridged with whom, bounded: past `maxLegs` the oldest is forgotten. */
export class LegMap {
  private readonly legs = new Map<string, Leg>();

  constructor(
    private readonly classes: Legs,
    private readonly maxLegs: number,
  ) {}

  get size(): number {
    return this.legs.size;
  }

  get(uuid: string | undefined): Leg | undefined {
    return uuid === undefined ? undefined : this.legs.get(uuid);
  }

  /** The leg bridged with `uuid` now. */
  partnerOf(uuid: string): Leg | undefined {
    return this.get(this.legs.get(uuid)?.partner);
  }

  /** The leg an event is about: registered when new (classified from the event's headers). */
  see(event: EslEvent): Leg | undefined {
    const uuid = header(event, 'Unique-ID');
    if (!uuid) return undefined;
    let leg = this.legs.get(uuid);
    if (!leg) {
      if (!header(event, 'Channel-Name')) return undefined;
      const kind = this.classes.classify(event);
      leg = { uuid, kind: kind.kind, extension: kind.extension };
      if (this.legs.size >= this.maxLegs) {
        const oldest = this.legs.keys().next().value;
        if (oldest !== undefined) this.legs.delete(oldest);
      }
      this.legs.set(uuid, leg);
    }
    leg.crmCallId ??= crmCallIdOf(header(event, 'variable_crm_call_id'));
    return leg;
  }

  /**
   * After a reconnect: legs no longer live (nor hanging up in the events held meanwhile) are forgotten,
   * those still live keep what was known of them, new ones are classified from their `show channels` row,
   * and the bridges are rebuilt from `show calls`. Returns how many legs were new.
   */
  resync(
    rows: Record<string, string>[],
    bridged: [string, string][],
    keep: (uuid: string) => boolean,
  ): number {
    for (const uuid of [...this.legs.keys()]) if (!keep(uuid)) this.legs.delete(uuid);
    for (const leg of this.legs.values()) leg.partner = undefined;
    let fresh = 0;
    for (const row of rows) {
      if (!row.uuid || this.legs.has(row.uuid)) continue;
      fresh++;
      const kind = this.classes.classifyRow(row);
      this.legs.set(row.uuid, { uuid: row.uuid, kind: kind.kind, extension: kind.extension });
    }
    for (const [a, b] of bridged) this.pair(a, b);
    return fresh;
  }

  pair(a: string, b: string): void {
    const one = this.legs.get(a);
    const other = this.legs.get(b);
    if (one) one.partner = b;
    if (other) other.partner = a;
  }

  unpair(a: string | undefined, b: string | undefined): void {
    for (const [one, other] of [
      [a, b],
      [b, a],
    ]) {
      const leg = this.get(one);
      if (leg && leg.partner === other) leg.partner = undefined;
    }
  }

  /** CHANNEL_UUID: the leg `old` is now `uuid` (and so is it as anyone's partner). */
  rename(old: string, uuid: string): boolean {
    const leg = this.legs.get(old);
    if (!leg) return false;
    this.legs.delete(old);
    leg.uuid = uuid;
    this.legs.set(uuid, leg);
    for (const other of this.legs.values()) if (other.partner === old) other.partner = uuid;
    return true;
  }

  /** The leg hung up: forgotten, and unbridged from its partner. */
  remove(leg: Leg): void {
    const partner = this.get(leg.partner);
    if (partner?.partner === leg.uuid) partner.partner = undefined;
    this.legs.delete(leg.uuid);
  }

  /** A leg the tracker never saw, as its channel name says (`variable_bridge_channel`). */
  classifyChannel(name: string | undefined): LegClass {
    return this.classes.classify({ 'Channel-Name': name, 'Call-Direction': 'outbound' });
  }
}
