import { Worker } from 'node:worker_threads';
import { scanMp3 } from './mp3-frames';
import { RecordingFormatError } from './recording-format-error';
import { monoHeaderBytes, WAVE_PCM, writeMonoHeader } from './wav-format';

/** Bytes of the mp3 handed to the decoder at a time (each copied once, into the message that carries it). */
const CHUNK_BYTES = 64 * 1024;
const HEADER = monoHeaderBytes(WAVE_PCM);

/**
 * The decoder's thread, plain JavaScript run with `eval`: mpg123-decoder is an ES module with WebAssembly,
 * which a worker imports the same way under Node and under Jest, and decoding off the main thread keeps the
 * bridge's event loop free for calls meanwhile. It allocates the two outputs (a 44-byte header's room and
 * 16-bit samples) for the samples the frames can hold, writes each chunk's samples into them as it
 * decodes, and hands them over (transferred, not copied) at the end. Only a stream that decodes to more
 * samples than its frame headers announce makes it grow them.
 */
const DECODER_THREAD = `'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const { pathToFileURL } = require('node:url');
const HEADER = ${HEADER};
let capacity = workerData.capacity;
let outputs = [0, 1].map(() => new ArrayBuffer(HEADER + 2 * capacity));
let views = outputs.map((output) => new DataView(output));
let samples = 0;
let sampleRate = 0;
function grow(needed) {
  capacity = Math.max(needed, Math.ceil(capacity * 1.25));
  outputs = outputs.map((old) => {
    const output = new ArrayBuffer(HEADER + 2 * capacity);
    new Uint8Array(output).set(new Uint8Array(old));
    return output;
  });
  views = outputs.map((output) => new DataView(output));
}
function write(decoded) {
  const count = decoded.samplesDecoded;
  if (!count) return;
  if (decoded.sampleRate) sampleRate = decoded.sampleRate;
  if (samples + count > capacity) grow(samples + count);
  for (let channel = 0; channel < 2; channel += 1) {
    const data = decoded.channelData[channel];
    const view = views[channel];
    for (let i = 0, at = HEADER + 2 * samples; i < count; i += 1, at += 2) {
      const x = data ? data[i] : 0;
      view.setInt16(at, x >= 1 ? 32767 : x <= -1 ? -32768 : Math.round(x * 32767), true);
    }
  }
  samples += count;
}
const failed = (error) => parentPort.postMessage({ error: String((error && error.message) || error) });
import(pathToFileURL(workerData.decoder).href)
  .then(async ({ MPEGDecoder }) => {
    const decoder = new MPEGDecoder();
    await decoder.ready;
    parentPort.on('message', (chunk) => {
      try {
        if (chunk === null) {
          decoder.free();
          parentPort.postMessage({ outputs, samples, sampleRate }, outputs);
        } else {
          write(decoder.decode(chunk));
          parentPort.postMessage({ more: true });
        }
      } catch (error) {
        failed(error);
      }
    });
    parentPort.postMessage({ more: true });
  })
  .catch(failed);
`;

interface Decoded {
  outputs: [ArrayBuffer, ArrayBuffer];
  samples: number;
  sampleRate: number;
  /** The last of what the decoder printed (mpg123's complaints about the stream). */
  said: string;
}

type ThreadMessage = { more: true } | { error: string } | Omit<Decoded, 'said'>;

/** mpg123-decoder's entry point: the decoder thread imports it by its path. */
function decoderEntry(): string {
  return require.resolve('mpg123-decoder');
}

/** Decodes `file` on a thread of its own into two 16-bit sample buffers, feeding it a chunk at a time. */
function decode(file: Buffer, capacity: number): Promise<Decoded> {
  return new Promise((resolve, reject) => {
    const thread = new Worker(DECODER_THREAD, {
      eval: true,
      workerData: { decoder: decoderEntry(), capacity },
      stdout: true,
      stderr: true,
    });
    let said = '';
    const keep = (text: Buffer) => (said = `${said}${text.toString()}`.slice(-400));
    thread.stdout.on('data', keep);
    thread.stderr.on('data', keep);
    let offset = 0;
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      void thread.terminate();
      outcome();
    };
    thread.on('message', (message: ThreadMessage) => {
      if ('error' in message) {
        const failure = new Error(`the mp3 decoder failed: ${message.error}`);
        return settle(() => reject(failure));
      }
      if (!('more' in message)) return settle(() => resolve({ ...message, said }));
      const piece = file.subarray(offset, offset + CHUNK_BYTES);
      offset += piece.length;
      if (piece.length === 0) return thread.postMessage(null);
      const chunk = new Uint8Array(piece);
      thread.postMessage(chunk, [chunk.buffer]);
    });
    thread.on('error', (error) => settle(() => reject(error)));
    thread.on('exit', (code) =>
      settle(() => reject(new Error(`the mp3 decoder stopped (exit code ${code})`))),
    );
  });
}

/**
 * A two-channel mp3 as two mono 16-bit PCM wavs at its sample rate, the first channel first; undefined
 * for a mono mp3 (sent whole, as it is, without decoding). The frame headers are read first (no frame is a
 * RecordingFormatError) to size the outputs; a stream of which nothing decodes is one too.
 */
export async function splitMp3(file: Buffer): Promise<[Buffer, Buffer] | undefined> {
  const frames = scanMp3(file);
  if (frames.channels === 1) return undefined;
  const { outputs, samples, sampleRate, said } = await decode(file, frames.maxSamples);
  if (samples === 0) {
    const detail = said.trim().split('\n').pop();
    throw new RecordingFormatError(`mp3: nothing decodes${detail ? ` (${detail})` : ''}`);
  }
  return outputs.map((output) => {
    const wav = Buffer.from(output, 0, HEADER + 2 * samples);
    writeMonoHeader(wav, { format: WAVE_PCM, sampleRate, width: 2 }, 2 * samples);
    return wav;
  }) as [Buffer, Buffer];
}
