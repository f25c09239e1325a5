import { CallRecord } from '../calls/call';
import { requeue } from '../calls/call-lifecycle';
import { WorkSignal } from '../common/work-signal';
import { CallStore } from '../store/call-store';

/** How many failed calls one "re-queue all failed" sends back at most. */
const REQUEUE_ALL_LIMIT = 10_000;

/** What re-queueing needs: the store, the signal that wakes the portal's delivery, the hold of an ended call. */
export interface RequeueDeps {
  calls: CallStore;
  signal: WorkSignal;
  /** DeliverySettings.holdEndedWithoutStartMs: a call with no start details waits this long for them again. */
  holdEndedWithoutStartMs: number;
}

/** The calls as stored after the update, and how many of them were failed then (and so were re-queued). */
export interface RequeueOutcome {
  calls: CallRecord[];
  requeued: number;
}

/**
 * Sends the portal's failed calls among `callIds` back to delivery (the admin API's and the app page's
 * re-queue), then wakes its delivery. A call delivered meanwhile (not failed when the update runs) is left
 * as it is and not counted.
 */
export async function requeueCalls(
  deps: RequeueDeps,
  portalId: string,
  callIds: string[],
): Promise<RequeueOutcome> {
  const requeued = new Set<string>();
  const calls = await deps.calls.updateCalls(portalId, callIds, (current) => {
    if (!current.delivery.failed) {
      requeued.delete(current.callId);
      return current;
    }
    requeued.add(current.callId);
    return requeue(current, Date.now(), deps.holdEndedWithoutStartMs);
  });
  deps.signal.workAdded(portalId);
  return { calls, requeued: requeued.size };
}

/** Every failed call of the portal (at most REQUEUE_ALL_LIMIT) back to delivery: how many were re-queued. */
export async function requeueAllFailed(deps: RequeueDeps, portalId: string): Promise<number> {
  const failed = await deps.calls.listCalls(portalId, 'failed', REQUEUE_ALL_LIMIT);
  const outcome = await requeueCalls(
    deps,
    portalId,
    failed.map((call) => call.callId),
  );
  return outcome.requeued;
}
