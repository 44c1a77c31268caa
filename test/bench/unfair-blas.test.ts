/**
 * The benchmarks refuse an unfair comparison (issue 18): no ratio against PyTorch unless both processes
 * map an optimised BLAS. Here the PyTorch peer is pointed at Debian's reference BLAS with
 * LD_LIBRARY_PATH, and the engine is run without its OpenBLAS (ATTENTION_DEBUGGER_NATIVE=0); each time
 * bench/train-throughput.mjs must exit non-zero, naming the side and the library, before timing a step.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { REPO, cannotRun } from '../helpers';

const PYTHON = process.env.BENCH_PYTHON || '/usr/bin/python3';
const LIB = '/usr/lib/x86_64-linux-gnu';
const temps: string[] = [];
after(() => temps.forEach((d) => rmSync(d, { recursive: true, force: true })));

/**
 * Directories holding Debian's reference libblas.so.3 and liblapack.so.3 (the LAPACK too: OpenBLAS's
 * LAPACK would map OpenBLAS again). Installed (libblas3, liblapack3), or unpacked from their packages:
 * apt's cache, else `apt-get download` (nothing is installed).
 */
function referenceBlas(): string[] {
  const installed = [join(LIB, 'blas'), join(LIB, 'lapack')];
  if (installed.every((d) => existsSync(d))) return installed;
  const dir = mkdtempSync(join(tmpdir(), 'refblas-'));
  temps.push(dir);
  const cache = '/var/cache/apt/archives';
  for (const pkg of ['libblas3', 'liblapack3']) {
    let deb = existsSync(cache) ? readdirSync(cache).find((f) => f.startsWith(`${pkg}_`) && f.endsWith('.deb')) : '';
    let from = cache;
    if (!deb) {
      spawnSync('apt-get', ['download', pkg], { cwd: dir, stdio: 'ignore' });
      deb = readdirSync(dir).find((f) => f.startsWith(`${pkg}_`) && f.endsWith('.deb'));
      from = dir;
    }
    assert.ok(deb, `no ${pkg} package to unpack: apt-get install ${pkg} (or let apt-get download reach a mirror)`);
    assert.equal(spawnSync('dpkg', ['-x', join(from, deb), dir]).status, 0, `dpkg -x ${deb}`);
  }
  return [join(dir, LIB, 'blas'), join(dir, LIB, 'lapack')];
}

function bench(env: Record<string, string>) {
  const t0 = Date.now();
  const r = spawnSync(
    process.execPath,
    ['bench/train-throughput.mjs', '--configs', 'tiny', '--rounds', '1', '--steps', '1', '--warmup', '0'],
    { cwd: REPO, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 120_000 },
  );
  return { ...r, seconds: (Date.now() - t0) / 1e3, out: `${r.stdout}${r.stderr}` };
}

test('the bench refuses a PyTorch peer on the reference BLAS, before timing anything', (t) => {
  if (spawnSync(PYTHON, ['-c', 'import torch'], { stdio: 'ignore' }).status !== 0)
    return cannotRun(t, 'python', `${PYTHON} cannot import torch`);
  const r = bench({ LD_LIBRARY_PATH: referenceBlas().join(':') });
  assert.equal(r.status, 2, r.out);
  assert.match(r.out, /refusing to compare/);
  assert.match(
    r.out,
    /the PyTorch peer \(pid \d+\) has no optimised BLAS mapped: it runs on [^\n]*\/blas\/libblas\.so/,
  );
  assert.match(r.out, /Debian's reference BLAS/);
  assert.match(r.out, /apt-get install libopenblas0-pthread/);
  assert.doesNotMatch(r.out, /the engine \(pid/, 'the engine keeps its OpenBLAS (it dlopens libopenblas.so.0)');
  assert.doesNotMatch(r.out, /round 1|ms\/step|ratio/, 'nothing was timed');
});

test('the bench refuses an engine without its OpenBLAS', (t) => {
  if (spawnSync(PYTHON, ['-c', 'import torch'], { stdio: 'ignore' }).status !== 0)
    return cannotRun(t, 'python', `${PYTHON} cannot import torch`);
  const r = bench({ ATTENTION_DEBUGGER_NATIVE: '0' });
  assert.equal(r.status, 2, r.out);
  assert.match(r.out, /the engine \(pid \d+, backend wasm\) has no optimised BLAS mapped/);
  assert.match(r.out, /XNNPACK/);
  assert.match(r.out, /unset ATTENTION_DEBUGGER_NATIVE=0/);
  assert.doesNotMatch(r.out, /the PyTorch peer/);
  assert.doesNotMatch(r.out, /round 1|ms\/step/, 'nothing was timed');
});
