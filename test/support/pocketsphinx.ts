import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * Offline speech recognition for the transcription test server: Debian's pocketsphinx with its en-us
 * model, held to a JSGF grammar of the test's sentences (without one it misrecognises espeak-ng's voice;
 * with one it recognises them exactly). Its times are the file's own (pocketsphinx_batch would be simpler
 * but counts only the frames it kept after dropping silence); segments are cut at pauses.
 */

const run = promisify(execFile);

export const POCKETSPHINX_MODEL = '/usr/share/pocketsphinx/model/en-us';
const HMM = join(POCKETSPHINX_MODEL, 'en-us');
const DICT = join(POCKETSPHINX_MODEL, 'cmudict-en-us.dict');
/** A pause at least this long between two words starts a new segment. */
const SEGMENT_PAUSE_SEC = 0.5;
const WAV_16K_MONO = ['-t', 'wav', '-r', '16000', '-b', '16', '-e', 'signed-integer', '-c', '1'];

export interface RecognisedWord {
  word: string;
  start: number;
  end: number;
}

export interface RecognisedSegment {
  start: number;
  end: number;
  text: string;
  words: RecognisedWord[];
}

/** A file as sox reads it. */
export interface AudioInfo {
  channels: number;
  sampleRate: number;
  durationSec: number;
}

let dictionary: Set<string> | undefined;

/** Lower case words without punctuation, as the grammar and the dictionary hold them. */
export function grammarWords(sentence: string): string[] {
  return sentence
    .toLowerCase()
    .replace(/[^a-z' ]+/g, ' ')
    .split(' ')
    .filter(Boolean);
}

/**
 * Writes the JSGF grammar "any sequence of these sentences, or nothing" (a silent file matches nothing)
 * into `dir`; every word must be in the model's dictionary.
 */
export function writeGrammar(dir: string, sentences: string[]): string {
  dictionary ??= new Set(
    readFileSync(DICT, 'utf8')
      .split('\n')
      .map((line) => line.split(' ')[0]),
  );
  const alternatives = sentences.map((sentence) => {
    const words = grammarWords(sentence);
    const unknown = words.filter((word) => !dictionary!.has(word));
    if (words.length === 0 || unknown.length > 0) {
      throw new Error(
        `"${sentence}": not in pocketsphinx's dictionary: ${unknown.join(', ') || '(no words)'}`,
      );
    }
    return words.join(' ');
  });
  if (alternatives.length === 0) throw new Error('the grammar needs at least one sentence');
  const path = join(dir, 'sentences.jsgf');
  writeFileSync(
    path,
    `#JSGF V1.0;\ngrammar test;\npublic <speech> = <sentence>*;\n<sentence> = ${alternatives.join(' | ')};\n`,
  );
  return path;
}

/** Channels, rate and length of an audio file (`sox --i`). */
export async function audioInfo(path: string): Promise<AudioInfo> {
  const { stdout } = await run('sox', ['--i', path]);
  const field = (name: string) => new RegExp(`^${name}\\s*:\\s*(.+)$`, 'm').exec(stdout)?.[1] ?? '';
  const duration = /^(\d+):(\d+):([\d.]+)/.exec(field('Duration'));
  return {
    channels: Number(field('Channels')),
    sampleRate: Number(field('Sample Rate')),
    durationSec: duration ? Number(duration[1]) * 3600 + Number(duration[2]) * 60 + Number(duration[3]) : 0,
  };
}

/**
 * Recognises `audio` (any file sox reads: wav, mp3; several channels are mixed into one): sox converts it
 * to 16 kHz mono 16-bit wav in `work` (a folder of its own), pocketsphinx_continuous decodes it with word
 * times, and the words are grouped into segments at pauses.
 */
export async function recognise(audio: string, grammar: string, work: string): Promise<RecognisedSegment[]> {
  const wav = join(work, 'utterances.wav');
  await run('sox', ['-R', audio, ...WAV_16K_MONO, wav]);
  const { stdout } = await run(
    'pocketsphinx_continuous',
    [
      ...['-infile', wav, '-hmm', HMM, '-dict', DICT, '-jsgf', grammar, '-time', 'yes'],
      // A sentence's inner pauses must not end the utterance: one cut in two matches no sentence.
      ...['-vad_postspeech', '100', '-logfn', join(work, 'log')],
    ],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  return segmentsOf(parseWordTimes(stdout));
}

/**
 * With `-time yes` each utterance prints its hypothesis, then one line per word: `<word> <start s> <end s>
 * <posterior>`, fillers (`<s>`, `</s>`, `<sil>`, `(NULL)`, `[NOISE]`) among them; alternative pronunciations
 * carry `(2)`.
 */
export function parseWordTimes(output: string): RecognisedWord[] {
  const words: RecognisedWord[] = [];
  for (const line of output.split('\n')) {
    const match = /^(\S+) (-?\d+(?:\.\d+)?) (-?\d+(?:\.\d+)?) (-?\d+(?:\.\d+)?)$/.exec(line.trim());
    if (!match || /^[<([]/.test(match[1])) continue;
    words.push({ word: match[1].replace(/\(\d+\)$/, ''), start: Number(match[2]), end: Number(match[3]) });
  }
  return words.sort((a, b) => a.start - b.start);
}

export function segmentsOf(words: RecognisedWord[]): RecognisedSegment[] {
  const segments: RecognisedSegment[] = [];
  for (const word of words) {
    const current = segments.at(-1);
    if (current && word.start - current.end < SEGMENT_PAUSE_SEC) {
      current.words.push(word);
      current.end = word.end;
      current.text = `${current.text} ${word.word}`;
    } else {
      segments.push({ start: word.start, end: word.end, text: word.word, words: [word] });
    }
  }
  return segments;
}
