import { newCall } from '../calls/call-lifecycle';
import { CallPatch, CallRecord, patchCall } from '../calls/call';
import { callsSection, durationOf, pageCallOf } from './page-calls';
import { textFor } from './page-text';

const call = (patch: CallPatch): CallRecord =>
  patchCall(newCall('p', 'c-1', Date.UTC(2026, 11, 3, 9)), patch);
const ended = { at: '2026-12-03T10:02:00Z', durationSec: 75, status: 'answered' as const };

describe("the page's calls list", () => {
  it('says waiting for the portal only while a step is due, in progress for an open call with nothing due', () => {
    expect(pageCallOf(call({ delivery: { state: 'queued', nextStep: 'register' } })).state).toBe('waiting');
    expect(pageCallOf(call({ delivery: { state: 'registered', nextStep: undefined } })).state).toBe(
      'progress',
    );
    expect(
      pageCallOf(call({ delivery: { state: 'registered', nextStep: 'finish' }, party: { ended } })).state,
    ).toBe('waiting');
    expect(pageCallOf(call({ delivery: { state: 'finished' }, party: { ended } })).state).toBe('delivered');
    expect(pageCallOf(call({ delivery: { state: 'failed', lastError: 'HTTP 403' } })).state).toBe('failed');
    expect(pageCallOf(call({ delivery: { state: 'ignored' } })).state).toBe('ignored');
  });

  it('shows durations as m:ss, and h:mm:ss from an hour', () => {
    expect(durationOf(0)).toBe('0:00');
    expect(durationOf(121)).toBe('2:01');
    expect(durationOf(3_725)).toBe('1:02:05');
  });

  it('names the employee from the directory, the direction in words, a withheld number as such', () => {
    const html = callsSection(
      {
        text: textFor('de'),
        lang: 'de',
        timeZone: 'Europe/Berlin',
        admin: true,
        employees: [{ id: 2, name: 'Anna Berger', extension: '101' }],
        calls: [
          pageCallOf(
            call({
              party: {
                direction: 'inbound',
                phoneNumber: 'anonymous',
                extension: '101',
                ended,
                startedAt: '2026-12-03T09:00:00Z',
              },
              delivery: { state: 'failed', lastError: 'HTTP 403 <refused>' },
            }),
          ),
        ],
      },
      '/app',
    );
    expect(html).toContain('Anna Berger');
    expect(html).toContain('eingehend');
    expect(html).toContain('unterdrückte Nummer');
    expect(html).toContain('1:15');
    // 09:00 UTC is 10:00 in Berlin.
    expect(html).toContain('10:00');
    expect(html).toContain('Was das Portal sagte: HTTP 403 &lt;refused&gt;');
    expect(html).toContain('/app/calls/c-1/requeue');
  });
});
