import { CallRecord, Direction, EndStatus } from '../calls/call';
import { esc } from './page-html';
import type { PageEmployee } from './page-source';
import type { PageText } from './page-text';

/** One of today's calls as the page lists it. */
export interface PageCall {
  callId: string;
  /**
   * `waiting`: something is due for the portal and not yet accepted; `progress`: the call is still open and
   * nothing is due; `ignored`: a call of a line with `"report": false` (LINES), kept off the portal.
   */
  state: 'delivered' | 'waiting' | 'progress' | 'failed' | 'ignored';
  attempts: number;
  lastError: string | null;
  /** The internal number of the call's employee (the answerer's, else the one who rang). */
  extension?: string;
  /** When it started (ms epoch): the PBX's start time, else when the bridge first heard of it. */
  startedAt?: number;
  direction?: Direction;
  phoneNumber?: string;
  /** The employee on the portal, when known (the register's or the finish's user). */
  userId?: number;
  /** Talk time once ended; undefined while open. */
  durationSec?: number;
  status?: EndStatus;
  /** The call's transcript (SPEC §12), when it has one. */
  transcript?: 'pending' | 'attached' | 'none' | 'failed';
}

/** A stored call as the page's list has it; the state in words (see `PageCall.state`). */
export function pageCallOf(call: CallRecord): PageCall {
  const { delivery, party, portal } = call;
  const open = party.ended === undefined;
  const due = delivery.nextStep !== undefined;
  const state: PageCall['state'] =
    delivery.state === 'failed'
      ? 'failed'
      : delivery.state === 'ignored'
        ? 'ignored'
        : delivery.state === 'finished'
          ? 'delivered'
          : due
            ? 'waiting'
            : open
              ? 'progress'
              : 'delivered';
  const started = party.startedAt ? Date.parse(party.startedAt) : NaN;
  return {
    callId: call.callId,
    state,
    attempts: delivery.attempts,
    lastError: delivery.lastError ?? null,
    transcript: call.transcript?.state,
    extension: party.answeredBy ?? party.extension,
    startedAt: Number.isFinite(started) ? started : call.createdAt,
    direction: party.direction,
    phoneNumber: party.phoneNumber,
    userId: portal.finishUser?.USER_ID ?? portal.user?.USER_ID ?? party.userId,
    durationSec: party.ended?.durationSec,
    status: party.ended?.status,
  };
}

