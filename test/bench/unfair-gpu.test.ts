/**
 * A GPU comparison (issue 15) prints no ratio unless both sides are on a GPU: on this machine the
 * engine's only adapter is Mesa's software one and PyTorch has no CUDA, so bench/train-throughput.mjs
 * --backend webgpu must exit 2 naming both, before timing a step; with --rehearse it runs, and every
 * figure it prints is labelled a rehearsal.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { REPO, cannotRun } from '../helpers';

const PYTHON = process.env.BENCH_PYTHON || '/usr/bin/python3';
const SMALL = ['--configs', 'tiny', '--rounds', '1', '--steps', '1', '--warmup', '0', '--probe', '1'];

function bench(extra: string[]) {
  const args = ['bench/train-throughput.mjs', '--backend', 'webgpu', ...SMALL, '--batch', '2', '--len', '4', ...extra];
  const r = spawnSync(process.execPath, args, { cwd: REPO, encoding: 'utf8', timeout: 300_000 });
  return { ...r, out: `${r.stdout}${r.stderr}` };
}

test('a GPU comparison is refused when neither side is on a GPU, and a rehearsal says it is one', (t) => {
  if (spawnSync(PYTHON, ['-c', 'import torch'], { stdio: 'ignore' }).status !== 0)
    return cannotRun(t, 'python', `${PYTHON} cannot import torch`);
  const refused = bench(['--device', 'cuda']);
  if (/no GPU adapter|not available/.test(refused.out)) return cannotRun(t, 'webgpu', 'Dawn has no adapter here');
  assert.equal(refused.status, 2, refused.out);
  assert.match(refused.out, /refusing a GPU comparison/);
  assert.match(refused.out, /the engine's adapter is a software one \(mesa/);
  assert.match(refused.out, /the PyTorch peer finds no CUDA device/);
  assert.doesNotMatch(refused.out, /round 1|tokens\/s/, 'nothing was timed');

  const rehearsal = bench(['--rehearse']);
  assert.equal(rehearsal.status, 0, rehearsal.out);
  assert.match(rehearsal.out, /REHEARSAL, not a measurement: .*pass --device cuda/);
  assert.match(rehearsal.out, /^# REHEARSAL \(not a measurement\): training throughput/m);
  assert.match(rehearsal.out, /train-throughput-gpu-rehearsal\.json/);
});
