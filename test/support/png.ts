/**
 * Test support: a small PNG decoder (8-bit RGB or RGBA, non-interlaced), so a
 * test can check that a chart is a real image of the size it claims and not a
 * blank one: signature, chunk CRCs, IHDR, inflated IDAT, scanline filters.
 */
import assert from 'node:assert/strict';
import { crc32, inflateSync } from 'node:zlib';

/** A decoded PNG. */
export interface DecodedPng {
  width: number;
  height: number;
  /** Bytes per pixel: 3 (RGB) or 4 (RGBA). */
  channels: number;
  /** Unfiltered pixels, row after row. */
  pixels: Uint8Array;
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Width and height from the IHDR chunk alone. */
export function pngSize(bytes: Uint8Array): { width: number; height: number } {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  assert.ok(b.subarray(0, 8).equals(SIGNATURE), 'PNG signature');
  assert.equal(b.toString('latin1', 12, 16), 'IHDR', 'IHDR is the first chunk');
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

/** Decodes `bytes`, asserting every structural rule it relies on. */
export function decodePng(bytes: Uint8Array): DecodedPng {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const { width, height } = pngSize(b);
  const bitDepth = b[24];
  const colorType = b[25];
  assert.equal(bitDepth, 8, 'bit depth');
  assert.ok(colorType === 2 || colorType === 6, `colour type ${colorType} (RGB or RGBA)`);
  assert.equal(b[28], 0, 'not interlaced');
  const channels = colorType === 6 ? 4 : 3;
  const idat: Buffer[] = [];
  let at = 8;
  let ended = false;
  // Each chunk is at least 12 bytes, so this ends.
  while (at + 12 <= b.length) {
    const length = b.readUInt32BE(at);
    const type = b.toString('latin1', at + 4, at + 8);
    const data = b.subarray(at + 8, at + 8 + length);
    assert.equal(b.readUInt32BE(at + 8 + length), crc32(b.subarray(at + 4, at + 8 + length)), `CRC of ${type}`);
    if (type === 'IDAT') idat.push(data);
    at += 12 + length;
    if (type === 'IEND') {
      ended = true;
      break;
    }
  }
  assert.ok(ended, 'IEND present');
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  assert.equal(raw.length, height * (stride + 1), 'inflated size matches IHDR');
  const pixels = new Uint8Array(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const out = pixels.subarray(y * stride, (y + 1) * stride);
    const prev = y > 0 ? pixels.subarray((y - 1) * stride, y * stride) : new Uint8Array(stride);
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? out[x - channels] : 0;
      const up = prev[x];
      const c = x >= channels ? prev[x - channels] : 0;
      let predictor: number;
      switch (filter) {
        case 0:
          predictor = 0;
          break;
        case 1:
          predictor = a;
          break;
        case 2:
          predictor = up;
          break;
        case 3:
          predictor = (a + up) >> 1;
          break;
        case 4: {
          const p = a + up - c;
          const pa = Math.abs(p - a);
          const pb = Math.abs(p - up);
          const pc = Math.abs(p - c);
          predictor = pa <= pb && pa <= pc ? a : pb <= pc ? up : c;
          break;
        }
        default:
          assert.fail(`unknown filter ${filter} on line ${y}`);
      }
      out[x] = (line[x] + predictor) & 0xff;
    }
  }
  return { width, height, channels, pixels };
}

/** The share of pixels that are not (near) white: 0 for a blank image. */
export function inkShare(png: DecodedPng): number {
  let ink = 0;
  const count = png.width * png.height;
  for (let i = 0; i < count; i++) {
    const o = i * png.channels;
    if (png.pixels[o] < 240 || png.pixels[o + 1] < 240 || png.pixels[o + 2] < 240) ink++;
  }
  return ink / count;
}
