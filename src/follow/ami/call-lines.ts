import { Direction } from '../../calls/call';
import { followedLine } from '../followed-calls';
import { AmiMessage } from './ami-message';
import { Channel, first } from './channel-map';

/**
 * What a call's events said of its line (docs/API.md "Lines"), most telling first when it is chosen:
 * - inbound: FreePBX's `FROM_DID` (a `VarSet` of `__FROM_DID` in the inbound route, or a `ChanVariable`
 *   when manager.conf's channelvars lists it), else the Exten the trunk's channel came in on (its
 *   Newchannel: the number dialled, as a plain dialplan sees it);
 * - outbound: FreePBX's `Set(CDR(outbound_cnum)=…)` (a function write: seen only as a Newexten's AppData),
 *   else the caller ID the dial presented to the trunk (DialBegin's `DestConnectedLineNum`).
 */
export interface LineNotes {
  did?: string;
  exten?: string;
  outboundCnum?: string;
  presented?: string;
}

/** The line the notes give a call of `direction`. */
export function lineOf(notes: LineNotes, direction: Direction): string | undefined {
  return direction === 'inbound' ? (notes.did ?? notes.exten) : (notes.outboundCnum ?? notes.presented);
}

/** What `event` says of its channel's line; undefined when nothing. */
export function lineNoteOf(event: AmiMessage): LineNotes | undefined {
  const fromDid =
    event.Event === 'VarSet' && /^_*FROM_DID$/.test(event.Variable ?? '')
      ? event.Value
      : event['ChanVariable(FROM_DID)'];
  const did = followedLine(fromDid);
  if (did) return { did };
  if (event.Event !== 'Newexten' || event.Application !== 'Set') return undefined;
  const cnum = followedLine(/CDR\(outbound_cnum\)=([^,)\s]*)/.exec(event.AppData ?? '')?.[1]);
  return cnum ? { outboundCnum: cnum } : undefined;
}

/**
 * Line notes of Linkedids whose call has not opened yet (FreePBX sets CDR(outbound_cnum) before the trunk
 * is dialled), bounded: past `max` the oldest is forgotten.
 */
export class EarlyLines {
  private readonly notes = new Map<string, LineNotes>();

  constructor(private readonly max: number) {}

  note(linkedid: string, note: LineNotes): void {
    let notes = this.notes.get(linkedid);
    if (!notes) {
      if (this.notes.size >= this.max) this.notes.delete(first(this.notes));
      this.notes.set(linkedid, (notes = {}));
    }
    Object.assign(notes, note);
  }

  /** The notes of `linkedid`, now the call's own. */
  take(linkedid: string): LineNotes {
    const notes = this.notes.get(linkedid) ?? {};
    this.notes.delete(linkedid);
    return notes;
  }

  forget(linkedid: string): void {
    this.notes.delete(linkedid);
  }

  clear(): void {
    this.notes.clear();
  }
}

/**
 * The caller ID a trunk leg was presented (real PBX output: the dialled leg's connected line), unless it is
 * only the dialling phone's own extension.
 */
export function presentedLine(value: string | undefined, root: Channel | undefined): string | undefined {
  const line = followedLine(value);
  return line !== root?.extension ? line : undefined;
}
