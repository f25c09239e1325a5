import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * Recordings with known words at known times, for the transcript tests: espeak-ng speaks each sentence,
 * the samples are placed at their second on their channel over a faint line hiss (a real line is never
 * digitally silent, and pocketsphinx needs some noise floor), written as 16 kHz 16-bit wav, and sox encodes
 * the mp3 variant. Needs espeak-ng and sox with mp3 support (scripts/ensure-speech.sh installs them).
 */

const run = promisify(execFile);

/** 16 kHz: the rate of pocketsphinx's en-us model (8 kHz telephone audio is not recognised by it). */
export const SPEECH_SAMPLE_RATE = 16000;
/**
 * mp3 at 64 kbps: sox's default for 16 kHz mono is 24 kbps, and such a file re-encoded from another mp3
 * loses words to pocketsphinx.
 */
const MP3_QUALITY = ['-C', '64'];
/** Peak of the line hiss, in 16-bit sample units (about -54 dBFS). */
const HISS = 64;
/** A sample louder than this (about -40 dBFS) is speech, when finding where espeak's voice starts and stops. */
const SPEECH_LEVEL = 330;

export interface SpokenLine {
  /** 1 (left) or 2 (right); a one-channel recording has only 1. */
  channel: 1 | 2;
  text: string;
  /** Seconds from the recording's start to the first and last audible sample of the sentence. */
  startSec: number;
  endSec: number;
}

export interface SpeechRecording {
  path: string;
  format: 'wav' | 'mp3';
  channels: 1 | 2;
  sampleRate: number;
  durationSec: number;
  bytes: number;
  /** Sorted by start. */
  lines: SpokenLine[];
}

export interface RecordingSpec {
  /** File name without extension, unique within the process. */
  name: string;
  channels: 1 | 2;
  durationSec: number;
  /** Each sentence and where it begins (the first audible sample lands there). */
  lines: { channel: 1 | 2; text: string; atSec: number }[];
  format?: 'wav' | 'mp3';
}

/** The standard set: who says what on which side, when. */
export interface SpeechFixtures {
  /** Every sentence the recordings speak: the recogniser's grammar (lower case words, no punctuation). */
  sentences: string[];
  /** Two channels: the first (left) is one party, the second (right) the other, turns alternating. */
  stereoWav: SpeechRecording;
  /** The same conversation as mp3. */
  stereoMp3: SpeechRecording;
  /** One channel holding both parties' sentences. */
  monoWav: SpeechRecording;
  /** Hiss only, no speech. */
  silentWav: SpeechRecording;
}

export const CONVERSATION = {
  left: ['good morning thank you for calling', 'your order will arrive on monday'],
  right: ['i would like to order a new phone', 'thank you goodbye'],
};

let directory: string | undefined;
let standard: Promise<SpeechFixtures> | undefined;
const spoken = new Map<string, Promise<Int16Array>>();

/** A temp folder for this test process, removed when it exits. */
export function speechDir(): string {
  if (directory === undefined) {
    const made = mkdtempSync(join(tmpdir(), 'speech-'));
    directory = made;
    process.once('exit', () => rmSync(made, { recursive: true, force: true }));
  }
  return directory;
}

/** The standard recordings, built once per test process. */
export function speechFixtures(): Promise<SpeechFixtures> {
  standard ??= buildStandard();
  return standard;
}

async function buildStandard(): Promise<SpeechFixtures> {
  const [a1, a2] = CONVERSATION.left;
  const [b1, b2] = CONVERSATION.right;
  const conversation: RecordingSpec['lines'] = [
    { channel: 1, text: a1, atSec: 1 },
    { channel: 2, text: b1, atSec: 4 },
    { channel: 1, text: a2, atSec: 7.5 },
    { channel: 2, text: b2, atSec: 11 },
  ];
  const stereo = { channels: 2 as const, durationSec: 13, lines: conversation };
  const [stereoWav, stereoMp3, monoWav, silentWav] = await Promise.all([
    buildRecording({ name: 'stereo', ...stereo }),
    buildRecording({ name: 'stereo-mp3', ...stereo, format: 'mp3' }),
    buildRecording({
      name: 'mono',
      channels: 1,
      durationSec: 9,
      lines: [
        { channel: 1, text: a1, atSec: 1 },
        { channel: 1, text: b1, atSec: 5 },
      ],
    }),
    buildRecording({ name: 'silent', channels: 1, durationSec: 5, lines: [] }),
  ]);
  return { sentences: [a1, a2, b1, b2], stereoWav, stereoMp3, monoWav, silentWav };
}

