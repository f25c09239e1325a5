import { ClickLedger } from './click-ledger';
import { CallEvent, CallRecord } from './call';
import { applyEvent, countSent, markFinished, newCall, plan } from './call-lifecycle';
import { clickMatches, crmCallIdOf, linkPortalCall, pickClick, StoredClick } from './click-match';

const CLICKED = Date.parse('2026-11-22T09:00:00Z');
const settings = { now: 1000, holdEndedWithoutStartMs: 60_000 };
const match = { windowMs: 60_000, userOf: (extension: string) => ({ '101': 7, '102': 8 })[extension] };
const started: CallEvent = {
  event: 'call.started',
  callId: 'pbx-1',
  direction: 'outbound',
  phoneNumber: '+4915112345678',
  extension: '101',
  at: '2026-11-22T10:00:20+01:00',
};
const ended: CallEvent = {
  event: 'call.ended',
  callId: 'pbx-1',
  at: '2026-11-22T10:01:20+01:00',
  durationSec: 55,
  status: 'answered',
  recordingUrl: 'https://pbx.example.com/rec/1.mp3',
};
const click: StoredClick = {
  portalCallId: 'externalCall.abc.1',
  userId: 7,
  phoneNumber: '+4915112345678',
  clickedAt: CLICKED,
};

/** Applies an event as intake does: the lifecycle, then the link to the portal's call, then the plan. */
function apply(call: CallRecord | undefined, event: CallEvent, ledger: ClickLedger): CallRecord {
  const applied = applyEvent(call ?? newCall('p', event.callId, 0), event, settings);
  return plan(linkPortalCall(applied, event, ledger, match), settings.now);
}

describe('click-to-call matching (pure rule)', () => {
  const call = applyEvent(newCall('p', 'pbx-1', 0), started, settings);

  it('matches the same employee, the same number, within DIAL_MATCH_SEC after the click', () => {
    expect(clickMatches(click, call, match)).toBe(true);
  });

  it('does not match another number, another employee, an inbound call or outside the window', () => {
    expect(clickMatches({ ...click, phoneNumber: '+4915100000000' }, call, match)).toBe(false);
    expect(clickMatches({ ...click, userId: 8 }, call, match)).toBe(false);
    expect(clickMatches(click, { ...call, party: { ...call.party, direction: 'inbound' } }, match)).toBe(
      false,
    );
    expect(clickMatches({ ...click, clickedAt: CLICKED - 61_000 }, call, match)).toBe(false);
    // A call starting well before the click is not its call (a few seconds of clock skew are allowed).
    expect(clickMatches({ ...click, clickedAt: CLICKED + 30_000 }, call, match)).toBe(false);
    expect(clickMatches({ ...click, clickedAt: CLICKED + 22_000 }, call, match)).toBe(true);
    expect(clickMatches({ ...click, matchedCallId: 'other' }, call, match)).toBe(false);
  });

  it('compares the call’s own user id when the PBX names one, and matches a callback by number', () => {
    expect(
      clickMatches(click, { ...call, party: { ...call.party, extension: undefined, userId: 7 } }, match),
    ).toBe(true);
    expect(clickMatches(click, { ...call, party: { ...call.party, extension: '999' } }, match)).toBe(false);
    expect(
      clickMatches(
        { ...click, userId: undefined },
        { ...call, party: { ...call.party, extension: '999' } },
        match,
      ),
    ).toBe(true);
  });

  it('takes the oldest matching click', () => {
    const newer = { ...click, portalCallId: 'externalCall.abc.2', clickedAt: CLICKED + 5_000 };
    expect(pickClick([newer, click], call, match)?.portalCallId).toBe('externalCall.abc.1');
  });

  it('accepts only CALL_ID-like crmCallIds from PBX fields', () => {
    expect(crmCallIdOf(' externalCall.abc.1 ')).toBe('externalCall.abc.1');
    expect(crmCallIdOf('')).toBeUndefined();
    expect(crmCallIdOf('has space')).toBeUndefined();
    expect(crmCallIdOf('x'.repeat(65))).toBeUndefined();
    expect(crmCallIdOf(42)).toBeUndefined();
  });
});

