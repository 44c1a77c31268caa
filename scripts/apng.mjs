// An animated PNG (APNG) written by hand with node:zlib, and the little drawing a frame needs: an
// RGB canvas with filled rectangles and text in a 5×7 bitmap font (the characters of head ids,
// steps and the tasks' tokens). scripts/animation.mjs draws README's anti-diagonal with it.
// APNG: the PNG chunks IHDR, acTL (frames, plays), then per frame fcTL (its size and delay) and its
// pixels (the first as IDAT, so a viewer without APNG shows it; the rest as fdAT), IEND.
import { Buffer } from 'node:buffer';
import { deflateSync } from 'node:zlib';

/** A width × height RGB canvas, filled with `background` ([r, g, b]). */
export function canvas(width, height, background) {
  const px = new Uint8Array(width * height * 3);
  for (let i = 0; i < px.length; i += 3) px.set(background, i);
  return { width, height, px };
}

/** Fills the rectangle [x, x + w) × [y, y + h) (clipped to the canvas) with `rgb`. */
export function fillRect(c, x, y, w, h, rgb) {
  const x0 = Math.max(0, Math.round(x));
  const x1 = Math.min(c.width, Math.round(x + w));
  for (let r = Math.max(0, Math.round(y)); r < Math.min(c.height, Math.round(y + h)); r++)
    for (let col = x0; col < x1; col++) c.px.set(rgb, (r * c.width + col) * 3);
}

/** 5 columns × 7 rows a glyph, '#' on. */
const FONT = {
  0: ['.###.', '#...#', '#..##', '#.#.#', '##..#', '#...#', '.###.'],
  1: ['..#..', '.##..', '..#..', '..#..', '..#..', '..#..', '.###.'],
  2: ['.###.', '#...#', '....#', '...#.', '..#..', '.#...', '#####'],
  3: ['####.', '....#', '....#', '.###.', '....#', '....#', '####.'],
  4: ['...#.', '..##.', '.#.#.', '#..#.', '#####', '...#.', '...#.'],
  5: ['#####', '#....', '####.', '....#', '....#', '#...#', '.###.'],
  6: ['..##.', '.#...', '#....', '####.', '#...#', '#...#', '.###.'],
  7: ['#####', '....#', '...#.', '..#..', '.#...', '.#...', '.#...'],
  8: ['.###.', '#...#', '#...#', '.###.', '#...#', '#...#', '.###.'],
  9: ['.###.', '#...#', '#...#', '.####', '....#', '...#.', '.##..'],
  a: ['.....', '.....', '.###.', '....#', '.####', '#...#', '.####'],
  c: ['.....', '.....', '.####', '#....', '#....', '#....', '.####'],
  d: ['....#', '....#', '.####', '#...#', '#...#', '#...#', '.####'],
  e: ['.....', '.....', '.###.', '#...#', '#####', '#....', '.###.'],
  f: ['..##.', '.#...', '####.', '.#...', '.#...', '.#...', '.#...'],
  h: ['#....', '#....', '####.', '#...#', '#...#', '#...#', '#...#'],
  i: ['..#..', '.....', '.##..', '..#..', '..#..', '..#..', '.###.'],
  k: ['#....', '#....', '#..#.', '#.#..', '##...', '#.#..', '#..#.'],
  l: ['.##..', '..#..', '..#..', '..#..', '..#..', '..#..', '.###.'],
  n: ['.....', '.....', '####.', '#...#', '#...#', '#...#', '#...#'],
  o: ['.....', '.....', '.###.', '#...#', '#...#', '#...#', '.###.'],
  p: ['.....', '.....', '####.', '#...#', '####.', '#....', '#....'],
  q: ['.....', '.....', '.####', '#...#', '.####', '....#', '....#'],
  r: ['.....', '.....', '#.##.', '##..#', '#....', '#....', '#....'],
  s: ['.....', '.....', '.####', '#....', '.###.', '....#', '####.'],
  t: ['.#...', '.#...', '####.', '.#...', '.#...', '.#..#', '..##.'],
  u: ['.....', '.....', '#...#', '#...#', '#...#', '#..##', '.##.#'],
  v: ['.....', '.....', '#...#', '#...#', '#...#', '.#.#.', '..#..'],
  w: ['.....', '.....', '#...#', '#...#', '#.#.#', '#.#.#', '.#.#.'],
  y: ['.....', '.....', '#...#', '#...#', '.####', '....#', '.###.'],
  ':': ['.....', '..#..', '..#..', '.....', '..#..', '..#..', '.....'],
  '.': ['.....', '.....', '.....', '.....', '.....', '.##..', '.##..'],
  '/': ['....#', '....#', '...#.', '..#..', '.#...', '#....', '#....'],
  '<': ['...#.', '..#..', '.#...', '#....', '.#...', '..#..', '...#.'],
  '>': ['.#...', '..#..', '...#.', '....#', '...#.', '..#..', '.#...'],
  '-': ['.....', '.....', '.....', '#####', '.....', '.....', '.....'],
  '?': ['.###.', '#...#', '....#', '...#.', '..#..', '.....', '..#..'],
  ' ': ['.....', '.....', '.....', '.....', '.....', '.....', '.....'],
  b: ['#....', '#....', '####.', '#...#', '#...#', '#...#', '####.'],
  g: ['.....', '.....', '.####', '#...#', '.####', '....#', '.###.'],
  m: ['.....', '.....', '##.#.', '#.#.#', '#.#.#', '#...#', '#...#'],
  x: ['.....', '.....', '#...#', '.#.#.', '..#..', '.#.#.', '#...#'],
  z: ['.....', '.....', '#####', '...#.', '..#..', '.#...', '#####'],
  ',': ['.....', '.....', '.....', '.....', '.##..', '..#..', '.#...'],
  '(': ['...#.', '..#..', '.#...', '.#...', '.#...', '..#..', '...#.'],
  ')': ['.#...', '..#..', '...#.', '...#.', '...#.', '..#..', '.#...'],
  _: ['.....', '.....', '.....', '.....', '.....', '.....', '#####'],
  "'": ['..#..', '..#..', '.#...', '.....', '.....', '.....', '.....'],
  '=': ['.....', '.....', '#####', '.....', '#####', '.....', '.....'],
};

