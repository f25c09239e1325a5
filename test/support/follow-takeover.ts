import axios from 'axios';
import { AmiDouble, PlayingCall } from './ami-double';
import { eventually } from './bridge-harness';
import { BridgeProcess } from './bridge-process';
import { assignPortals } from '../../src/delivery/shard-map';
import { fleetDetails, isAlive, portalViewOn } from './multi-fleet';

/** What the takeover scenario needs of the portal it follows for: its calls as the sandbox has them. */
export interface FollowedPortal {
  calls(): {
    PHONE_NUMBER: string;
    USER_ID: number;
    finished: null | { DURATION: number; STATUS_CODE: string; USER_ID?: number };
  }[];
}

/** A replica's view of its PBX follower: single mode's health details, or the portal's admin view. */
export async function followerOf(
  replica: BridgeProcess,
  portalId?: string,
): Promise<{ followingHere: boolean; connected: boolean } | undefined> {
  try {
    if (portalId) return (await portalViewOn(replica, portalId)).follow?.[0];
    const { data } = await axios.get(`${replica.url}/health/ready`, {
      validateStatus: () => true,
      timeout: 5000,
    });
    return (data.details ?? data.info)?.pbxFollow;
  } catch {
    return undefined;
  }
}

/** The one replica following the PBX now (waits until exactly one does). */
export async function theFollower(replicas: BridgeProcess[], portalId?: string): Promise<BridgeProcess> {
  return eventually(async () => {
    const alive = replicas.filter(isAlive);
    const views = await Promise.all(alive.map((replica) => followerOf(replica, portalId)));
    const following = alive.filter((_, i) => views[i]?.followingHere && views[i]?.connected);
    return following.length === 1 ? following[0] : undefined;
  }, 60_000);
}

/**
 * Waits until the fleet has settled on the portal's replica: the one the shard map gives it over every
 * replica (each computes the same) delivers it. Replicas started one after another see each other within a
 * liveness poll or two, and until every one does the portal may move once more (its delivery, and with it
 * its PBX, go along: a second login that is the placement at work, not a takeover).
 */
export async function settledOn(replicas: BridgeProcess[], portalId: string): Promise<BridgeProcess> {
  const ids = await Promise.all(replicas.map(async (replica) => (await fleetDetails(replica)).replicaId));
  const owner = replicas[ids.indexOf(assignPortals([portalId], ids).get(portalId) as string)];
  await eventually(async () => {
    const view = await portalViewOn(owner, portalId).catch(() => undefined);
    return view?.deliveringHere === true ? true : undefined;
  }, 60_000);
  return owner;
}

export interface TakeoverOutcome {
  /** From the kill to the survivor's Login at the PBX. */
  killToLoginMs: number;
  /** From the kill to the first call played after it being on the portal (registered). */
  killToNextCallMs: number;
  /** Calls played (each an outside call of its own number). */
  calls: number;
  /** The sandbox user who finished each call (101 = 2, 102 = 3, 103 = 4) and its talk time, by number. */
  finishedBy: Map<string, { USER_ID: number; DURATION: number }>;
}

/**
 * Kills the replica following `pbx` with SIGKILL while calls ring and talk, and plays on: 4 calls before,
 * 3 talking and 3 ringing across the kill (ended after the survivor's login), 4 after. Returns the figures;
 * the caller checks the portal has every call exactly once.
 */
export async function killTheFollower(
  pbx: AmiDouble,
  replicas: BridgeProcess[],
  portal: FollowedPortal,
  prefix: string,
  portalId?: string,
): Promise<TakeoverOutcome> {
  let n = 0;
  const finishedBy = new Map<string, { USER_ID: number; DURATION: number }>();
  const number = (user: number, talk: number) => {
    const value = `${prefix}${String(n++).padStart(3, '0')}`;
    finishedBy.set(value, { USER_ID: user, DURATION: talk });
    return value;
  };
  const before = Array.from({ length: 4 }, () =>
    pbx.play({ kind: 'inbound', from: number(3, 30), to: ['101', '102'], answeredBy: '102', talk: 30 }),
  );
  await Promise.all(before.map((call) => call.done));
  const talking: PlayingCall[] = Array.from({ length: 3 }, () =>
    pbx.play({
      kind: 'inbound',
      from: number(2, 60),
      to: '101',
      answeredBy: '101',
      talk: 60,
      holdOpen: true,
    }),
  );
  await Promise.all(talking.map((call) => call.answered));
  const ringing: PlayingCall[] = Array.from({ length: 3 }, () =>
    pbx.play({
      kind: 'inbound',
      from: number(4, 15),
      to: '103',
      answeredBy: '103',
      talk: 15,
      holdRinging: true,
    }),
  );
  // The follower has seen them (the card is up for the ringing ones) before it dies.
  await eventually(() => Promise.resolve(portal.calls().length >= 10 ? true : undefined), 30_000);

  const follower = await theFollower(replicas, portalId);
  const logins = pbx.logins;
  follower.child.kill('SIGKILL');
  const killedAt = Date.now();
  await eventually(() => Promise.resolve(pbx.logins > logins ? true : undefined), 60_000);
  const killToLoginMs = Date.now() - killedAt;
  await follower.exited;

  const next = number(2, 10);
  pbx.play({ kind: 'inbound', from: next, to: '101', answeredBy: '101', talk: 10 });
  await eventually(
    () => Promise.resolve(portal.calls().some((call) => call.PHONE_NUMBER === next) ? true : undefined),
    60_000,
  );
  const killToNextCallMs = Date.now() - killedAt;
  for (const call of ringing) call.pickUp();
  for (const call of talking) call.hangUp();
  const after = Array.from({ length: 3 }, () =>
    pbx.play({ kind: 'outbound', from: '101', to: number(2, 20), answeredBy: 'y', talk: 20 }),
  );
  await Promise.all([...talking, ...ringing, ...after].map((call) => call.done));
  return { killToLoginMs, killToNextCallMs, calls: n, finishedBy };
}
