import { ConnectionFollower, ConnectionFollowerOptions, Resynced } from '../connection-follower';
import { PbxSessionOptions } from '../pbx-connection';
import { EslEvent, header, parseJsonEvent } from './esl-message';
import { EslError, EslSession } from './esl-session';
import { EslLiveState, EslTracker } from './esl-tracker';

/** The events the tracker reads (real PBX output); RECORD_STOP too: a follower begun mid-call learns the file. */
export const ESL_EVENTS =
  'CHANNEL_CREATE CHANNEL_ANSWER CHANNEL_BRIDGE CHANNEL_UNBRIDGE CHANNEL_HANGUP_COMPLETE CHANNEL_UUID RECORD_START RECORD_STOP CUSTOM callcenter::info';

/** How many bridged calls' bridge times are read one by one (`uuid_dump`) at a resync. */
const MAX_DUMPS = 1000;

export type EslFollowerOptions = ConnectionFollowerOptions;

/**
 * One event socket connection (real PBX output, §4.8): subscribe (`event json …`), resync from `api status`,
 * `show channels` and `show calls`, `api status` as the keep-alive. No replay: a call whose outside leg went
 * while disconnected is possibly lost (mod_json_cdr, the ledger, posts its end).
 */
export class EslFollower extends ConnectionFollower<EslSession, EslEvent, EslTracker> {
  protected readonly source = 'esl';
  protected readonly wording = {
    down: 'event socket',
    lost: 'event socket connection',
    lostEnds: 'mod_json_cdr (the ledger) reports their end',
  };

  protected async open(options: PbxSessionOptions<EslEvent>): Promise<EslSession> {
    const session = await EslSession.open(this.target, options);
    const subscribed = await session.command(`event json ${ESL_EVENTS}`, 'event json');
    const reply = subscribed.headers['Reply-Text'] ?? '';
    if (!reply.startsWith('+OK')) {
      session.close();
      throw new EslError(`event subscription refused by ${this.label}: ${reply}`);
    }
    return session;
  }

  protected async resync(session: EslSession, held: readonly EslEvent[]): Promise<Resynced> {
    const live = await this.liveState(session);
    const hangingUp = new Set(
      held
        .filter((event) => header(event, 'Event-Name') === 'CHANNEL_HANGUP_COMPLETE')
        .map((event) => header(event, 'Unique-ID') ?? ''),
    );
    const { lost, events } = this.tracker.resync(live, Date.now(), hangingUp);
    return { lost, events, liveChannels: live.channels.length };
  }

  /** What is live now: the session counter, every channel, and who is bridged with whom. */
  private async liveState(session: EslSession): Promise<EslLiveState> {
    const status = await session.api('status');
    const channels = rowsOf(await session.api('show channels as json'));
    const calls = rowsOf(await session.api('show calls as json'));
    const count = /(\d+)\s+session\(s\) since startup/.exec(status)?.[1];
    const pairs = calls.filter((row) => row.uuid && row.b_uuid);
    return {
      channels,
      bridged: pairs.map((row) => [row.uuid, row.b_uuid] as [string, string]),
      sessionsSinceStartup: count === undefined ? undefined : Number(count),
      bridgedAt: await this.bridgeTimes(session, pairs),
      storedAnswers: await this.storedAnswers(channels.map((row) => row.call_uuid || row.uuid)),
    };
  }

  /**
   * When each bridged pair was bridged, on the PBX's clock: `uuid_dump`'s Caller-Channel-Bridged-Time (µs),
   * else the `show calls` row's call_created_epoch (the bridge, whole seconds).
   */
  private async bridgeTimes(
    session: EslSession,
    pairs: Record<string, string>[],
  ): Promise<ReadonlyMap<string, number>> {
    const times = new Map<string, number>();
    for (const [i, row] of pairs.entries()) {
      let at = Number(row.call_created_epoch) * 1000;
      if (i < MAX_DUMPS) {
        const dump = parseJsonEvent(await session.api(`uuid_dump ${row.uuid} json`));
        const bridgedUs = Number(dump && header(dump, 'Caller-Channel-Bridged-Time'));
        if (bridgedUs > 0) at = Math.round(bridgedUs / 1000);
      }
      if (!(at > 0)) continue;
      times.set(row.uuid, at);
      times.set(row.b_uuid, at);
    }
    return times;
  }
}

/** `show … as json`: `{"row_count":N,"rows":[…]}` (no `rows` when there are none). */
function rowsOf(body: string): Record<string, string>[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new EslError(`show … as json did not answer JSON: ${body.slice(0, 80).replace(/\s+/g, ' ')}`);
  }
  const rows = (parsed as { rows?: unknown }).rows;
  if (!Array.isArray(rows)) return [];
  return rows.filter((row): row is Record<string, string> => Boolean(row) && typeof row === 'object');
}
