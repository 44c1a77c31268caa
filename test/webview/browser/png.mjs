// The pixels of a PNG screenshot (Playwright's: 8-bit RGB or RGBA, not interlaced), decoded with
// node:zlib, so a test can check what the browser put on screen where a canvas cannot be read
// (an SVG's lines): { width, height, channels, px } with each row's filter undone.
import { Buffer } from 'node:buffer';
import { inflateSync } from 'node:zlib';

export function decodePng(bytes) {
  let at = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat = [];
  while (at < bytes.length) {
    const length = bytes.readUInt32BE(at);
    const type = bytes.toString('ascii', at + 4, at + 8);
    const data = bytes.subarray(at + 8, at + 8 + length);
    if (type === 'IHDR') {
      [width, height] = [data.readUInt32BE(0), data.readUInt32BE(4)];
      if (data[8] !== 8 || data[12] !== 0) throw new Error('png: only 8-bit, non-interlaced images');
      channels = { 2: 3, 6: 4 }[data[9]];
      if (!channels) throw new Error(`png: colour type ${data[9]}`);
    } else if (type === 'IDAT') idat.push(data);
    at += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const px = new Uint8Array(height * stride);
  for (let r = 0; r < height; r++) {
    const filter = raw[r * (stride + 1)];
    const line = raw.subarray(r * (stride + 1) + 1, (r + 1) * (stride + 1));
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? px[r * stride + i - channels] : 0;
      const b = r > 0 ? px[(r - 1) * stride + i] : 0;
      const c = r > 0 && i >= channels ? px[(r - 1) * stride + i - channels] : 0;
      const p = a + b - c;
      const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)];
      const paeth = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      const add = [0, a, b, (a + b) >> 1, paeth][filter];
      px[r * stride + i] = (line[i] + add) & 0xff;
    }
  }
  return { width, height, channels, px };
}
