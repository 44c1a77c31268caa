/**
 * README's animation (media/readme/anti-diagonal.png, scripts/animation.mjs) decodes: an APNG with
 * one frame per attention snapshot of the run scripts/pictures.json trains for it (its `train`
 * arguments: steps / snapshot every), each frame inflating to whole rows of the image, and the
 * map changing as the run learns (the first and last frames differ beyond the step's text).
 * ANIMATION_LINT_FILE: another file, to see this test fail on it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { inflateSync } from 'node:zlib';
import { REPO } from '../helpers';

const FILE = process.env.ANIMATION_LINT_FILE ?? join(REPO, 'media', 'readme', 'anti-diagonal.png');

interface Apng {
  width: number;
  height: number;
  frames: number;
  comment: string;
  /** Each frame's pixels, filter bytes removed (every frame is whole and unfiltered: filter 0). */
  pixels: Buffer[];
}

/** The chunks of a PNG, checked for its signature. */
function chunks(bytes: Buffer): { type: string; data: Buffer }[] {
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  assert.ok(bytes.subarray(0, 8).equals(signature), 'not a PNG');
  const out: { type: string; data: Buffer }[] = [];
  for (let at = 8; at < bytes.length; ) {
    const length = bytes.readUInt32BE(at);
    out.push({ type: bytes.toString('ascii', at + 4, at + 8), data: bytes.subarray(at + 8, at + 8 + length) });
    at += 12 + length;
  }
  return out;
}

function decode(bytes: Buffer): Apng {
  const all = chunks(bytes);
  const ihdr = all.find((c) => c.type === 'IHDR')!.data;
  const [width, height] = [ihdr.readUInt32BE(0), ihdr.readUInt32BE(4)];
  assert.deepEqual([...ihdr.subarray(8)], [8, 2, 0, 0, 0], '8-bit RGB, not interlaced');
  const actl = all.find((c) => c.type === 'acTL');
  assert.ok(actl, 'no acTL chunk: not animated');
  const text = all.find((c) => c.type === 'tEXt')?.data.toString('latin1') ?? '';
  const pixels: Buffer[] = [];
  let parts: Buffer[] | null = null;
  const flush = () => {
    if (!parts) return;
    const raw = inflateSync(Buffer.concat(parts));
    const row = 1 + width * 3;
    assert.equal(raw.length, height * row, `frame ${pixels.length}: ${raw.length} bytes, not ${height} whole rows`);
    pixels.push(Buffer.concat(Array.from({ length: height }, (_, r) => raw.subarray(r * row + 1, (r + 1) * row))));
  };
  for (const c of all) {
    if (c.type === 'fcTL') {
      flush();
      parts = [];
      assert.deepEqual([c.data.readUInt32BE(4), c.data.readUInt32BE(8)], [width, height], 'frames are whole');
    } else if (c.type === 'IDAT') parts?.push(c.data);
    else if (c.type === 'fdAT') parts?.push(c.data.subarray(4));
  }
  flush();
  return { width, height, frames: actl.data.readUInt32BE(0), comment: text.split('\0')[1] ?? '', pixels };
}

test('the anti-diagonal animation has a frame per snapshot of its run, and its map changes', () => {
  const pictures = JSON.parse(readFileSync(join(REPO, 'scripts', 'pictures.json'), 'utf8')) as {
    pictures: Record<string, { train?: string[] }>;
  };
  const train = pictures.pictures['anti-diagonal']?.train ?? [];
  const setting = (flag: string) => Number(train[train.indexOf(flag) + 1]);
  const expected = Math.floor(setting('--steps') / setting('--snapshot-every'));
  assert.ok(expected > 1, `pictures.json's anti-diagonal trains ${train.join(' ')}`);
  const apng = decode(readFileSync(FILE));
  assert.equal(apng.frames, expected, `acTL: ${apng.frames} frames, the run snapshots ${expected} steps`);
  assert.equal(apng.pixels.length, expected, 'each frame decodes');
  const steps = /steps ([\d,]+)$/.exec(apng.comment)?.[1]?.split(',').map(Number);
  assert.deepEqual(
    steps,
    Array.from({ length: expected }, (_, i) => (i + 1) * setting('--snapshot-every')),
  );
  for (let i = 1; i < expected; i++) assert.ok(!apng.pixels[i]!.equals(apng.pixels[i - 1]!), `frame ${i} = ${i - 1}`);
  // Beyond the step's text and bar (the bottom of the frame), the map itself changed.
  const mapRows = Math.floor(apng.height * 0.6) * apng.width * 3;
  const first = apng.pixels[0]!.subarray(0, mapRows);
  const last = apng.pixels.at(-1)!.subarray(0, mapRows);
  let changed = 0;
  for (let i = 0; i < mapRows; i += 3) if (first[i] !== last[i] || first[i + 1] !== last[i + 1]) changed++;
  assert.ok(changed > mapRows / 3 / 20, `only ${changed} pixels of the map changed from the first frame to the last`);
});