describe('click-to-call in the call lifecycle', () => {
  it('a click-matched call is never registered: finish, then the recording', () => {
    const ledger = new ClickLedger([click]);
    let call = apply(undefined, started, ledger);
    expect(call).toMatchObject({
      party: { heardRinging: false },
      portal: {
        callId: 'externalCall.abc.1',
        clickToCall: { portalCallId: 'externalCall.abc.1', matchedBy: 'click' },
        user: { USER_ID: 7 },
      },
      delivery: { state: 'registered' },
    });
    expect(call.delivery.nextStep).toBeUndefined();
    expect(ledger.changed).toEqual([{ ...click, matchedCallId: 'pbx-1' }]);
    call = apply(call, ended, ledger);
    expect(call.delivery.nextStep).toBe('finish');
    call = markFinished(countSent(call, ['finish']), 2000);
    expect(call.delivery.nextStep).toBe('attachRecord');
    expect(call.delivery.stepsSent.register).toBeUndefined();
  });

  it('a click is taken once: a second call to the same number registers normally', () => {
    const ledger = new ClickLedger([click]);
    apply(undefined, started, ledger);
    const other = apply(undefined, { ...started, callId: 'pbx-2' }, ledger);
    expect(other.portal.callId).toBeUndefined();
    expect(other.delivery.nextStep).toBe('register');
  });

  it('crmCallId links without a click, even on a call.ended with no start (the dialer’s timeout)', () => {
    const ledger = new ClickLedger([]);
    const failed: CallEvent = {
      event: 'call.ended',
      callId: 'dial-externalCall.abc.1',
      at: '2026-11-22T10:01:00+01:00',
      status: 'failed',
      failedReason: 'No answer from the PBX',
      crmCallId: 'externalCall.abc.1',
    };
    const call = apply(undefined, failed, ledger);
    expect(call).toMatchObject({
      portal: { callId: 'externalCall.abc.1', clickToCall: { matchedBy: 'crmCallId' } },
      delivery: { nextStep: 'finish' },
    });
    expect(ledger.changed).toEqual([{ portalCallId: 'externalCall.abc.1', matchedCallId: call.callId }]);
  });

  it('a second call with the same CALL_ID never finishes it again', () => {
    const ledger = new ClickLedger([{ ...click, matchedCallId: 'dial-externalCall.abc.1' }]);
    let call = apply(undefined, { ...started, crmCallId: click.portalCallId }, ledger);
    call = apply(call, ended, ledger);
    expect(call.portal.clickToCall).toMatchObject({ finishedBy: 'dial-externalCall.abc.1' });
    expect(call.delivery.nextStep).not.toBe('finish');
    expect(call.delivery.nextStep).not.toBe('register');
    expect(call.delivery.lastError).toMatch(/finished by call dial-externalCall.abc.1/);
  });

  it('a call with a CALL_ID of its own keeps it; a conflicting crmCallId is noted, not applied', () => {
    const ledger = new ClickLedger([]);
    let call = apply(undefined, started, ledger);
    call = { ...call, portal: { ...call.portal, callId: 'externalCall.own.1' } };
    call = apply(call, { ...ended, crmCallId: 'externalCall.abc.1' }, ledger);
    expect(call.portal.callId).toBe('externalCall.own.1');
    expect(call.delivery.lastError).toMatch(/crmCallId externalCall.abc.1 of call.ended ignored/);
    expect(ledger.changed).toEqual([]);
  });

  it('a call whose register was sent is never matched to a click', () => {
    const ledger = new ClickLedger([click]);
    const sent = countSent(applyEvent(newCall('p', 'pbx-1', 0), started, settings), ['register']);
    const call = apply(sent, ended, ledger);
    expect(call.portal.clickToCall).toBeUndefined();
    expect(ledger.changed).toEqual([]);
  });

  it('an inbound call is never matched', () => {
    const ledger = new ClickLedger([click]);
    const call = apply(undefined, { ...started, direction: 'inbound' }, ledger);
    expect(call.portal.callId).toBeUndefined();
  });

  it('a crmCallId report naming nobody finishes as the employee who clicked', () => {
    const ledger = new ClickLedger([click]);
    const failed: CallEvent = {
      event: 'call.ended',
      callId: 'dial-externalCall.abc.1',
      at: '2026-11-22T10:01:00+01:00',
      durationSec: 0,
      status: 'failed',
      crmCallId: click.portalCallId,
    };
    expect(apply(undefined, failed, ledger).portal.user).toEqual({ USER_ID: 7 });
    // The PBX's own extension wins over the click's user (who really called).
    const ledger2 = new ClickLedger([click]);
    const own = apply(undefined, { ...started, extension: '102', crmCallId: click.portalCallId }, ledger2);
    expect(own.portal.user).toEqual({ USER_PHONE_INNER: '102' });
  });
});
