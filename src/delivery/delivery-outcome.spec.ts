import { CallPatch, CallRecord, patchCall } from '../calls/call';
import { newCall, plan } from '../calls/call-lifecycle';
import { classifyPortalError, PortalError } from '../portal/portal-error';
import { applyAnswers, applyRequestFailure, refusedForContent } from './delivery-outcome';

const settings = { now: 10_000, maxBackoffMs: 2000, maxAttempts: 3 };

function registered(extra: CallPatch = {}): CallRecord {
  const call = patchCall(newCall('p', 'c1', 0), extra);
  return plan(
    patchCall(call, {
      party: {
        direction: 'inbound',
        phoneNumber: '+4930123',
        startedAt: '2026-11-22T10:00:00+01:00',
        heardRinging: true,
        ended: { at: '2026-11-22T10:01:00+01:00', durationSec: 60, status: 'answered' },
      },
      portal: { user: { USER_ID: 2 }, callId: 'externalCall.1' },
      delivery: { stepsSent: { register: 1, finish: 1 } },
    }),
    0,
  );
}

const proxyPage = () => classifyPortalError('', 'unexpected answer (HTTP 403)', 403);
const alone = { commandCount: 1, commands: [{ step: 'finish' as const, label: 'finish_0' }] };

describe('delivery outcomes', () => {
  it('a code-less 403 or a 400 is a refusal of the content; named rights, credentials and 5xx are not', () => {
    expect(refusedForContent(proxyPage())).toBe(true);
    expect(refusedForContent(classifyPortalError('', 'bad', 400))).toBe(true);
    expect(refusedForContent(classifyPortalError('insufficient_scope', 'no', 403))).toBe(false);
    expect(refusedForContent(classifyPortalError('ACCESS_DENIED', 'no', 403))).toBe(false);
    expect(refusedForContent(classifyPortalError('NO_AUTH_FOUND', 'no', 401))).toBe(false);
    expect(refusedForContent(classifyPortalError('', 'down', 502))).toBe(false);
  });

  it('a refused request of several commands marks its calls to go in half as many next time', () => {
    const next = applyRequestFailure(registered(), proxyPage(), settings, {
      commandCount: 7,
      commands: alone.commands,
    });
    expect(next).toMatchObject({ delivery: { batchLimit: 4, failed: false, nextStep: 'finish' } });
    expect(next.delivery.refused).toBeUndefined();
  });

  it('a step refused alone is retried with backoff, then parked with the words after maxAttempts', () => {
    let call = registered({ delivery: { batchLimit: 1 } });
    for (let i = 1; i < settings.maxAttempts; i++) {
      call = applyRequestFailure(call, proxyPage(), settings, alone);
      expect(call).toMatchObject({ delivery: { failed: false, refused: { finish: i } } });
      expect(call.delivery.dueAt).toBeGreaterThan(settings.now);
    }
    call = applyRequestFailure(call, proxyPage(), settings, alone);
    expect(call).toMatchObject({ delivery: { state: 'failed', nextStep: 'hide', refused: { finish: 3 } } });
    expect(call.delivery.lastError).toContain('HTTP 403');
  });

  it('an outage never parks: 5xx for the whole request retries forever without counting', () => {
    let call = registered({ delivery: { batchLimit: 1 } });
    const outage = classifyPortalError('', 'bad gateway', 502);
    for (let i = 0; i < 10; i++) call = applyRequestFailure(call, outage, settings, alone);
    expect(call).toMatchObject({ delivery: { failed: false, nextStep: 'finish' } });
    expect(call.delivery.refused).toBeUndefined();
  });

  it('a command failing on its own again and again is parked; a rate-limited one is not counted', () => {
    const answers = (error: PortalError) => new Map([['finish_0', { error }]]);
    const commands = alone.commands;
    let call = registered();
    const own = new PortalError('server', '', 'the batch answer did not mention this command');
    for (let i = 0; i < settings.maxAttempts; i++) {
      call = applyAnswers(call, commands, answers(own), settings);
    }
    expect(call).toMatchObject({ delivery: { state: 'failed', refused: { finish: 3 } } });

    let limited = registered();
    const budget = classifyPortalError('QUERY_LIMIT_EXCEEDED', 'Too many requests', 503);
    for (let i = 0; i < 10; i++) limited = applyAnswers(limited, commands, answers(budget), settings);
    expect(limited).toMatchObject({ delivery: { failed: false, nextStep: 'finish' } });
  });

  it('a success clears the suspicion', () => {
    const call = applyAnswers(
      registered({ delivery: { batchLimit: 1 } }),
      alone.commands,
      new Map([['finish_0', { result: { CALL_ID: 'externalCall.1' } }]]),
      settings,
    );
    expect(call).toMatchObject({ portal: { finished: true }, delivery: { state: 'finished' } });
    expect(call.delivery.batchLimit).toBeUndefined();
  });

  it('a hide keeps the finish reason of the parked call, and clears the card when done', () => {
    const parked = applyRequestFailure(
      registered({ delivery: { refused: { finish: 2 } } }),
      proxyPage(),
      settings,
      alone,
    );
    const hidden = applyAnswers(
      { ...parked, card: { ...parked.card, userIds: [2] } },
      [{ step: 'hide', label: 'hide_0' }],
      new Map([['hide_0', { result: true }]]),
      settings,
    );
    expect(hidden).toMatchObject({
      delivery: { state: 'failed', nextStep: undefined, lastError: parked.delivery.lastError },
    });
  });
});
