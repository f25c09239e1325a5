import { sniffAudio } from '../common/audio-type';
import { RecordingFormatError } from './recording-format-error';
import { splitMp3 } from './mp3-split';
import { splitWav } from './wav-split';

export { RecordingFormatError } from './recording-format-error';

/** One file as the transcription service takes it: a name with its extension, its type, its bytes. */
export interface ChannelFile {
  name: string;
  type: string;
  data: Buffer;
}

/**
 * A recording as the files to transcribe: a two-channel wav or mp3 as one mono file per channel (the first
 * channel first), anything else whole, as one file. `channels` is how many sides the files stand for.
 */
export interface RecordingChannels {
  channels: 1 | 2;
  files: ChannelFile[];
}

/** The type of the split files: wav, whatever the recording was. */
export const CHANNEL_FILE_TYPE = 'audio/wav';

/** `<base>-1.wav` and `<base>-2.wav` for the recording's file name (its extension dropped). */
export function channelFileNames(name: string): [string, string] {
  const base = name.replace(/\.[^./]*$/, '') || 'recording';
  return [`${base}-1.wav`, `${base}-2.wav`];
}

/**
 * Splits a recording into its channels' files. A two-channel wav becomes two mono wavs of its own format and
 * rate (bytes copied, nothing decoded); a two-channel mp3 is decoded and each channel written as a mono
 * 16-bit wav. Anything else is sent whole as one channel: a mono file, a wav of more than two channels (which
 * channels are whose is known only for the PBXs' two-channel recordings, and the whole file loses nothing
 * of what is said) or of a codec not copied sample by sample (GSM, ADPCM). Which kind of file it is comes
 * from its bytes (`type` only names the whole file's type); bytes that are neither wav nor mp3, or that
 * cannot be read as what they claim, are a RecordingFormatError: the file is given up, not retried.
 * Memory: the recording and the output files, nothing else of its size (docs/decisions/transcripts.md).
 */
export async function recordingChannels(
  audio: Buffer,
  type: string,
  name: string,
): Promise<RecordingChannels> {
  const whole: RecordingChannels = { channels: 1, files: [{ name, type, data: audio }] };
  const kind = sniffAudio(audio.subarray(0, 12));
  if (kind === 'wav') {
    const split = await splitWav(audio);
    return split.channels ? channelFiles(name, split.channels) : whole;
  }
  if (kind === 'mp3') {
    const split = await splitMp3(audio);
    return split ? channelFiles(name, split) : whole;
  }
  throw new RecordingFormatError('neither wav nor mp3');
}

function channelFiles(name: string, [first, second]: [Buffer, Buffer]): RecordingChannels {
  const [firstName, secondName] = channelFileNames(name);
  return {
    channels: 2,
    files: [
      { name: firstName, type: CHANNEL_FILE_TYPE, data: first },
      { name: secondName, type: CHANNEL_FILE_TYPE, data: second },
    ],
  };
}
