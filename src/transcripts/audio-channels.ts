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

/**
 * Splits a recording into its channels' files. For now every recording is sent whole (one channel); the
 * per-channel split of two-channel wav and mp3 replaces this body.
 */
export async function recordingChannels(
  audio: Buffer,
  type: string,
  name: string,
): Promise<RecordingChannels> {
  return { channels: 1, files: [{ name, type, data: audio }] };
}
