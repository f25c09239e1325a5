import { CallEvent } from '../../calls/call';
import { asteriskCdrToEvents } from '../../pbx/adapters/asterisk-cdr';
import { Endpoints } from '../ami/endpoints';
import { followedLine } from '../followed-calls';

/**
 * One row of FreePBX's `asteriskcdrdb.cdr` (real PBX output): one Party A / Party B pair of one call, written
 * when Party A's channel ends. Times are the PBX's local time text, as the column holds them.
 */
export interface CdrRow {
  /** The row's start (`calldate`), `YYYY-MM-DD HH:MM:SS`. */
  calldate: string;
  /** `calldate + duration`: when the row's leg ended, the same format. */
  ended: string;
  src: string;
  dst: string;
  channel: string;
  dstchannel: string;
  lastapp: string;
  duration: number;
  billsec: number;
  disposition: string;
  uniqueid: string;
  did: string;
  recordingfile: string;
  cnum: string;
  /** FreePBX's CDR(outbound_cnum): the caller ID an outbound route presented (the call's line). */
  outbound_cnum: string;
  linkedid: string;
  sequence: number | null;
}

/**
 * What identifies a row: `(uniqueid, sequence)` is unique in practice (sequence is a global counter per
 * Asterisk run, uniqueid embeds the channel's creation epoch); a row without `sequence` (an older cdr
 * module) is identified by its whole content.
 */
export function rowKey(row: CdrRow): string {
  if (row.sequence !== null && row.sequence !== undefined) return `${row.uniqueid}#${row.sequence}`;
  return [row.uniqueid, row.calldate, row.channel, row.dstchannel, row.disposition, row.duration, row.billsec]
    .map((part) => String(part))
    .join('|');
}

export type LedgerCall = { events: CallEvent[] } | { ignored: string };

export interface LedgerMapping {
  endpoints: Endpoints;
  /** PBX_TIME_ZONE: the zone of `calldate`. */
  zone: string;
  /** ASTERISK_RECORDING_URL. */
  recordingTemplate?: string;
}

/** The CDR's local time text as if it were UTC (ms), and back: arithmetic on the PBX's clock, zone aside. */
export const naive = (local: string) => Date.parse(`${local.replace(' ', 'T')}Z`);
export const local = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
const answeredAt = (row: CdrRow) => naive(row.calldate) + (row.duration - row.billsec) * 1000;

/**
 * A finished call's rows (one `linkedid`) as what the posted Asterisk CDR route would make of the call's
 * one CDR (`asteriskCdrToEvents`: a `call.answered` by who picked up, then `call.ended` carrying start,
 * direction, number, extension, talk time, status, recording). The rows are folded into that CDR:
 * - a call with no trunk in any row is phone to phone: ignored;
 * - the originating row (`uniqueid = linkedid`) says the direction: its channel a trunk, inbound;
 * - inbound: the legs are the rows dialling a phone (a queue's member Local halves only when no row to the
 *   phone itself is there: a Queue row's answer is the queue's, not the agent's); answered when one of them
 *   is ANSWERED (a trunk answered by voicemail, an IVR or the queue alone is missed), busy when every leg was
 *   busy; the answerer is the last phone to pick up (a transfer's target);
 * - outbound: the leg to the trunk gives the number dialled and the outcome; transferred on, the trunk's
 *   own rows name the phone that took it last;
 * - talk time runs from the first answer of a phone (the agent's, in a queue) to the last row's end.
 */
