import { CallEvent } from '../../../src/calls/call';
import { applyEvent, newCall } from '../../../src/calls/call-lifecycle';
import { EventApplier } from '../../../src/store/call-store';
import { startedEvent } from '../../support/call-events';
import { TEST_ENGINES } from '../../support/test-database';
import { storesPerTest } from './engines';

const P = 'portal-a';
const Q = 'portal-b';

/** The lifecycle's own applier, the call created at `now`. */
const lifecycle =
  (portalId: string, now: number): EventApplier =>
  (call, event) =>
    applyEvent(call ?? newCall(portalId, event.callId, now), event, { now, holdEndedWithoutStartMs: 60_000 });

const on = (callId: string, line?: string): CallEvent => ({ ...startedEvent(callId), line });

/** Today's calls by line (the page's lines list), the same on both engines. */
describe.each(TEST_ENGINES)('calls by line (%s)', (_name, engineOf) => {
  const { stores } = storesPerTest(engineOf);
  const calls = () => stores().calls;

  it('counts the calls created since a time on each line, busiest first, per portal only', async () => {
    const midnight = Date.UTC(2026, 10, 22);
    await calls().ingest(P, [[on('yesterday', '+4930111')]], lifecycle(P, midnight - 1));
    await calls().ingest(
      P,
      [[on('a1', '+4930111')], [on('a2', '+4930111')], [on('b1', '+4930222')], [on('none')]],
      lifecycle(P, midnight + 1000),
    );
    await calls().ingest(Q, [[on('q1', '+4930111')]], lifecycle(Q, midnight + 1000));

    const counted = await calls().callsByLine(P, midnight);
    expect(counted[0]).toEqual({ line: '+4930111', calls: 2 });
    // Equal counts come in the engine's order.
    expect(counted.slice(1).sort((a, b) => (a.line ?? '').localeCompare(b.line ?? ''))).toEqual([
      { line: undefined, calls: 1 },
      { line: '+4930222', calls: 1 },
    ]);
    expect(await calls().callsByLine(Q, midnight)).toEqual([{ line: '+4930111', calls: 1 }]);
    expect(await calls().callsByLine(P, midnight + 2000)).toEqual([]);
  });
});
