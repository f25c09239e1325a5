import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recordingChannels, RecordingFormatError } from './audio-channels';

/**
 * Recordings made by sox (as FreePBX's MixMonitor and FreeSWITCH's record_session would write them: a tone
 * on one side, silence on the other), split, and every output read back by sox itself: its format, rate,
 * length and loudness, so the check does not rest on this code's own wav reader.
 */
let dir: string;

function sox(args: string[]): string {
  const run = spawnSync('sox', args, { encoding: 'utf8' });
  if (run.error) throw new Error('sox is not installed: apt-get install -y sox libsox-fmt-mp3');
  if (run.status !== 0) throw new Error(`sox ${args.join(' ')}: ${run.stderr}`);
  return `${run.stdout}${run.stderr}`;
}

/** A two-channel recording of `seconds` with a 440 Hz tone on channel `loud` (1 or 2) and silence on the other. */
function stereo(file: string, format: string[], loud: 1 | 2, seconds = 1): Buffer {
  const path = join(dir, file);
  const remix = loud === 1 ? ['remix', '1', '2v0'] : ['remix', '1v0', '2'];
  // -D: no dither, so the silent side is all zeros.
  sox([
    '-D',
    '-n',
    ...format,
    '-c',
    '2',
    path,
    'synth',
    String(seconds),
    'sine',
    '440',
    'sine',
    '440',
    ...remix,
  ]);
  return readFileSync(path);
}

/** What sox reads in a file: channels, rate, bits, encoding, samples per channel, RMS amplitude (0..1). */
function soxReads(data: Buffer, name: string) {
  const path = join(dir, name);
  writeFileSync(path, data);
  const info = (flag: string) => sox(['--i', flag, path]).trim();
  const rms = /RMS\s+amplitude:\s+([\d.]+)/.exec(sox([path, '-n', 'stat']))?.[1];
  return {
    channels: Number(info('-c')),
    rate: Number(info('-r')),
    bits: Number(info('-b')),
    encoding: info('-e'),
    samples: Number(info('-s')),
    rms: Number(rms),
  };
}

