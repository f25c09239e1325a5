import { AudioKind, SNIFF_BYTES, sniffAudio, wireBytesOf } from './audio-type';

/** The recording passed RECORDING_MAX_MB while it streamed: reading stopped there. */
export class RecordingTooLargeError extends Error {}

/** The recording's first bytes are not wav or mp3 (or not the type it was declared as). */
export class NotAudioError extends Error {}

/**
 * Watches a recording's bytes as they pass on their way to the store, so nothing needs the whole file in
 * memory: stops past `maxBytes`, tells wav from mp3 by the first bytes (refusing anything else), and counts
 * the size FILE_CONTENT will have in a request (base64 with `+`, `/`, `=` percent-encoded, as `wireBytesOf`).
 */
export class RecordingScan {
  bytes = 0;
  wireBytes = 0;
  kind?: AudioKind;
  /** Bytes of the base64 groups not complete yet (fewer than 3). */
  private carry = Buffer.alloc(0);

  constructor(
    private readonly maxBytes: number,
    private readonly contentType: string | undefined,
    private readonly tooLarge: string,
  ) {}

  async *pass(source: AsyncIterable<Buffer>): AsyncIterable<Buffer> {
    let head: Buffer[] = [];
    let headBytes = 0;
    for await (const piece of source) {
      this.bytes += piece.length;
      if (this.bytes > this.maxBytes) throw new RecordingTooLargeError(this.tooLarge);
      this.countWire(piece);
      if (this.kind) {
        yield piece;
        continue;
      }
      head.push(piece);
      headBytes += piece.length;
      if (headBytes < SNIFF_BYTES) continue;
      this.sniff(Buffer.concat(head));
      for (const held of head) yield held;
      head = [];
    }
    if (!this.kind) {
      this.sniff(Buffer.concat(head));
      for (const held of head) yield held;
    }
    this.finishWire();
  }

  private sniff(head: Buffer): void {
    this.kind = sniffAudio(head.subarray(0, SNIFF_BYTES), this.contentType);
    if (!this.kind) throw new NotAudioError(`not wav or mp3 (Content-Type ${this.contentType ?? 'none'})`);
  }

  private countWire(piece: Buffer): void {
    const joined = this.carry.length ? Buffer.concat([this.carry, piece]) : piece;
    const whole = joined.length - (joined.length % 3);
    this.wireBytes += wireBytesOf(joined.subarray(0, whole));
    this.carry = Buffer.from(joined.subarray(whole));
  }

  private finishWire(): void {
    this.wireBytes += wireBytesOf(this.carry);
    this.carry = Buffer.alloc(0);
  }
}

/** A stored recording's description from a scan: its size, name, and content in the request or through uploadUrl. */
export function scannedRecording(
  scan: RecordingScan,
  filename: string,
  requestMaxBytes: number,
): { bytes: number; filename: string; upload: 'content' | 'url'; wireBytes: number } {
  return {
    bytes: scan.bytes,
    filename,
    upload: scan.wireBytes <= requestMaxBytes ? 'content' : 'url',
    wireBytes: scan.wireBytes,
  };
}
