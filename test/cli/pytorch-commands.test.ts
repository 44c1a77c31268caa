/**
 * The commands that read a run work on one PyTorch wrote (issue 27 item 6; the ones that would
 * train on it are refused: silent-inputs.ts). Before, heads and evaluate stopped at "config.json:
 * batch_tokens … undefined" on a folder check-run calls valid. The run: pytorch-plant.ts (d_model
 * 32, 4 heads, 2 + 2 layers, the reverse task, vocabulary 11).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { cannotRun, REPO } from '../helpers';
import { pytorchAvailable } from '../run/pytorch';
import { pytorchRunFolder } from './pytorch-plant';

const skipped = process.env.ATTENTION_DEBUGGER_SKIP_PYTHON === '1' || pytorchAvailable() !== undefined;
let run = '';
const cli = (...args: string[]) =>
  spawnSync(process.execPath, [join(REPO, 'dist', 'cli.js'), ...args], { encoding: 'utf8', cwd: REPO });

before(() => {
  if (!skipped) run = pytorchRunFolder();
});

const check = (name: string, body: () => void) =>
  test(name, (t) => {
    if (skipped) return cannotRun(t, 'python', pytorchAvailable() ?? 'ATTENTION_DEBUGGER_SKIP_PYTHON=1');
    body();
  });

check('check-run calls the folder valid', () => {
  const r = cli('check-run', run);
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

check('evaluate decodes the reverse task’s test split', () => {
  const r = cli('evaluate', '--backend', 'wasm', '--run', run, '--limit', '5', '--beam', '1');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /decoding 5 test sentences with .*step-2\.safetensors/);
  assert.match(r.stdout, /^BLEU = /);
});

check('heads ranks all 24 heads (3 kinds × 2 layers × 4 heads)', () => {
  const r = cli('heads', '--backend', 'wasm', '--run', run, '--pairs', '4', '--limit', '5', '--up-to', '1', '--json');
  assert.equal(r.status, 0, r.stderr);
  const report = JSON.parse(r.stdout) as { importance: Record<string, number>; metric: string };
  assert.equal(Object.keys(report.importance).length, 24);
  assert.ok('cross:1.3' in report.importance && 'encoder_self:0.0' in report.importance);
  assert.equal(report.metric, 'exact_match_percent');
});

check('decode, attention and average read it', () => {
  const decoded = spawnSync(
    process.execPath,
    [join(REPO, 'dist', 'cli.js'), 'decode', '--backend', 'wasm', '--run', run, '--beam', '1'],
    { encoding: 'utf8', input: '4 5 6\n7 8\n' },
  );
  assert.equal(decoded.status, 0, decoded.stderr);
  assert.equal(decoded.stdout.trim().split('\n').length, 2);
  const attention = cli('attention', '--backend', 'wasm', '--run', run, '--src', '4 5 6', '--tgt', '6 5 4');
  assert.equal(attention.status, 0, attention.stderr);
  const a = JSON.parse(attention.stdout);
  assert.deepEqual([a.cross.length, a.cross[0].length], [2, 4], 'cross [L][H]');
  assert.deepEqual(a.src_tokens, ['4', '5', '6', '</s>']);
  const average = cli('average', '--run', run, '--last', '1', '--out', join(run, '..', 'average.safetensors'));
  assert.equal(average.status, 0, average.stderr);
});
