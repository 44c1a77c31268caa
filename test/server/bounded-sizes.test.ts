/**
 * The real `serve` process (dist/cli.js) asked for sizes past the engine's limits (issue 27 #4): a
 * beam of 100,000 for attention/get and beam/tree (the CLI's --beam took over 120 s), and the
 * attention of a 5,000-token source. Each is refused at once with the limit and the largest value
 * that fits, the same limits as the CLI's (run/limits.ts, protocol/beamTree.ts MAX_BEAM); the next
 * request, within them, is answered.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { REPO } from '../helpers';
import { micro } from '../cli/malformed-plants';
import { scratch } from '../train/helpers';
import { RawEngine } from './rawEngine';

const cliJs = join(REPO, 'dist', 'cli.js');
const dir = scratch('ad-bounded-serve-');
const run = join(dir, 'run'); // the copy task, 6 steps; 32 positions
const long = join(dir, 'long'); // the same with 8,192 positions, so that only the size of the maps limits

let engine: RawEngine;

before(async () => {
  for (const [out, maxLen] of [
    [run, 32],
    [long, 8192],
  ] as const) {
    writeFileSync(join(dir, `micro-${maxLen}.json`), micro({ max_len: maxLen }));
    const args = ['train', '--backend', 'wasm', '--task', 'copy', '--config', join(dir, `micro-${maxLen}.json`)];
    const r = spawnSync(process.execPath, [cliJs, ...args, '--out', out], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  }
  engine = new RawEngine();
  await engine.request('engine/info'); // started: the timings below are of the refusals, not of the start
});

after(() => engine.proc.kill());

const ask = (method: string, params: object) => engine.ask(method, params);
/**
 * A guard against work started anyway (a beam of 100,000 ran over 120 s), not a speed figure: a
 * refusal is checked before any work, so it comes in about a second on an idle machine.
 */
const HANG_GUARD_MS = 60_000;

const text = (src: string, tgt?: string) => ({ kind: 'text', src, ...(tgt !== undefined ? { tgt } : {}) });
const tokens = (n: number) => Array.from({ length: n }, (_, i) => 4 + (i % 7)).join(' ');

/** A request within the limits, answered after a refusal. */
async function stillAnswers(after: string): Promise<void> {
  const r = await ask('beam/tree', { runDir: run, input: text('4 5 6'), beam: 64 });
  assert.equal(r.error, undefined, `beam/tree with beam 64 (the limit) after ${after}`);
  assert.equal((r.result as { beam: number }).beam, 64);
}

for (const method of ['attention/get', 'beam/tree']) {
  test(`${method} with beam 100,000 is refused at once with the limit; beam 64 is answered after`, async () => {
    const r = await ask(method, { runDir: run, input: text('4 5 6'), beam: 100_000 });
    assert.match(r.error ?? '', /beam must be a whole number from 1 to 64, got 100000/);
    assert.ok(r.ms < HANG_GUARD_MS, `refused in ${r.ms} ms`);
    await stillAnswers(`${method} beam 100000`);
  });
}

test('attention/get of a 5,000-token source is refused up front with the length that fits', async () => {
  // No target: the source is decoded first, so its maps are sized before: 2 heads, 1 + 1 layers,
  // 4·2·(5,001² + 5,001 + 1) bytes = 191 MB > 160 MB; √(160 MB / (4·2·3)) = 2,643 tokens.
  const r = await ask('attention/get', { runDir: long, input: text(tokens(5000)), beam: 1 });
  assert.match(
    r.error ?? '',
    /the attention of 5001 source and 1 target tokens would take 191 MB for all maps, more than the 160 MB .*about 2643 tokens/,
  );
  assert.ok(r.ms < HANG_GUARD_MS, `refused in ${r.ms} ms`);
  const ok = await ask('attention/get', { runDir: long, input: text('4 5 6', '4 5 6') });
  assert.equal(ok.error, undefined, 'a short pair on the same model after');
  await stillAnswers('a 5,000-token source');
});

test('train/start of big with a batch past any memory, or steps past the limit, is refused before a folder appears', async () => {
  const runDir = join(dir, 'big');
  const data = { kind: 'task', task: 'copy' };
  // 176 M parameters and 1,000,000 batch tokens: about 830 GiB of activations, past any machine's memory.
  const big = await ask('train/start', { runDir, data, config: 'big', batchTokens: 1_000_000 });
  assert.match(big.error ?? '', /^preset big: 176\.4 M parameters with --batch-tokens 1000000 need about [\d.]+ GiB/);
  assert.match(big.error ?? '', /the largest --batch-tokens that fits is \d+/);
  assert.ok(big.ms < HANG_GUARD_MS, `refused in ${big.ms} ms`);
  const steps = await ask('train/start', { runDir, data, config: 'tiny', steps: 1e12 });
  assert.match(steps.error ?? '', /steps must be a whole number from 1 to 10000000, got 1000000000000/);
  assert.equal(existsSync(runDir), false, 'no run folder');
  await stillAnswers('train/start past the limits');
});
