/**
 * What kind of audio a recording is (the API contract (docs/API.md): the portal takes wav and mp3), from its first bytes, with
 * the Content-Type only as a tie-breaker: a server's type is often generic (application/octet-stream).
 */
export type AudioKind = 'wav' | 'mp3';

export const AUDIO_CONTENT_TYPES: Readonly<Record<string, AudioKind>> = {
  'audio/mpeg': 'mp3',
  'audio/mp3': 'mp3',
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/wave': 'wav',
  'audio/vnd.wave': 'wav',
};

/** Bytes enough to tell the kind (an ID3 header, a RIFF/WAVE header, or an MPEG frame). */
export const SNIFF_BYTES = 12;

/** The media type without parameters, lower case. */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0].trim().toLowerCase();
}

/**
 * `wav` for `RIFF....WAVE`, `mp3` for an ID3 tag or an MPEG audio frame sync (11 bits set, a valid layer),
 * else undefined. A declared type that contradicts the bytes (text/html, audio/ogg) is refused too.
 */
export function sniffAudio(head: Buffer, contentType?: string): AudioKind | undefined {
  const type = mediaType(contentType);
  const declared = AUDIO_CONTENT_TYPES[type];
  const generic = type === '' || type === 'application/octet-stream' || type === 'binary/octet-stream';
  if (!declared && !generic) return undefined;
  let found: AudioKind | undefined;
  if (
    head.length >= 12 &&
    head.toString('latin1', 0, 4) === 'RIFF' &&
    head.toString('latin1', 8, 12) === 'WAVE'
  ) {
    found = 'wav';
  } else if (head.length >= 3 && head.toString('latin1', 0, 3) === 'ID3') found = 'mp3';
  else if (head.length >= 2 && head[0] === 0xff && (head[1] & 0xe0) === 0xe0 && (head[1] & 0x06) !== 0) {
    found = 'mp3';
  }
  return found;
}

/** The file name the portal gets: the URL's or call's base name with the kind's extension. */
export function recordingFileName(base: string, kind: AudioKind): string {
  const clean =
    base
      .replace(/[^\w.-]+/g, '_')
      .replace(/\.(mp3|wav)$/i, '')
      .slice(0, 100) || 'recording';
  return `${clean}.${kind}`;
}

/** FILE_CONTENT's size in a batch command: base64, with `+`, `/` and `=` percent-encoded (three bytes each). */
export function wireBytesOf(content: Buffer): number {
  const step = 3 * 65536;
  let bytes = 0;
  for (let offset = 0; offset < content.length; offset += step) {
    const text = content.subarray(offset, offset + step).toString('base64');
    let special = 0;
    for (let i = 0; i < text.length; i += 1) {
      const code = text.charCodeAt(i);
      if (code === 43 || code === 47 || code === 61) special += 1;
    }
    bytes += text.length + 2 * special;
  }
  return bytes;
}
