/**
 * What `--force` lets an output replace (issue 27 #2; the refusals are rows of hostile-files.ts): a
 * regular file the user names, and, through a link, the file it links to (the link stays). Without
 * --force the same file is refused and left as it was.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { lstatSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { readSafetensors } from '../../src/engine/checkpoint/safetensors';
import { REPO } from '../helpers';
import { scratch } from '../train/helpers';
import { micro } from './malformed-plants';

const cli = (...args: string[]) =>
  spawnSync(process.execPath, [join(REPO, 'dist', 'cli.js'), ...args], { encoding: 'utf8', input: '' });

const dir = scratch('ad-output-targets-');
const run = join(dir, 'run');

before(() => {
  writeFileSync(join(dir, 'micro.json'), micro());
  const r = cli('train', '--backend', 'wasm', '--task', 'copy', '--config', join(dir, 'micro.json'), '--out', run);
  assert.equal(r.status, 0, r.stderr);
});

for (const [command, extra, isOutput] of [
  ['average', [], (path: string) => readSafetensors(path).tensors.has('src_embed.weight')],
  ['batches', ['--steps', '2'], (path: string) => readFileSync(path).subarray(0, 4).toString() === 'ADBF'],
] as const) {
  test(`${command} --out an existing file: refused without --force, replaced with it`, () => {
    const out = join(dir, `${command}.out`);
    writeFileSync(out, 'the user’s own file\n');
    const refused = cli(command, '--run', run, ...extra, '--out', out);
    assert.equal(refused.status, 1, refused.stderr);
    assert.match(refused.stderr, /already exists; give --force to replace it/);
    assert.equal(readFileSync(out, 'utf8'), 'the user’s own file\n', 'left as it was');
    const forced = cli(command, '--run', run, ...extra, '--out', out, '--force');
    assert.equal(forced.status, 0, forced.stderr);
    assert.ok(isOutput(out), `${out} holds the ${command} output`);
  });

  test(`${command} --out a link to a regular file, with --force: the file is replaced, the link stays`, () => {
    const file = join(dir, `${command}.target`);
    const link = join(dir, `${command}.link`);
    writeFileSync(file, 'old\n');
    symlinkSync(file, link);
    const r = cli(command, '--run', run, ...extra, '--out', link, '--force');
    assert.equal(r.status, 0, r.stderr);
    assert.ok(lstatSync(link).isSymbolicLink(), 'the link is still a link');
    assert.ok(isOutput(file), 'the file it links to holds the output');
  });
}
