import { RecordingFormatError } from './recording-format-error';

/** WAVE format tags the split copies sample by sample (an extensible file's sub-format counts as its tag). */
export const WAVE_PCM = 0x0001;
export const WAVE_FLOAT = 0x0003;
export const WAVE_ALAW = 0x0006;
export const WAVE_MULAW = 0x0007;
const WAVE_EXTENSIBLE = 0xfffe;
/** The sub-format GUID of WAVE_FORMAT_EXTENSIBLE after its first two bytes (the tag): xxxx0000-0000-0010-8000-00aa00389b71. */
const EXTENSIBLE_GUID_TAIL = Buffer.from('000000001000800000aa00389b71', 'hex');
const SPLIT_FORMATS = new Set([WAVE_PCM, WAVE_FLOAT, WAVE_ALAW, WAVE_MULAW]);

/** Where a wav's samples are and how they are laid out. */
export interface WavLayout {
  /** The format tag (WAVE_PCM, …), an extensible file's sub-format resolved; other codecs keep their tag. */
  format: number;
  channels: number;
  sampleRate: number;
  bitsPerSample: number;
  /** Bytes of one frame (one sample of every channel). */
  blockAlign: number;
  dataOffset: number;
  /** The data chunk's bytes that are in the file, whole frames only. */
  dataBytes: number;
}

function refuse(reason: string): never {
  throw new RecordingFormatError(`wav: ${reason}`);
}

/**
 * Reads a wav's header: the RIFF/WAVE signature, the `fmt ` chunk and where the `data` chunk is, without
 * touching the samples. A header cut short, a chunk running past the end before the data, a missing `fmt `
 * or `data` chunk, or impossible values (no channels, no rate, no frame size) are a RecordingFormatError.
 * A data size the writer never filled in (0 or 0xFFFFFFFF, as a recorder that stopped without closing the
 * file leaves it) or one past the end of the file (a file cut short) stand for the bytes that are there.
 */
export function readWavLayout(file: Buffer): WavLayout {
  if (
    file.length < 12 ||
    file.toString('latin1', 0, 4) !== 'RIFF' ||
    file.toString('latin1', 8, 12) !== 'WAVE'
  ) {
    refuse('not a RIFF/WAVE file');
  }
  let fmt: Omit<WavLayout, 'dataOffset' | 'dataBytes'> | undefined;
  let data: { offset: number; bytes: number } | undefined;
  let offset = 12;
  while (offset + 8 <= file.length && !(fmt && data)) {
    const id = file.toString('latin1', offset, offset + 4);
    const size = file.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'data') {
      const there = file.length - body;
      const open = size === 0 || size === 0xffffffff || size > there;
      data = { offset: body, bytes: open ? there : size };
      if (open) break;
    } else {
      const printable = id.replace(/[^\x20-\x7e]/g, '?');
      if (body + size > file.length) refuse(`the "${printable}" chunk runs past the end`);
      if (id === 'fmt ') fmt = readFmt(file.subarray(body, body + size));
    }
    offset = body + size + (size % 2);
  }
  if (!fmt) refuse('no "fmt " chunk (the header is cut short or is not a wav header)');
  if (!data) refuse('no "data" chunk (the file is cut short)');
  const bytes = data.bytes - (data.bytes % fmt.blockAlign);
  return { ...fmt, dataOffset: data.offset, dataBytes: bytes };
}

function readFmt(chunk: Buffer): Omit<WavLayout, 'dataOffset' | 'dataBytes'> {
  if (chunk.length < 16) refuse(`the "fmt " chunk is ${chunk.length} bytes, under 16`);
  let format = chunk.readUInt16LE(0);
  const channels = chunk.readUInt16LE(2);
  const sampleRate = chunk.readUInt32LE(4);
  const blockAlign = chunk.readUInt16LE(12);
  const bitsPerSample = chunk.readUInt16LE(14);
  if (channels === 0) refuse('0 channels');
  if (sampleRate === 0) refuse('a sample rate of 0');
  if (blockAlign === 0) refuse('a frame size (block align) of 0');
  if (
    format === WAVE_EXTENSIBLE &&
    chunk.length >= 40 &&
    chunk.subarray(26, 40).equals(EXTENSIBLE_GUID_TAIL)
  ) {
    format = chunk.readUInt16LE(24);
  }
  return { format, channels, sampleRate, bitsPerSample, blockAlign };
}

/**
 * Bytes of one channel's sample when the file can be split by copying bytes (integer PCM, float, A-law,
 * µ-law, each channel's sample in whole bytes of the frame), else undefined: a compressed codec (GSM as
 * Asterisk's wav49, ADPCM) is sent whole.
 */
export function sampleWidth(layout: WavLayout): number | undefined {
  if (!SPLIT_FORMATS.has(layout.format) || layout.blockAlign % layout.channels !== 0) return undefined;
  const width = layout.blockAlign / layout.channels;
  return layout.bitsPerSample > 0 && width === Math.ceil(layout.bitsPerSample / 8) ? width : undefined;
}

/** Bytes of the header `writeMonoHeader` writes: 44 for PCM; 58 for the others (`cbSize` and a `fact` chunk). */
export function monoHeaderBytes(format: number): number {
  return format === WAVE_PCM ? 44 : 58;
}

/**
 * Writes at the start of `out` the header of a one-channel wav of `dataBytes` bytes of samples in `format`
 * with `width`-byte samples: the canonical layout (RIFF, `fmt `, `fact` for a non-PCM format as the format
 * asks, `data`). A pad byte after odd-sized data is the caller's (the split's data is never odd but for
 * 8-bit samples, where it is written).
 */
export function writeMonoHeader(
  out: Buffer,
  target: { format: number; sampleRate: number; width: number },
  dataBytes: number,
): void {
  const { format, sampleRate, width } = target;
  const header = monoHeaderBytes(format);
  const pad = dataBytes % 2;
  let at = out.write('RIFF', 0, 'latin1');
  at = out.writeUInt32LE(header - 8 + dataBytes + pad, at);
  at += out.write('WAVEfmt ', at, 'latin1');
  at = out.writeUInt32LE(format === WAVE_PCM ? 16 : 18, at);
  at = out.writeUInt16LE(format, at);
  at = out.writeUInt16LE(1, at);
  at = out.writeUInt32LE(sampleRate, at);
  at = out.writeUInt32LE(sampleRate * width, at);
  at = out.writeUInt16LE(width, at);
  at = out.writeUInt16LE(width * 8, at);
  if (format !== WAVE_PCM) {
    at = out.writeUInt16LE(0, at);
    at += out.write('fact', at, 'latin1');
    at = out.writeUInt32LE(4, at);
    at = out.writeUInt32LE(dataBytes / width, at);
  }
  at += out.write('data', at, 'latin1');
  out.writeUInt32LE(dataBytes, at);
}
