/**
 * A recording whose bytes cannot be read as the audio they claim to be (a wav whose header is cut short or
 * garbage, an mp3 without a single MPEG audio frame). The transcription step gives such a file up at once,
 * as a file the service refused: retrying cannot make it readable.
 */
export class RecordingFormatError extends Error {
  override readonly name = 'RecordingFormatError';
}
