import { eventually, Harness } from '../support/bridge-harness';
import { callStatus } from '../delivery/delivery-support';

/** What the call-card specs ask of a harness: posts, the sandbox's record of the card, a settled call. */
export function cardChecks(h: () => Harness) {
  const post = (events: unknown[]) =>
    h().http.post('/v1/calls/events').set('Authorization', 'Bearer pbx-test-token-7f3a').send(events);
  const portalCall = (callId: string) => h().sandbox.calls({ EXTERNAL_CALL_ID: callId })[0];
  /** The card shown to `users` on the portal, and nothing more due for the call. */
  const cardSettles = (callId: string, users: number[]) =>
    eventually(async () => {
      const status = await callStatus(h(), callId);
      if (status.nextStep !== null) return undefined;
      const shown = [...(portalCall(callId)?.shownTo ?? [])].sort();
      return JSON.stringify(shown) === JSON.stringify(users) ? portalCall(callId) : undefined;
    }, 15000);
  const finished = (callId: string) =>
    eventually(async () => {
      const status = await callStatus(h(), callId);
      return status.state === 'finished' && status.nextStep === null ? portalCall(callId) : undefined;
    });
  const answered = (callId: string, extension: string, at: string) => ({
    event: 'call.answered',
    callId,
    extension,
    at,
  });
  return { post, portalCall, cardSettles, finished, answered };
}
