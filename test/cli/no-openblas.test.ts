/**
 * A machine without OpenBLAS, made here by pointing ATTENTION_DEBUGGER_BLAS_PATH (read by
 * native/blas.c before dlopen) at a file that does not exist: the engine names the fallback and the
 * apt-get line once, and trains on plain wasm to the same numbers as with the native kernels off.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO } from '../helpers';
import { microConfig, scratch } from '../train/helpers';

const bin = join(REPO, 'bin', 'attention-debugger');
const HIDDEN = '/nonexistent/libopenblas.so.0';

function cli(args: string[], env: Record<string, string>) {
  const r = spawnSync(process.execPath, [bin, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ATTENTION_DEBUGGER_BACKEND: '', ATTENTION_DEBUGGER_BLAS_PATH: '', ...env },
  });
  assert.equal(r.status, 0, r.stderr);
  return r;
}

const wasmLine = (env: Record<string, string>): string =>
  cli(['backends'], env)
    .stdout.split('\n')
    .find((l) => l.startsWith('wasm')) ?? '';

test('OpenBLAS hidden from dlopen: backends names the missing library, the fallback and the apt-get line', () => {
  const line = wasmLine({ ATTENTION_DEBUGGER_BLAS_PATH: HIDDEN });
  assert.match(line, /^wasm \(matMul: XNNPACK on wasm/, line);
  assert.ok(line.includes(`OpenBLAS (${HIDDEN} with cblas_sgemm) not found`), line);
  assert.ok(line.includes('plain wasm'), line);
  assert.ok(line.includes('sudo apt-get install libopenblas0-pthread'), line);
});

test('the switch is what hides it: the same variable naming the real library loads OpenBLAS', () => {
  const line = wasmLine({ ATTENTION_DEBUGGER_BLAS_PATH: 'libopenblas.so.0' });
  assert.match(line, /^wasm \(matMul: OpenBLAS.*libopenblas\.so\.0/, line);
});

test('without OpenBLAS it trains on plain wasm, to the losses of a run with the native kernels off', () => {
  const dir = scratch('ad-noblas-');
  const config = microConfig(dir, { steps: 6, checkpoint_every: 3, eval_every: 100 });
  const losses = (out: string): number[] =>
    readFileSync(join(out, 'metrics.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { loss?: number })
      .filter((r) => typeof r.loss === 'number')
      .map((r) => r.loss!);
  const train = (out: string, env: Record<string, string>): number[] => {
    cli(['train', '--backend', 'wasm', '--task', 'copy', '--config', config, '--out', out], env);
    return losses(out);
  };
  const hidden = train(join(dir, 'hidden'), { ATTENTION_DEBUGGER_BLAS_PATH: HIDDEN });
  const off = train(join(dir, 'off'), { ATTENTION_DEBUGGER_NATIVE: '0' });
  assert.equal(hidden.length, 6, 'six steps logged');
  assert.deepEqual(hidden, off);
});
