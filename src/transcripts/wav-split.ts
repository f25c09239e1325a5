import { RecordingFormatError } from './recording-format-error';
import { monoHeaderBytes, readWavLayout, sampleWidth, WavLayout, writeMonoHeader } from './wav-format';

/** Frames copied between two turns of the event loop, so a long recording never holds up a ringing call. */
const FRAMES_PER_TURN = 256 * 1024;

/** A wav's first two channels as two one-channel wavs of the same format and rate. */
export interface WavSplit {
  layout: WavLayout;
  /** Undefined when the file is not split: one channel, more than two, or a codec not copied sample by sample. */
  channels?: [Buffer, Buffer];
}

/**
 * Splits a two-channel wav into two mono wavs, the first channel first, by copying each channel's sample
 * bytes (no decoding: integer PCM of any width, float, A-law and µ-law alike). Each output is allocated once
 * at its final size (a header and the channel's samples), so the input and the two outputs are all that is
 * held: the outputs together are the input's samples plus two headers. A file with one channel, more than
 * two, or a compressed codec is not split (`channels` undefined); an unreadable header is a
 * RecordingFormatError.
 */
export async function splitWav(file: Buffer): Promise<WavSplit> {
  const layout = readWavLayout(file);
  const width = sampleWidth(layout);
  if (layout.channels !== 2 || width === undefined) return { layout };
  const frames = layout.dataBytes / layout.blockAlign;
  if (frames === 0) throw new RecordingFormatError('wav: no samples');
  const dataBytes = frames * width;
  const header = monoHeaderBytes(layout.format);
  const target = { format: layout.format, sampleRate: layout.sampleRate, width };
  const outputs: [Buffer, Buffer] = [0, 1].map(() => {
    const out = Buffer.alloc(header + dataBytes + (dataBytes % 2));
    writeMonoHeader(out, target, dataBytes);
    return out;
  }) as [Buffer, Buffer];
  const [first, second] = outputs;
  let source = layout.dataOffset;
  let at = header;
  for (let done = 0; done < frames;) {
    const stop = Math.min(frames, done + FRAMES_PER_TURN);
    for (; done < stop; done += 1, source += 2 * width, at += width) {
      for (let byte = 0; byte < width; byte += 1) {
        first[at + byte] = file[source + byte];
        second[at + byte] = file[source + width + byte];
      }
    }
    if (done < frames) await new Promise((resolve) => setImmediate(resolve));
  }
  return { layout, channels: outputs };
}
