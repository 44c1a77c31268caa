/**
 * README's pictures are the product as the integration tests saw it: every image README.md shows
 * is a PNG in media/readme/ that scripts/pictures.mjs regenerates (listed in scripts/pictures.json
 * with the test that takes it), a real screenshot (a PNG at least 1,200 pixels wide), and every
 * listed picture is shown.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO } from '../helpers';

/** The README checked (PICTURES_LINT_README: another file, to see this test fail on it). */
const README = process.env.PICTURES_LINT_README ?? join(REPO, 'README.md');
const listed = Object.keys(JSON.parse(readFileSync(join(REPO, 'scripts', 'pictures.json'), 'utf8')));

/** The image paths of `![alt](path)` and `<img src="path">` in Markdown (alt text may span lines). */
function images(markdown: string): string[] {
  const md = [...markdown.matchAll(/!\[[^\]]*\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
  const html = [...markdown.matchAll(/<img[^>]*\ssrc="([^"]+)"/g)].map((m) => m[1]!);
  return [...md, ...html];
}

/** A PNG's width from its IHDR chunk; undefined when the bytes are not a PNG. */
function pngWidth(bytes: Buffer): number | undefined {
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  if (bytes.length < 24 || !bytes.subarray(0, 8).equals(signature)) return undefined;
  return bytes.readUInt32BE(16);
}

test('every picture README.md shows is a screenshot scripts/pictures.mjs regenerates, and each is shown', () => {
  const shown = images(readFileSync(README, 'utf8'));
  assert.ok(shown.length > 0, 'README.md shows no picture');
  for (const path of shown) {
    const name = /^media\/readme\/([\w-]+)\.png$/.exec(path)?.[1];
    assert.ok(name, `${path}: README's pictures are PNGs in media/readme/ (scripts/pictures.mjs writes them)`);
    assert.ok(listed.includes(name), `${path}: not in scripts/pictures.json, so nothing regenerates it`);
    const file = join(REPO, path);
    assert.ok(existsSync(file), `${path}: missing; run node scripts/pictures.mjs ${name}`);
    const width = pngWidth(readFileSync(file));
    assert.ok(width !== undefined && width >= 1200, `${path}: not a screenshot (width ${width})`);
  }
  for (const name of listed)
    assert.ok(
      shown.includes(`media/readme/${name}.png`),
      `scripts/pictures.json lists ${name}, README.md does not show it`,
    );
});
