import { CallEvent } from './call';
import { applyEvent, newCall } from './call-lifecycle';
import { registerParams } from './portal-commands';
import { lineBook } from '../common/lines';
import { toStatusView } from './call-status';

const lines = lineBook(
  [
    { number: '+49 30 1234567', crmCreate: false, crmSource: 'WEB', defaultUserId: 9 },
    { number: 'internal-test', report: false },
    { number: '+49 40 7654321', missedCallTask: true },
    { number: '+49 89 1111111', missedCallTask: false },
  ],
  'pbx-bridge',
  'DE',
);
const base = {
  now: 1000,
  holdEndedWithoutStartMs: 60_000,
  lines,
  missedCallTaskWindowMs: 3_600_000,
};
const started = (line?: string): CallEvent => ({
  event: 'call.started',
  callId: 'c1',
  direction: 'inbound',
  phoneNumber: '+4915112345678',
  at: '2026-12-03T10:00:00+01:00',
  ...(line === undefined ? {} : { line }),
});
const missed: CallEvent = {
  event: 'call.ended',
  callId: 'c1',
  at: '2026-12-03T10:00:30+01:00',
  durationSec: 0,
  status: 'missed',
};

describe("a call's line", () => {
  it('is the PBX line, and its rule fixes the register: LINE_NUMBER, CRM_CREATE=0, CRM_SOURCE', () => {
    const call = applyEvent(newCall('p', 'c1', 0), started('+493012345 67'), base);
    expect(call.party.line).toBe('+493012345 67');
    // The event's line comes normalised from intake; the book matches normalised numbers.
    const normalised = applyEvent(newCall('p', 'c1', 0), started('+49301234567'), base);
    expect(normalised.portal.lineTerms).toEqual({ crmCreate: false, crmSource: 'WEB', defaultUserId: 9 });
    expect(registerParams(normalised, {})).toMatchObject({
      LINE_NUMBER: '+49301234567',
      CRM_CREATE: 0,
      CRM_SOURCE: 'WEB',
    });
  });

  it('without one is B24_LINE_NUMBER, with the defaults', () => {
    const call = applyEvent(newCall('p', 'c1', 0), started(), base);
    expect(call.party.line).toBe('pbx-bridge');
    expect(call.portal.lineTerms).toBeUndefined();
    const params = registerParams(call, {});
    expect(params).toMatchObject({ LINE_NUMBER: 'pbx-bridge', CRM_CREATE: 1 });
    expect(params).not.toHaveProperty('CRM_SOURCE');
  });

  it('report: false keeps the call off the portal: state ignored, nothing due, no task', () => {
    const settings = { ...base, missedCallTaskDeadlineMs: 3_600_000 };
    let call = applyEvent(newCall('p', 'c1', 0), started('internal-test'), settings);
    call = applyEvent(call, missed, settings);
    expect(call.delivery).toMatchObject({ state: 'ignored', ignored: true });
    expect(call.delivery.nextStep).toBeUndefined();
    expect(call.delivery.dueAt).toBeUndefined();
    expect(call.task).toBeUndefined();
    expect(toStatusView(call)).toMatchObject({ state: 'ignored', line: 'internal-test' });
  });

  it("missedCallTask overrides MISSED_CALL_TASK for the line's calls", () => {
    const on = applyEvent(applyEvent(newCall('p', 'c1', 0), started('+494076543 21'), base), missed, base);
    expect(on.task).toBeUndefined();
    const listed = applyEvent(applyEvent(newCall('p', 'c1', 0), started('+49407654321'), base), missed, base);
    expect(listed.task?.deadline).toBe('2026-12-03T11:00:30+01:00');
    const withTasks = { ...base, missedCallTaskDeadlineMs: 3_600_000 };
    const off = applyEvent(
      applyEvent(newCall('p', 'c1', 0), started('+49891111111'), withTasks),
      missed,
      withTasks,
    );
    expect(off.task).toBeUndefined();
  });

  it('is kept from a held call.ended that names it, and never changes once set', () => {
    const held = applyEvent(newCall('p', 'c1', 0), { ...missed, line: 'internal-test' }, base);
    expect(held.party.line).toBe('internal-test');
    const call = applyEvent(held, started('+49301234567'), base);
    expect(call.party.line).toBe('internal-test');
    expect(call.delivery.state).toBe('ignored');
  });
});
