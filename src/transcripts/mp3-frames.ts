import { RecordingFormatError } from './recording-format-error';

/** What the frame headers of an mp3 say, read without decoding. */
export interface Mp3Frames {
  /** 1 for a mono stream, 2 for stereo, joint stereo and dual channel (from the first frame). */
  channels: 1 | 2;
  sampleRate: number;
  frames: number;
  /** Samples per channel the frames can decode to, at most: what an output is allocated for. */
  maxSamples: number;
}

interface FrameHeader {
  bytes: number;
  samples: number;
  sampleRate: number;
  channels: 1 | 2;
}

/** kbit/s by bitrate index, for [MPEG-1, MPEG-2/2.5] × [layer I, II, III]. */
const BITRATES = [
  [
    [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
    [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
    [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  ],
  [
    [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
    [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
    [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
  ],
];
/** Hz by sample-rate index, for the version bits 00 (MPEG-2.5), 10 (MPEG-2), 11 (MPEG-1). */
const RATES: Record<number, number[]> = {
  0: [11025, 12000, 8000],
  2: [22050, 24000, 16000],
  3: [44100, 48000, 32000],
};

/**
 * The MPEG audio frame header at `at`, or undefined: a sync, a known version, layer, bitrate and rate. A
 * free-format frame (bitrate index 0) has no length in its header and is not counted.
 */
function frameAt(file: Buffer, at: number): FrameHeader | undefined {
  if (at + 4 > file.length || file[at] !== 0xff || (file[at + 1] & 0xe0) !== 0xe0) return undefined;
  const version = (file[at + 1] >> 3) & 3;
  const layer = 4 - ((file[at + 1] >> 1) & 3);
  const bitrateIndex = file[at + 2] >> 4;
  const rateIndex = (file[at + 2] >> 2) & 3;
  if (version === 1 || layer === 4 || bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) {
    return undefined;
  }
  const mpeg1 = version === 3;
  const bitrate = BITRATES[mpeg1 ? 0 : 1][layer - 1][bitrateIndex] * 1000;
  const sampleRate = RATES[version][rateIndex];
  const padding = (file[at + 2] >> 1) & 1;
  const channels = file[at + 3] >> 6 === 3 ? 1 : 2;
  if (layer === 1) {
    return {
      bytes: (Math.floor((12 * bitrate) / sampleRate) + padding) * 4,
      samples: 384,
      sampleRate,
      channels,
    };
  }
  const samples = layer === 3 && !mpeg1 ? 576 : 1152;
  return {
    bytes: Math.floor(((samples / 8) * bitrate) / sampleRate) + padding,
    samples,
    sampleRate,
    channels,
  };
}

/** Bytes of the ID3v2 tags at the start (a tag's size is syncsafe: 7 bits a byte; a footer adds 10). */
function id3Bytes(file: Buffer): number {
  let at = 0;
  while (at + 10 <= file.length && file.toString('latin1', at, at + 3) === 'ID3') {
    const size = (file[at + 6] << 21) | (file[at + 7] << 14) | (file[at + 8] << 7) | file[at + 9];
    at += 10 + size + (file[at + 5] & 0x10 ? 10 : 0);
  }
  return at;
}

/** A frame at `at` that is followed by another frame or the end of the file: not a stray sync in junk. */
function confirmedFrameAt(file: Buffer, at: number): FrameHeader | undefined {
  const frame = frameAt(file, at);
  if (!frame) return undefined;
  const next = at + frame.bytes;
  return next === file.length || (next < file.length && frameAt(file, next)) ? frame : undefined;
}

/**
 * Walks an mp3's frames by their headers, after any ID3v2 tag. Where the walk is not in step (at the start,
 * after bytes that are not a frame: an ID3v1 tag, junk) a frame counts only when another frame (or the end)
 * follows it, so a stray sync is not taken for the stream; in step, frame follows frame. The channels and
 * rate are the first frame's. No frame at all is a RecordingFormatError.
 */
export function scanMp3(file: Buffer): Mp3Frames {
  let first: FrameHeader | undefined;
  let frames = 0;
  let maxSamples = 0;
  let inStep = false;
  for (let at = id3Bytes(file); at + 4 <= file.length;) {
    const frame: FrameHeader | undefined = inStep ? frameAt(file, at) : confirmedFrameAt(file, at);
    inStep = frame !== undefined;
    if (!frame) {
      at += 1;
      continue;
    }
    first ??= frame;
    frames += 1;
    maxSamples += frame.samples;
    at += frame.bytes;
  }
  if (!first) throw new RecordingFormatError('mp3: no MPEG audio frame');
  return { channels: first.channels, sampleRate: first.sampleRate, frames, maxSamples };
}
