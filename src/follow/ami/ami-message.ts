/**
 * One AMI message (response or event) as Asterisk frames it: `Key: Value` lines ending CRLF, a blank line
 * after the last. Keys can repeat: `ChanVariable: NAME=value` lines (and their `Dest…` twins) become
 * `ChanVariable(NAME)` entries; any other repeated key keeps its last value, which is all the follower reads.
 */
export type AmiMessage = Readonly<Record<string, string>>;

/** The longest message the parser holds before it gives up on the connection (a bounded buffer). */
export const MAX_MESSAGE_BYTES = 64 * 1024;

/** Parses one message's lines (without the blank line that ended it). */
export function parseAmiMessage(text: string): AmiMessage {
  const fields: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const key = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (key.endsWith('ChanVariable')) {
      const equals = value.indexOf('=');
      if (equals > 0) fields[`${key}(${value.slice(0, equals)})`] = value.slice(equals + 1);
      continue;
    }
    fields[key] = value;
  }
  return fields;
}

/**
 * Splits a byte stream into messages. The banner line (`Asterisk Call Manager/…`) comes first, alone and
 * not blank-line terminated, so it is read as a line. A message is ended by a blank line, written `\r\n\r\n`
 * or, as CoreShowChannelMap did on 18.19+/20.4+, `\r\n\n`: both are accepted. A message longer than
 * MAX_MESSAGE_BYTES throws (the caller drops the connection) instead of growing without bound.
 */
export class AmiFramer {
  private buffer = '';
  private bannerRead = false;

  constructor(
    private readonly onBanner: (line: string) => void,
    private readonly onMessage: (message: AmiMessage) => void,
  ) {}

  push(chunk: string): void {
    this.buffer += chunk;
    if (!this.bannerRead) {
      const newline = this.buffer.indexOf('\n');
      if (newline < 0) return this.bound();
      this.bannerRead = true;
      this.onBanner(this.buffer.slice(0, newline).replace(/\r$/, ''));
      this.buffer = this.buffer.slice(newline + 1);
    }
    for (;;) {
      const end = /\r?\n\r?\n/.exec(this.buffer);
      if (!end) return this.bound();
      const text = this.buffer.slice(0, end.index);
      this.buffer = this.buffer.slice(end.index + end[0].length);
      if (text.trim()) this.onMessage(parseAmiMessage(text));
    }
  }

  private bound(): void {
    if (this.buffer.length > MAX_MESSAGE_BYTES) {
      throw new Error(`an AMI message longer than ${MAX_MESSAGE_BYTES} bytes`);
    }
  }
}
