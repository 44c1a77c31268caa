/**
 * README's pictures are the product as the integration tests saw it: every image README.md shows
 * is a PNG in media/readme/ that scripts/pictures.mjs regenerates (listed in scripts/pictures.json
 * with the test that takes it, or the script that draws it), a screenshot a real one (a PNG at least
 * 1,200 pixels wide), and every listed picture is shown. And none is older than the code it shows
 * (its `shows`) by more than pictures.json's `allowed_age_days`, in git's times (pictureAge.ts). A
 * shallow clone (CI's `--depth 1`) cannot age a picture changed before its oldest commit: where any
 * is left undecided the age test says so in a diagnostic, naming them; a stale one still fails.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO } from '../helpers';
import { pictureAge } from './pictureAge';

/** The README checked (PICTURES_LINT_README: another file, to see this test fail on it). */
const README = process.env.PICTURES_LINT_README ?? join(REPO, 'README.md');
/** scripts/pictures.json: each picture, what makes it and the code it shows; the age allowed. */
interface Pictures {
  allowed_age_days: number;
  pictures: Record<string, { suite: 'vscode' | 'webview' | 'script'; shows: string[] }>;
}
const PICTURES = JSON.parse(readFileSync(join(REPO, 'scripts', 'pictures.json'), 'utf8')) as Pictures;
const listed = Object.keys(PICTURES.pictures);
/** The age allowed (PICTURES_LINT_MARGIN_DAYS: another, to see the age check fail with a tiny one). */
const MARGIN = Number(process.env.PICTURES_LINT_MARGIN_DAYS ?? PICTURES.allowed_age_days);

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
    assert.ok(width !== undefined, `${path}: not a PNG`);
    if (PICTURES.pictures[name]!.suite !== 'script')
      assert.ok(width >= 1200, `${path}: not a screenshot (width ${width})`);
  }
  for (const name of listed)
    assert.ok(
      shown.includes(`media/readme/${name}.png`),
      `scripts/pictures.json lists ${name}, README.md does not show it`,
    );
});

test('no picture is older than the code it shows by more than the regeneration script allows', (t) => {
  assert.ok(MARGIN >= 0, `allowed_age_days: ${MARGIN}`);
  try {
    execFileSync('git', ['-C', REPO, 'rev-parse', 'HEAD'], { stdio: 'ignore' });
  } catch {
    // A source tree without git has no commit times to age pictures by: said, and decided nowhere.
    t.diagnostic("git: not a git checkout, and the pictures' ages are git times: not checked here");
    return;
  }
  const unknown: string[] = [];
  for (const [name, { shows }] of Object.entries(PICTURES.pictures)) {
    assert.ok(shows.length > 0, `${name}: pictures.json names no code it shows`);
    for (const path of shows) assert.ok(existsSync(join(REPO, path)), `${name} shows ${path}, which is not there`);
    const age = pictureAge(REPO, `media/readme/${name}.png`, shows, MARGIN);
    if (age.verdict === 'unknown') unknown.push(name);
    assert.ok(
      age.verdict !== 'stale',
      age.verdict === 'stale'
        ? `media/readme/${name}.png is ${age.days.toFixed(1)} days older than ${shows.join(', ')} ` +
            `(commit ${age.newest.slice(0, 10)}), more than ${MARGIN}: run node scripts/pictures.mjs ${name}`
        : '',
    );
  }
  // A shallow clone (CI's may be one) decides what its history bounds and says what it cannot:
  // a skip would fail a run that allows none, and the same tree is judged whole in any full clone.
  if (unknown.length)
    t.diagnostic(
      `shallow: this is a shallow clone, and ${unknown.length} of ${listed.length} pictures (${unknown.join(', ')}) ` +
        'were last changed before its oldest commit, so their ages are not known (git fetch --unshallow tells them)',
    );
});