/** The canonical header fields of a mono output, read straight from its bytes. */
function header(data: Buffer) {
  const dataAt = data.indexOf('data', 12, 'latin1');
  return {
    riff: data.toString('latin1', 0, 4),
    riffSize: data.readUInt32LE(4),
    tag: data.readUInt16LE(20),
    channels: data.readUInt16LE(22),
    rate: data.readUInt32LE(24),
    byteRate: data.readUInt32LE(28),
    blockAlign: data.readUInt16LE(32),
    dataBytes: data.readUInt32LE(dataAt + 4),
    dataAt: dataAt + 8,
  };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'audio-channels-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('recordingChannels on a two-channel wav', () => {
  it('splits 16-bit PCM into two mono wavs of the same rate, the tone only in the first', async () => {
    const input = stereo('pcm16.wav', ['-r', '8000', '-b', '16', '-e', 'signed-integer'], 1, 2);
    const split = await recordingChannels(input, 'audio/wav', 'in-101-5551234-20261203-101500-17.wav');
    expect(split.channels).toBe(2);
    expect(split.files.map((file) => [file.name, file.type])).toEqual([
      ['in-101-5551234-20261203-101500-17-1.wav', 'audio/wav'],
      ['in-101-5551234-20261203-101500-17-2.wav', 'audio/wav'],
    ]);
    const [first, second] = split.files.map((file, i) => soxReads(file.data, `out-${i}.wav`));
    for (const read of [first, second]) {
      expect(read).toMatchObject({
        channels: 1,
        rate: 8000,
        bits: 16,
        encoding: 'Signed Integer PCM',
        samples: 16000,
      });
    }
    expect(first.rms).toBeGreaterThan(0.3);
    expect(second.rms).toBe(0);
    for (const file of split.files) {
      const fields = header(file.data);
      expect(fields).toMatchObject({
        riff: 'RIFF',
        tag: 1,
        channels: 1,
        rate: 8000,
        byteRate: 16000,
        blockAlign: 2,
      });
      expect(fields.dataBytes).toBe(32000);
      expect(file.data.length).toBe(fields.dataAt + fields.dataBytes);
      expect(fields.riffSize).toBe(file.data.length - 8);
    }
    expect(split.files[0].data.length + split.files[1].data.length).toBeLessThanOrEqual(input.length + 44);
  });

  it('keeps the channels in order: a tone on the second channel is in the second file', async () => {
    const input = stereo('right.wav', ['-r', '16000', '-b', '16', '-e', 'signed-integer'], 2);
    const split = await recordingChannels(input, 'audio/wav', 'right.wav');
    const [first, second] = split.files.map((file, i) => soxReads(file.data, `right-${i}.wav`));
    expect([first.rate, second.rate]).toEqual([16000, 16000]);
    expect(first.rms).toBe(0);
    expect(second.rms).toBeGreaterThan(0.3);
  });

  it('splits µ-law 8 kHz stereo (a PBX recording) into µ-law mono halves of the data', async () => {
    const input = stereo('ulaw.wav', ['-r', '8000', '-e', 'u-law'], 1, 3);
    const split = await recordingChannels(input, 'audio/x-wav', 'out-5551234-101.wav');
    expect(split.channels).toBe(2);
    const [first, second] = split.files.map((file, i) => soxReads(file.data, `ulaw-${i}.wav`));
    for (const read of [first, second]) {
      expect(read).toMatchObject({ channels: 1, rate: 8000, bits: 8, encoding: 'u-law', samples: 24000 });
    }
    expect(first.rms).toBeGreaterThan(0.3);
    expect(second.rms).toBeLessThan(0.001);
    for (const file of split.files) {
      expect(header(file.data)).toMatchObject({
        tag: 7,
        channels: 1,
        byteRate: 8000,
        blockAlign: 1,
        dataBytes: 24000,
      });
    }
    expect(split.files[0].data.length + split.files[1].data.length).toBeLessThanOrEqual(input.length + 58);
  });

  it.each([
    ['8-bit unsigned', ['-b', '8', '-e', 'unsigned-integer'], 8, 'Unsigned Integer PCM'],
    ['24-bit (extensible)', ['-b', '24', '-e', 'signed-integer'], 24, 'Signed Integer PCM'],
    ['32-bit int (extensible)', ['-b', '32', '-e', 'signed-integer'], 32, 'Signed Integer PCM'],
    ['32-bit float', ['-b', '32', '-e', 'floating-point'], 32, 'Floating Point PCM'],
    ['A-law', ['-e', 'a-law'], 8, 'A-law'],
  ])('splits %s the same way', async (label, format, bits, encoding) => {
    const input = stereo(
      `${bits}-${encoding}.wav`.replace(/\s/g, ''),
      ['-r', '8000', ...(format as string[])],
      1,
    );
    const split = await recordingChannels(input, 'audio/wav', 'call.wav');
    expect(split.channels).toBe(2);
    const [first, second] = split.files.map((file, i) => soxReads(file.data, `fmt-${i}.wav`));
    for (const read of [first, second]) {
      expect(read).toMatchObject({ channels: 1, rate: 8000, bits, encoding, samples: 8000 });
    }
    expect(first.rms).toBeGreaterThan(0.3);
    expect(second.rms).toBeLessThan(0.01);
  });

  it('keeps the samples that are there when the file was cut short in the middle of its data', async () => {
    const input = stereo('cut.wav', ['-r', '8000', '-b', '16', '-e', 'signed-integer'], 1);
    const cut = input.subarray(0, 44 + 4 * 3000 + 3);
    const split = await recordingChannels(cut, 'audio/wav', 'cut.wav');
    for (const [i, file] of split.files.entries()) {
      expect(header(file.data).dataBytes).toBe(2 * 3000);
      expect(soxReads(file.data, `cut-${i}.wav`)).toMatchObject({ channels: 1, samples: 3000 });
    }
  });

  it('reads to the end of a file whose recorder never wrote its sizes (data size 0)', async () => {
    const input = Buffer.from(stereo('open.wav', ['-r', '8000', '-b', '16', '-e', 'signed-integer'], 1));
    input.writeUInt32LE(0, 4);
    input.writeUInt32LE(0, 40);
    const split = await recordingChannels(input, 'audio/wav', 'open.wav');
    expect(split.files.map((file) => header(file.data).dataBytes)).toEqual([16000, 16000]);
  });
});