/** `m:ss` (`h:mm:ss` from an hour). */
export function durationOf(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const two = (n: number) => String(n).padStart(2, '0');
  const hours = Math.floor(s / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  return hours ? `${hours}:${two(minutes)}:${two(s % 60)}` : `${minutes}:${two(s % 60)}`;
}

/** What the list needs beside the calls. */
export interface CallsView {
  text: PageText;
  lang: string;
  calls: PageCall[];
  employees: PageEmployee[] | undefined;
  admin: boolean;
  /** The zone the times are shown in: the bridge's (TZ) unless the portal's is known. */
  timeZone?: string;
}

/**
 * Today's calls: time, direction (arrow and word), the other party's number, the employee (named from the
 * directory, else the internal number), duration or "in progress", the state in words (failed: with what
 * the portal said), the call id smaller. Each cell carries its column's name, so at 400 px the rows stack.
 */
export function callsSection(view: CallsView, base: string): string {
  const { text, calls } = view;
  const count = (state: PageCall['state']) => calls.filter((call) => call.state === state).length;
  // Calls a line's rule keeps off the portal, once there are any; today's transcripts, once any call has one.
  const ignored = count('ignored') > 0 ? ` · ${esc(text.ignored)}: <strong>${count('ignored')}</strong>` : '';
  const transcripts = (state: PageCall['transcript']) =>
    calls.filter((call) => call.transcript === state).length;
  const transcribed = calls.some((call) => call.transcript !== undefined)
    ? ` · ${esc(text.transcriptsAttached)}: <strong>${transcripts('attached')}</strong> · ${esc(text.transcriptsFailed)}: <strong>${transcripts('failed')}</strong>`
    : '';
  const summary = `<p class="counts">${esc(text.delivered)}: <strong>${count('delivered')}</strong> · ${esc(text.waiting)}: <strong>${count('waiting')}</strong> · ${esc(text.progress)}: <strong>${count('progress')}</strong> · ${esc(text.failed)}: <strong>${count('failed')}</strong>${ignored}${transcribed}</p>`;
  if (calls.length === 0) {
    return `<section id="calls"><h2>${esc(text.calls)}</h2>${summary}<p>${esc(text.noCalls)}</p></section>`;
  }
  const time = timeFormat(view.lang, view.timeZone);
  const byId = new Map((view.employees ?? []).map((employee) => [employee.id, employee.name]));
  const byExtension = new Map(
    (view.employees ?? []).filter((e) => e.extension).map((e) => [e.extension as string, e.name]),
  );
  const heads = [text.time, text.direction, text.number, text.employee, text.duration, text.state];
  const cell = (index: number, html: string, css = '') =>
    `<td data-label="${esc(heads[index])}"${css ? ` class="${css}"` : ''}>${html}</td>`;
  const rows = [...calls]
    .sort((a, b) => (b.startedAt ?? 0) - (a.startedAt ?? 0))
    .map((call) => {
      const direction =
        call.direction === 'outbound'
          ? `<span aria-hidden="true">→</span> ${esc(text.outbound)}`
          : call.direction === 'inbound'
            ? `<span aria-hidden="true">←</span> ${esc(text.inbound)}`
            : '';
      const number =
        call.phoneNumber === 'anonymous' ? `<em>${esc(text.anonymous)}</em>` : esc(call.phoneNumber ?? '');
      const name =
        (call.userId !== undefined ? byId.get(call.userId) : undefined) ??
        (call.extension ? byExtension.get(call.extension) : undefined);
      const employee = name
        ? `${esc(name)}${call.extension ? ` <span class="detail">${esc(call.extension)}</span>` : ''}`
        : esc(call.extension ?? '');
      const duration =
        call.durationSec === undefined ? esc(text.inProgress) : esc(durationOf(call.durationSec));
      // Each state's words are the text of its name (`text.delivered`, `text.waiting`, `text.progress`…).
      const words = text[call.state];
      const said =
        call.state === 'failed' && call.lastError
          ? `<br><span class="portal-words">${esc(text.portalSaid)}: ${esc(call.lastError)}</span>`
          : '';
      const action =
        call.state === 'failed' && view.admin
          ? `<form method="post" action="${base}/calls/${encodeURIComponent(call.callId)}/requeue"><button type="submit">${esc(text.requeue)}</button></form>`
          : '';
      return `<tr class="${call.state}">${[
        cell(0, call.startedAt === undefined ? '' : esc(time.format(call.startedAt))),
        cell(1, direction),
        cell(2, `${number}<br><small class="call-id">${esc(text.callIdSmall)} ${esc(call.callId)}</small>`),
        cell(3, employee),
        cell(4, duration),
        cell(5, `<span class="state-word">${esc(words)}</span>${said}`),
      ].join('')}<td class="action">${action}</td></tr>`;
    });
  const all =
    view.admin && count('failed') > 0
      ? `<form method="post" action="${base}/calls/requeue-failed"><button type="submit">${esc(text.requeueAll)}</button></form>`
      : '';
  const head = heads.map((label) => `<th scope="col">${esc(label)}</th>`).join('');
  return `<section id="calls"><h2>${esc(text.calls)}</h2>${summary}<div class="scroll"><table class="calls"><thead><tr>${head}<th scope="col"><span class="hidden">${esc(text.requeue)}</span></th></tr></thead><tbody>${rows.join('')}</tbody></table></div>${all}</section>`;
}

function timeFormat(lang: string, timeZone: string | undefined): Intl.DateTimeFormat {
  try {
    return new Intl.DateTimeFormat(lang, { hour: '2-digit', minute: '2-digit', timeZone });
  } catch {
    // an unknown zone: the bridge's own
    return new Intl.DateTimeFormat(lang, { hour: '2-digit', minute: '2-digit' });
  }
}