export function ledgerCallOf(linkedid: string, rows: CdrRow[], mapping: LedgerMapping): LedgerCall {
  const { endpoints } = mapping;
  const sorted = [...rows].sort(
    (a, b) => a.calldate.localeCompare(b.calldate) || (a.sequence ?? 0) - (b.sequence ?? 0),
  );
  const kindOf = (channel: string) => endpoints.classify(channel || undefined);
  const phoneOf = (channel: string) => {
    const what = kindOf(channel);
    return what.kind === 'phone' || what.kind === 'local' ? what.extension : undefined;
  };
  // Rows to a phone itself; a queue's rows to a member's Local half only when no such row is there: their
  // answer is the queue's answer of the caller (also on NO ANSWER rows), not the agent's.
  const toPhones = (candidates: CdrRow[]) => {
    const direct = candidates.filter((row) => kindOf(row.dstchannel).kind === 'phone');
    return direct.length > 0 ? direct : candidates.filter((row) => phoneOf(row.dstchannel) !== undefined);
  };
  if (
    !sorted.some((row) => kindOf(row.channel).kind === 'trunk' || kindOf(row.dstchannel).kind === 'trunk')
  ) {
    return { ignored: 'no trunk in any row: a call between phones' };
  }
  const primary = sorted.find((row) => row.uniqueid === linkedid) ?? sorted[0];
  const inbound = kindOf(primary.channel).kind === 'trunk';
  const start = naive(sorted[0].calldate);
  const end = Math.max(...sorted.map((row) => naive(row.ended)));

  let legs: CdrRow[];
  let disposition: string;
  let src: string;
  let dst: string;
  let extension: string | undefined;
  if (inbound) {
    legs = toPhones(sorted);
    const answered = legs.filter((row) => row.disposition === 'ANSWERED');
    disposition =
      answered.length > 0
        ? 'ANSWERED'
        : legs.length > 0 && legs.every((row) => row.disposition === 'BUSY')
          ? 'BUSY'
          : 'NO ANSWER';
    legs = answered.length > 0 ? answered : legs;
    src = primary.src;
    dst = primary.did || primary.dst;
  } else {
    const trunkLegs = sorted.filter((row) => kindOf(row.dstchannel).kind === 'trunk');
    const answered = trunkLegs.filter((row) => row.disposition === 'ANSWERED');
    legs = answered.length > 0 ? answered : trunkLegs.slice(-1);
    disposition = legs[0]?.disposition ?? primary.disposition;
    extension = phoneOf(primary.channel) ?? (primary.cnum || undefined);
    src = extension ?? primary.src;
    dst = legs[0]?.dst || primary.dst;
  }
  const byAnswer = [...legs].sort((a, b) => answeredAt(a) - answeredAt(b));
  const taker = byAnswer[byAnswer.length - 1];
  if (inbound) extension = taker ? phoneOf(taker.dstchannel) : undefined;
  // Outbound and transferred on: the trunk's own rows (written when it hung up) to the phone that took it.
  const handedTo = toPhones(
    sorted.filter((row) => kindOf(row.channel).kind === 'trunk' && row.disposition === 'ANSWERED'),
  ).sort((a, b) => answeredAt(a) - answeredAt(b));
  if (!inbound && disposition === 'ANSWERED' && handedTo.length > 0) {
    extension = phoneOf(handedTo[handedTo.length - 1].dstchannel);
  }
  const isAnswered = disposition === 'ANSWERED';
  const firstAnswer = isAnswered ? answeredAt(byAnswer[0]) : undefined;
  const recordingfile = sorted.find((row) => row.recordingfile)?.recordingfile;
  // The line, as the posted CDR route reads it (`cdrLineOf`): the primary row's, else any row's; a value
  // that is no line is left out (it would cost the call).
  const column = (name: 'did' | 'outbound_cnum') =>
    followedLine(primary[name] || sorted.find((row) => row[name])?.[name]);
  const body = {
    linkedid,
    uniqueid: primary.uniqueid,
    direction: inbound ? 'inbound' : 'outbound',
    src,
    dst,
    extension: extension ?? dst,
    disposition,
    duration: String(Math.max(0, Math.round((end - start) / 1000))),
    billsec: String(firstAnswer === undefined ? 0 : Math.max(0, Math.round((end - firstAnswer) / 1000))),
    start: local(start),
    ...(firstAnswer !== undefined ? { answer: local(firstAnswer) } : {}),
    ...(isAnswered && inbound && taker ? { dstchannel: `PJSIP/${extension}` } : {}),
    ...(isAnswered && recordingfile ? { recordingfile } : {}),
    did: column('did'),
    outbound_cnum: column('outbound_cnum'),
  };
  const outcome = asteriskCdrToEvents(
    body,
    mapping.zone,
    // The extension was told from the channels (PBX_TRUNKS or the directory): it is the employee here.
    { isEmployee: (number) => number === extension, maxDigits: 0 },
    mapping.recordingTemplate,
  );
  const events = outcome.events.map((event) => {
    const copy = { ...event };
    // A call that rang no phone names no employee (as the AMI tracker reports it), never the DID.
    if (!extension) delete copy.extension;
    if (copy.event === 'call.answered' && !extension) return undefined;
    return copy as unknown as CallEvent;
  });
  return { events: events.filter((event): event is CallEvent => event !== undefined) };
}