/** Width in pixels of `text` at `scale` (6 × scale a character: 5 and a gap). */
export const textWidth = (text, scale) => text.length * 6 * scale - scale;

/** Draws `text` with its top left at (x, y), each font pixel `scale` × `scale`; unknown characters as '?'. */
export function drawText(c, text, x, y, scale, rgb) {
  [...text].forEach((ch, i) => {
    const glyph = FONT[ch] ?? FONT[ch.toLowerCase()] ?? FONT['?'];
    glyph.forEach((row, r) => {
      for (let col = 0; col < 5; col++)
        if (row[col] === '#') fillRect(c, x + (i * 6 + col) * scale, y + r * scale, scale, scale, rgb);
    });
  });
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'ascii');
  Buffer.from(data).copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

const u32 = (...values) => {
  const b = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => b.writeUInt32BE(v, i * 4));
  return b;
};

/** A canvas's pixels as PNG image data: each row filter 0 (none), deflated. */
function imageData(c) {
  const raw = Buffer.alloc(c.height * (1 + c.width * 3));
  for (let r = 0; r < c.height; r++) {
    const at = r * (1 + c.width * 3);
    raw[at] = 0;
    raw.set(c.px.subarray(r * c.width * 3, (r + 1) * c.width * 3), at + 1);
  }
  return deflateSync(raw, { level: 9 });
}

/**
 * The APNG of `frames` (canvases of one size), each shown `delays[i]` milliseconds, looping
 * forever; `text` (keyword → string) goes into tEXt chunks.
 */
export function encodeApng(frames, delays, text = {}) {
  const { width, height } = frames[0];
  const ihdr = Buffer.concat([u32(width, height), Buffer.from([8, 2, 0, 0, 0])]); // 8-bit RGB
  const parts = [Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr)];
  parts.push(chunk('acTL', u32(frames.length, 0)));
  for (const [key, value] of Object.entries(text)) parts.push(chunk('tEXt', Buffer.from(`${key}\0${value}`, 'latin1')));
  let seq = 0;
  frames.forEach((f, i) => {
    if (f.width !== width || f.height !== height) throw new Error('apng: frames differ in size');
    const delay = Buffer.alloc(4);
    delay.writeUInt16BE(delays[i], 0); // numerator: ms
    delay.writeUInt16BE(1000, 2); // denominator: 1000 a second
    const fctl = Buffer.concat([u32(seq++, width, height, 0, 0), delay, Buffer.from([0, 0])]); // dispose none, blend source
    parts.push(chunk('fcTL', fctl));
    const data = imageData(f);
    parts.push(i === 0 ? chunk('IDAT', data) : chunk('fdAT', Buffer.concat([u32(seq++), data])));
  });
  parts.push(chunk('IEND', Buffer.alloc(0)));
  return Buffer.concat(parts);
}
