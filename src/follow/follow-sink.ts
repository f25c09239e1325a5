import { CallEvent } from '../calls/call';

/**
 * Where followed call events go: in order, durably, retried until stored. The same idempotency keys as
 * posted events ((callId, event), answered per person), so a call both posted and followed is stored once.
 */
export abstract class FollowSink {
  abstract submit(events: CallEvent[]): void;
}
