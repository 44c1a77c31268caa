/** The package's entry points as a user meets them: the engine by its package name, the CLI by its bin. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO, readJson } from '../helpers';

test("require('attention-debugger/engine') works from the repository root after the build", () => {
  const script = `
    const engine = require('attention-debugger/engine');
    (async () => {
      await engine.initBackend('cpu');
      console.log(JSON.stringify({ keys: ['Transformer', 'loadCheckpoint', 'attentionOfPairs', 'initBackend'].filter((k) => typeof engine[k] === 'function'), presets: Object.keys(engine.PRESETS) }));
    })();`;
  const r = spawnSync(process.execPath, ['-e', script], { cwd: REPO, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.deepEqual(out.keys, ['Transformer', 'loadCheckpoint', 'attentionOfPairs', 'initBackend']);
  assert.deepEqual(out.presets, ['tiny', 'small', 'base', 'big']);
});

test('the manifest names the CLI and the engine export', () => {
  const pkg = readJson<{ name: string; bin: Record<string, string>; exports: Record<string, string> }>(
    join(REPO, 'package.json'),
  );
  assert.equal(pkg.name, 'attention-debugger');
  assert.equal(pkg.bin['attention-debugger'], 'bin/attention-debugger');
  assert.equal(pkg.exports['./engine'], './dist/engine.js');
  const help = spawnSync(process.execPath, [join(REPO, pkg.bin['attention-debugger']), '--help'], { encoding: 'utf8' });
  assert.equal(help.status, 0);
  for (const command of ['train', 'decode', 'evaluate', 'attention', 'bleu', 'average', 'serve', 'backends'])
    assert.match(help.stdout, new RegExp(`^  ${command} `, 'm'));
});

test('backends says how wasm multiplies; ATTENTION_DEBUGGER_BLAS_THREADS sets OpenBLAS threads, a bad value is named', () => {
  const run = (env: Record<string, string>): string => {
    const r = spawnSync(process.execPath, [join(REPO, 'bin', 'attention-debugger'), 'backends'], {
      encoding: 'utf8',
      env: { ...process.env, ATTENTION_DEBUGGER_BACKEND: '', ...env },
    });
    assert.equal(r.status, 0, r.stderr);
    return r.stdout.split('\n').find((l) => l.startsWith('wasm')) ?? '';
  };
  assert.match(
    run({ ATTENTION_DEBUGGER_BLAS_THREADS: '1' }),
    /^wasm \(matMul: OpenBLAS.*libopenblas\.so\.0, 1 thread \(/,
  );
  assert.match(
    run({ ATTENTION_DEBUGGER_BLAS_THREADS: 'two' }),
    /XNNPACK on wasm.*ATTENTION_DEBUGGER_BLAS_THREADS must be a positive integer, got "two"/,
  );
  assert.match(
    run({ ATTENTION_DEBUGGER_NATIVE: '0' }),
    /XNNPACK on wasm, 1 thread \(native kernels off \(ATTENTION_DEBUGGER_NATIVE=0\)\)/,
  );
});
