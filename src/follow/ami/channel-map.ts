import { AmiMessage } from './ami-message';
import { ChannelKind, Endpoints } from './endpoints';
import { UniqueidGaps } from './uniqueid-gaps';

/** One channel as the tracker last saw it. */
export interface Channel {
  uniqueid: string;
  name: string;
  linkedid: string;
  kind: ChannelKind;
  extension?: string;
  bridge?: string;
}

/** What a channel is to the calls followed: a call's outside party, in a call, or in none. */
export type ChannelRole = 'outside' | 'in-call' | 'none';

/**
 * The channels and bridges of one Asterisk as its events describe them, bounded: past `maxChannels` one is
 * forgotten, the oldest in no call, else the oldest that is no call's outside party (whose hang-up ends it).
 */
export class ChannelMap {
  private readonly channels = new Map<string, Channel>();
  readonly byName = new Map<string, string>();
  readonly bridges = new Map<string, Set<string>>();
  /** Channels hung up lately: an event about one after its Hangup (NewAccountCode) does not bring it back. */
  private readonly gone = new Set<string>();

  constructor(
    private readonly endpoints: Endpoints,
    private readonly maxChannels: number,
    private readonly gaps: UniqueidGaps,
    private readonly roleOf: (channel: Channel) => ChannelRole,
  ) {}

  get size(): number {
    return this.channels.size;
  }

  get(uniqueid: string): Channel | undefined {
    return this.channels.get(uniqueid);
  }

  values(): IterableIterator<Channel> {
    return this.channels.values();
  }

  /** A new session: everything is listed again (CoreShowChannels). */
  clear(): void {
    this.channels.clear();
    this.byName.clear();
    this.bridges.clear();
    this.gone.clear();
  }

  /** The channel a snapshot block (`prefix` '' or 'Dest') describes: registered when new, Linkedid updated. */
  see(event: AmiMessage, prefix = ''): Channel | undefined {
    const uniqueid = event[`${prefix}Uniqueid`];
    const name = event[`${prefix}Channel`];
    if (!uniqueid || !name || this.gone.has(uniqueid)) return undefined;
    const linkedid = event[`${prefix}Linkedid`] || uniqueid;
    let channel = this.channels.get(uniqueid);
    if (!channel) {
      const kind = this.endpoints.classify(name);
      channel = { uniqueid, name, linkedid, kind: kind.kind, extension: kind.extension };
      if (this.channels.size >= this.maxChannels) this.evict();
      this.channels.set(uniqueid, channel);
      this.byName.set(name, uniqueid);
      this.gaps.note(uniqueid);
    } else if (channel.linkedid !== linkedid) {
      // Pushed into a bridge with an older call: Asterisk rewrote its Linkedid (attended transfer).
      channel.linkedid = linkedid;
    }
    return channel;
  }

  /** A channel hung up: forgotten, and not brought back by a late event about it. */
  hungUp(channel: Channel): void {
    this.drop(channel);
    remember(this.gone, channel.uniqueid);
  }

  join(channel: Channel, bridge: string): void {
    if (channel.bridge && channel.bridge !== bridge) this.leave(channel.uniqueid);
    channel.bridge = bridge;
    let members = this.bridges.get(bridge);
    if (!members) this.bridges.set(bridge, (members = new Set()));
    members.add(channel.uniqueid);
  }

  leave(uniqueid: string): void {
    const channel = this.channels.get(uniqueid);
    if (!channel?.bridge) return;
    const members = this.bridges.get(channel.bridge);
    members?.delete(uniqueid);
    if (members?.size === 0) this.bridges.delete(channel.bridge);
    channel.bridge = undefined;
  }

  members(bridge: string): Channel[] {
    return [...(this.bridges.get(bridge) ?? [])].flatMap((id) => this.channels.get(id) ?? []);
  }

  /**
   * Walks bridges and Local pairs from `start` to the first phone (queues: trunk ⇄ ;1 … ;2 ⇄ phone), or to
   * another trunk (forwarded out: trunk ⇄ ;1 … ;2 ⇄ trunk).
   */
  connectedParty(start: string): Channel | undefined {
    const seen = new Set<string>([start]);
    const queue = [start];
    while (queue.length > 0 && seen.size < 64) {
      const channel = this.channels.get(queue.shift() as string);
      if (!channel) continue;
      const next: string[] = [];
      if (channel.kind === 'local') {
        const partner = this.partnerOf(channel);
        if (partner) next.push(partner);
      }
      for (const member of channel.bridge ? (this.bridges.get(channel.bridge) ?? []) : []) {
        const other = this.channels.get(member);
        if (!other || seen.has(member)) continue;
        if (other.kind === 'phone' && other.extension) return other;
        if (other.kind === 'trunk') return other;
        if (other.kind === 'local') next.push(member);
      }
      for (const id of next) {
        if (seen.has(id)) continue;
        seen.add(id);
        queue.push(id);
      }
    }
    return undefined;
  }

  private partnerOf(local: Channel): string | undefined {
    const half = /;([12])$/.exec(local.name)?.[1];
    if (!half) return undefined;
    return this.byName.get(`${local.name.slice(0, -1)}${half === '1' ? '2' : '1'}`);
  }

  private evict(): void {
    let fallback: Channel | undefined;
    for (const channel of this.channels.values()) {
      const role = this.roleOf(channel);
      if (role === 'outside') continue;
      if (role === 'none') return this.drop(channel);
      fallback ??= channel;
    }
    if (fallback) this.drop(fallback);
  }

  private drop(channel: Channel): void {
    this.leave(channel.uniqueid);
    this.channels.delete(channel.uniqueid);
    if (this.byName.get(channel.name) === channel.uniqueid) this.byName.delete(channel.name);
  }
}

/** Adds to a set of recent values that keeps the last 4 096. */
export function remember(recent: Set<string>, value: string): void {
  if (recent.size >= 4096) recent.delete(first(recent));
  recent.add(value);
}

export function first<K>(keyed: { keys(): IterableIterator<K> }): K {
  return keyed.keys().next().value as K;
}

/** `HH:MM:SS` (CoreShowChannel Duration) in ms. */
export function durationMs(value: string | undefined): number {
  const parts = (value ?? '').split(':').map(Number);
  if (parts.length !== 3 || parts.some((part) => !Number.isFinite(part))) return 0;
  return ((parts[0] * 60 + parts[1]) * 60 + parts[2]) * 1000;
}
