import { CallEvent } from '../../src/calls/call';

/** Events as the store takes them (validated, phone in E.164), for specs that drive the store directly. */
export function startedEvent(callId: string): CallEvent {
  return {
    event: 'call.started',
    callId,
    direction: 'inbound',
    phoneNumber: '+4915112345678',
    extension: '101',
    at: '2026-11-22T10:00:00+01:00',
  };
}

export function endedEvent(callId: string, recordingUrl?: string): CallEvent {
  return {
    event: 'call.ended',
    callId,
    at: '2026-11-22T10:01:00+01:00',
    durationSec: 60,
    status: 'answered',
    recordingUrl,
  };
}
