// Tiny media payloads the conformance scenarios expect (tools-call-image,
// tools-call-audio, resources-read-binary, prompts-get-with-image). Built here
// rather than pasted, so the bytes are obviously valid.
import { crc32, deflateSync } from 'node:zlib';

function pngChunk(type, data) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A 1×1 red pixel PNG. */
function onePixelPng() {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(1, 0); // width
  header.writeUInt32BE(1, 4); // height
  header[8] = 8; // bit depth
  header[9] = 2; // colour type: truecolour
  const scanline = Buffer.from([0, 0xff, 0x00, 0x00]); // filter byte + RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(scanline)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A RIFF/WAVE file holding one silent 16-bit mono sample at 8 kHz. */
function oneSampleWav() {
  const data = Buffer.alloc(2);
  const fmt = Buffer.alloc(16);
  fmt.writeUInt16LE(1, 0); // PCM
  fmt.writeUInt16LE(1, 2); // mono
  fmt.writeUInt32LE(8000, 4); // sample rate
  fmt.writeUInt32LE(16000, 8); // byte rate
  fmt.writeUInt16LE(2, 12); // block align
  fmt.writeUInt16LE(16, 14); // bits per sample
  const chunks = Buffer.concat([Buffer.from('fmt '), u32(16), fmt, Buffer.from('data'), u32(data.length), data]);
  return Buffer.concat([Buffer.from('RIFF'), u32(4 + chunks.length), Buffer.from('WAVE'), chunks]);
}

function u32(n) {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
}

export const PNG_BASE64 = onePixelPng().toString('base64');
export const WAV_BASE64 = oneSampleWav().toString('base64');
