import { CallStore } from '../store/call-store';

/** At most this many live calls' answer times are read at a resync (a PBX's calls at once, with room). */
const MAX_LOOKUPS = 1000;

/**
 * When each of these calls was answered, as stored (ms by callId): the replica that followed the PBX before
 * noted it. A follower taking over asks it at its resync, so a call live across the takeover keeps its talk
 * time from the real answer (CoreShowChannels gives a channel's age, not its answer time).
 */
export async function storedAnswers(
  calls: CallStore,
  portalId: string,
  callIds: string[],
): Promise<ReadonlyMap<string, number>> {
  const answers = new Map<string, number>();
  await Promise.all(
    callIds.slice(0, MAX_LOOKUPS).map(async (callId) => {
      const answeredAt = (await calls.findCall(portalId, callId))?.party.answeredAt;
      const at = answeredAt ? Date.parse(answeredAt) : NaN;
      if (Number.isFinite(at)) answers.set(callId, at);
    }),
  );
  return answers;
}