describe('recordingChannels sends whole', () => {
  it('a mono wav: the same bytes, name and type, one channel', async () => {
    const path = join(dir, 'mono.wav');
    sox(['-n', '-r', '8000', '-b', '16', '-c', '1', path, 'synth', '1', 'sine', '440']);
    const input = readFileSync(path);
    const split = await recordingChannels(input, 'audio/x-wav', 'mono.wav');
    expect(split.channels).toBe(1);
    expect(split.files).toHaveLength(1);
    expect(split.files[0]).toEqual({ name: 'mono.wav', type: 'audio/x-wav', data: input });
    expect(split.files[0].data).toBe(input);
  });

  it('a wav of three channels (whose sides are unknown) and a stereo ADPCM wav (not copied sample by sample)', async () => {
    const three = join(dir, 'three.wav');
    sox(['-n', '-r', '8000', '-b', '16', '-c', '3', three, 'synth', '1', 'sine', '440']);
    const adpcm = stereo('adpcm.wav', ['-r', '8000', '-e', 'ima-adpcm'], 1);
    for (const input of [readFileSync(three), adpcm]) {
      const split = await recordingChannels(input, 'audio/wav', 'x.wav');
      expect(split).toEqual({ channels: 1, files: [{ name: 'x.wav', type: 'audio/wav', data: input }] });
    }
  });
});

describe('recordingChannels refuses a file it cannot read', () => {
  const good = () => stereo('good.wav', ['-r', '8000', '-b', '16', '-e', 'signed-integer'], 1);

  it.each([
    [
      'a header cut short inside "fmt "',
      (wav: Buffer) => wav.subarray(0, 30),
      /"fmt " chunk runs past the end/,
    ],
    ['a header cut before "data"', (wav: Buffer) => wav.subarray(0, 38), /no "data" chunk/],
    [
      'garbage after RIFF/WAVE',
      (wav: Buffer) => Buffer.concat([wav.subarray(0, 12), Buffer.alloc(64, 0xa5)]),
      /wav:/,
    ],
    ['a "fmt " of 0 channels', (wav: Buffer) => Buffer.from(wav).fill(0, 22, 24), /0 channels/],
    ['neither wav nor mp3', () => Buffer.from('<html>not found</html>'), /neither wav nor mp3/],
  ])('%s: RecordingFormatError', async (_label, make, message) => {
    const attempt = recordingChannels(make(good()), 'audio/wav', 'bad.wav');
    await expect(attempt).rejects.toThrow(RecordingFormatError);
    await expect(attempt).rejects.toThrow(message);
  });
});

