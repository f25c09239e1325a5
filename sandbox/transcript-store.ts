/** One phrase of a transcript, as telephony.call.attachTranscription takes it. */
export interface TranscriptMessage {
  SIDE: 'User' | 'Client';
  START_TIME: number;
  STOP_TIME: number;
  MESSAGE: string;
}

/** A transcript saved against a finished call's statistics row. */
export interface PortalTranscript {
  TRANSCRIPT_ID: number;
  CALL_ID: string;
  MESSAGES: TranscriptMessage[];
  COST: number | null;
  COST_CURRENCY: string;
  /** ms since the epoch (sandbox clock). */
  at: number;
}

/**
 * Transcripts by call. The portal does not deduplicate them: every attachTranscription adds one, and the
 * call's statistics row shows the latest `TRANSCRIPT_ID`.
 */
export class TranscriptStore {
  private readonly transcripts: PortalTranscript[] = [];
  private nextId = 1;

  add(transcript: Omit<PortalTranscript, 'TRANSCRIPT_ID'>): PortalTranscript {
    const stored: PortalTranscript = { ...transcript, TRANSCRIPT_ID: this.nextId++ };
    this.transcripts.push(stored);
    return stored;
  }

  /** Oldest first; only `callId`'s when given. Copies, so callers cannot change the store. */
  list(callId?: string): PortalTranscript[] {
    return this.transcripts
      .filter((transcript) => callId === undefined || transcript.CALL_ID === callId)
      .map((transcript) => ({
        ...transcript,
        MESSAGES: transcript.MESSAGES.map((message) => ({ ...message })),
      }));
  }

  /** The id of the call's latest transcript, or null. */
  latestId(callId: string): number | null {
    for (let index = this.transcripts.length - 1; index >= 0; index -= 1) {
      if (this.transcripts[index].CALL_ID === callId) return this.transcripts[index].TRANSCRIPT_ID;
    }
    return null;
  }

  /** Forgets every transcript; ids go on rising, as the call registry's do, so none is ever reused. */
  clear(): void {
    this.transcripts.length = 0;
  }
}