/** One recording as `spec` says, in the process's temp folder. */
export async function buildRecording(spec: RecordingSpec): Promise<SpeechRecording> {
  const format = spec.format ?? 'wav';
  const frames = Math.round(spec.durationSec * SPEECH_SAMPLE_RATE);
  const tracks = Array.from({ length: spec.channels }, (_, index) => hiss(frames, index + 1));
  const lines: SpokenLine[] = [];
  for (const line of spec.lines) {
    if (line.channel > spec.channels) throw new Error(`${spec.name}: no channel ${line.channel}`);
    const voice = await speak(line.text);
    const { first, last } = audibleRange(voice);
    const offset = Math.round(line.atSec * SPEECH_SAMPLE_RATE) - first;
    if (offset < 0 || offset + last >= frames) {
      throw new Error(
        `${spec.name}: "${line.text}" at ${line.atSec} s does not fit in ${spec.durationSec} s`,
      );
    }
    const track = tracks[line.channel - 1];
    for (let index = first; index <= last; index += 1) {
      track[offset + index] = clamp(track[offset + index] + voice[index]);
    }
    lines.push({
      channel: line.channel,
      text: line.text,
      startSec: round((offset + first) / SPEECH_SAMPLE_RATE),
      endSec: round((offset + last) / SPEECH_SAMPLE_RATE),
    });
  }
  const wavPath = join(speechDir(), `${spec.name}.wav`);
  writeFileSync(wavPath, wavFile(tracks));
  let path = wavPath;
  if (format === 'mp3') {
    path = join(speechDir(), `${spec.name}.mp3`);
    await run('sox', ['-R', wavPath, ...MP3_QUALITY, path]);
  }
  lines.sort((a, b) => a.startSec - b.startSec);
  return {
    path,
    format,
    channels: spec.channels,
    sampleRate: SPEECH_SAMPLE_RATE,
    durationSec: spec.durationSec,
    bytes: statSync(path).size,
    lines,
  };
}

/** espeak-ng's voice for `text`, resampled by sox to 16 kHz mono 16-bit samples; cached per text. */
function speak(text: string): Promise<Int16Array> {
  let voice = spoken.get(text);
  if (!voice) {
    voice = (async () => {
      const base = join(speechDir(), `voice-${spoken.size}`);
      await run('espeak-ng', ['-w', `${base}.wav`, text]);
      await run('sox', ['-R', `${base}.wav`, ...rawArgs(), `${base}.raw`]);
      const raw = readFileSync(`${base}.raw`);
      return new Int16Array(raw.buffer, raw.byteOffset, raw.length / 2);
    })();
    spoken.set(text, voice);
  }
  return voice;
}

function rawArgs(): string[] {
  return ['-t', 'raw', '-r', String(SPEECH_SAMPLE_RATE), '-b', '16', '-e', 'signed-integer', '-c', '1'];
}

function audibleRange(samples: Int16Array): { first: number; last: number } {
  let first = 0;
  while (first < samples.length && Math.abs(samples[first]) < SPEECH_LEVEL) first += 1;
  let last = samples.length - 1;
  while (last > first && Math.abs(samples[last]) < SPEECH_LEVEL) last -= 1;
  if (first >= samples.length) throw new Error('espeak-ng produced no audible speech');
  return { first, last };
}

/** Faint deterministic white noise (a fixed seed per channel, so every run builds the same file). */
function hiss(frames: number, seed: number): Int16Array {
  const track = new Int16Array(frames);
  let state = seed * 0x9e3779b1;
  for (let index = 0; index < frames; index += 1) {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    const unit = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    track[index] = Math.round((unit * 2 - 1) * HISS);
  }
  return track;
}

function clamp(sample: number): number {
  return Math.max(-32768, Math.min(32767, sample));
}

function round(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}

/** A PCM wav: 44-byte header, then the channels' samples interleaved. */
export function wavFile(tracks: Int16Array[]): Buffer {
  const channels = tracks.length;
  const frames = tracks[0]?.length ?? 0;
  const dataBytes = frames * channels * 2;
  const file = Buffer.alloc(44 + dataBytes);
  file.write('RIFF', 0, 'ascii');
  file.writeUInt32LE(36 + dataBytes, 4);
  file.write('WAVEfmt ', 8, 'ascii');
  file.writeUInt32LE(16, 16);
  file.writeUInt16LE(1, 20);
  file.writeUInt16LE(channels, 22);
  file.writeUInt32LE(SPEECH_SAMPLE_RATE, 24);
  file.writeUInt32LE(SPEECH_SAMPLE_RATE * channels * 2, 28);
  file.writeUInt16LE(channels * 2, 32);
  file.writeUInt16LE(16, 34);
  file.write('data', 36, 'ascii');
  file.writeUInt32LE(dataBytes, 40);
  for (let frame = 0; frame < frames; frame += 1) {
    for (let channel = 0; channel < channels; channel += 1) {
      file.writeInt16LE(tracks[channel][frame], 44 + (frame * channels + channel) * 2);
    }
  }
  return file;
}

/**
 * One channel of a recording as its own one-channel file (wav or mp3, by `format`), made by sox: what a
 * client that sends each channel separately would send. Cached by path and channel.
 */
export async function channelFile(
  recording: SpeechRecording,
  channel: 1 | 2,
  format = recording.format,
): Promise<string> {
  const base = recording.path.replace(/\.(wav|mp3)$/, '');
  const path = `${base}-channel${channel}.${format}`;
  let made = channelFiles.get(path);
  if (!made) {
    made = run('sox', [
      '-R',
      recording.path,
      ...(format === 'mp3' ? MP3_QUALITY : []),
      path,
      'remix',
      String(channel),
    ]);
    channelFiles.set(path, made);
  }
  await made;
  return path;
}

const channelFiles = new Map<string, Promise<unknown>>();
