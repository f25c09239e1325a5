import { recordingFileName, sniffAudio } from './audio-type';

const wav = Buffer.concat([Buffer.from('RIFF'), Buffer.from([1, 2, 3, 4]), Buffer.from('WAVEfmt ')]);
const id3 = Buffer.from('ID3\x04\x00\x00\x00\x00\x00\x00\x00\x00', 'latin1');
const frame = Buffer.from([0xff, 0xfb, 0x90, 0x64, 0, 0, 0, 0, 0, 0, 0, 0]);
const ogg = Buffer.from('OggS\x00\x02\x00\x00\x00\x00\x00\x00', 'latin1');
const html = Buffer.from('<!doctype html><html>');

describe('sniffAudio', () => {
  it('knows wav by RIFF....WAVE and mp3 by ID3 or an MPEG frame sync', () => {
    expect(sniffAudio(wav, 'audio/wav')).toBe('wav');
    expect(sniffAudio(wav, 'audio/x-wav')).toBe('wav');
    expect(sniffAudio(id3, 'audio/mpeg')).toBe('mp3');
    expect(sniffAudio(frame, 'audio/mpeg; charset=binary')).toBe('mp3');
  });

  it('goes by the bytes when the type is generic or missing', () => {
    expect(sniffAudio(wav, 'application/octet-stream')).toBe('wav');
    expect(sniffAudio(id3, undefined)).toBe('mp3');
    expect(sniffAudio(ogg, 'application/octet-stream')).toBeUndefined();
  });

  it('refuses other types and bytes that are not wav or mp3', () => {
    expect(sniffAudio(html, 'text/html')).toBeUndefined();
    expect(sniffAudio(wav, 'text/html')).toBeUndefined();
    expect(sniffAudio(ogg, 'audio/ogg')).toBeUndefined();
    expect(sniffAudio(ogg, 'audio/mpeg')).toBeUndefined();
    expect(sniffAudio(Buffer.from([0xff, 0xe0]), 'audio/mpeg')).toBeUndefined();
    expect(sniffAudio(Buffer.alloc(0), 'audio/wav')).toBeUndefined();
  });
});

describe('recordingFileName', () => {
  it('keeps a safe base name and sets the extension of the kind found', () => {
    expect(recordingFileName('1732269000.1234.mp3', 'mp3')).toBe('1732269000.1234.mp3');
    expect(recordingFileName('rec file?.WAV', 'wav')).toBe('rec_file_.wav');
    expect(recordingFileName('x.wav', 'mp3')).toBe('x.mp3');
    expect(recordingFileName('', 'wav')).toBe('recording.wav');
  });
});