describe('recordingChannels on an mp3', () => {
  it('decodes a two-channel 8 kHz mp3 into two mono 16-bit wavs, the tone only in the first', async () => {
    const input = stereo('call.mp3', ['-r', '8000', '-C', '32'], 1, 2);
    const split = await recordingChannels(input, 'audio/mpeg', 'in-101-5551234-20261203-101500-17.mp3');
    expect(split.channels).toBe(2);
    expect(split.files.map((file) => [file.name, file.type])).toEqual([
      ['in-101-5551234-20261203-101500-17-1.wav', 'audio/wav'],
      ['in-101-5551234-20261203-101500-17-2.wav', 'audio/wav'],
    ]);
    const [first, second] = split.files.map((file, i) => soxReads(file.data, `mp3-${i}.wav`));
    for (const read of [first, second]) {
      expect(read).toMatchObject({ channels: 1, rate: 8000, bits: 16, encoding: 'Signed Integer PCM' });
      // Two seconds, give or take the encoder's delay and padding (a few 576-sample frames).
      expect(Math.abs(read.samples - 16000)).toBeLessThan(4 * 576);
    }
    expect(first.rms).toBeGreaterThan(0.3);
    expect(second.rms).toBeLessThan(0.01);
    for (const file of split.files) {
      const fields = header(file.data);
      expect(fields).toMatchObject({
        riff: 'RIFF',
        tag: 1,
        channels: 1,
        rate: 8000,
        byteRate: 16000,
        blockAlign: 2,
      });
      expect(fields.dataAt).toBe(44);
      expect(file.data.length).toBe(44 + fields.dataBytes);
      expect(fields.riffSize).toBe(file.data.length - 8);
    }
  });

  it('keeps the order at 44.1 kHz, after an ID3v2 tag: a tone on the second channel is in the second file', async () => {
    const mp3 = stereo('music.mp3', ['-r', '44100', '-C', '128'], 2);
    const tag = Buffer.alloc(10 + 300);
    tag.write('ID3', 0, 'latin1');
    tag[3] = 3;
    tag.writeUInt8(300 >> 7, 8);
    tag.writeUInt8(300 & 0x7f, 9);
    // A stray frame sync inside the tag's padding must not be taken for the stream.
    tag.set([0xff, 0xfb, 0x90, 0x00], 100);
    const split = await recordingChannels(Buffer.concat([tag, mp3]), 'audio/mpeg', 'music.mp3');
    const [first, second] = split.files.map((file, i) => soxReads(file.data, `music-${i}.wav`));
    expect([first.rate, second.rate]).toEqual([44100, 44100]);
    expect(Math.abs(first.samples - 44100)).toBeLessThan(3 * 1152);
    expect(first.rms).toBeLessThan(0.01);
    expect(second.rms).toBeGreaterThan(0.3);
  });

  it('decodes what there is of an mp3 cut short', async () => {
    const mp3 = stereo('long.mp3', ['-r', '8000', '-C', '32'], 1, 4);
    const split = await recordingChannels(
      mp3.subarray(0, Math.floor(mp3.length / 2)),
      'audio/mpeg',
      'long.mp3',
    );
    const [first] = split.files.map((file, i) => soxReads(file.data, `long-${i}.wav`));
    expect(first.samples).toBeGreaterThan(8000);
    expect(first.samples).toBeLessThan(24000);
    expect(first.rms).toBeGreaterThan(0.3);
  });

  it('sends a mono mp3 whole, as it is', async () => {
    const path = join(dir, 'mono.mp3');
    sox(['-n', '-r', '8000', '-c', '1', '-C', '32', path, 'synth', '1', 'sine', '440']);
    const input = readFileSync(path);
    const split = await recordingChannels(input, 'audio/mpeg', 'mono.mp3');
    expect(split).toEqual({ channels: 1, files: [{ name: 'mono.mp3', type: 'audio/mpeg', data: input }] });
    expect(split.files[0].data).toBe(input);
  });

  it.each([
    [
      'an ID3 tag and nothing after it',
      Buffer.concat([Buffer.from('ID3\x03\x00\x00\x00\x00\x00\x00'), Buffer.alloc(500, 0x55)]),
    ],
    [
      'a lone frame header in garbage',
      Buffer.concat([Buffer.from([0xff, 0xfb, 0x90, 0x00]), Buffer.alloc(4000, 0x55)]),
    ],
  ])('refuses %s: RecordingFormatError', async (_label, input) => {
    const attempt = recordingChannels(input, 'audio/mpeg', 'bad.mp3');
    await expect(attempt).rejects.toThrow(RecordingFormatError);
    await expect(attempt).rejects.toThrow(/mp3: no MPEG audio frame/);
  });
});
