/**
 * bench/equal_time.py is the engine's recipe in PyTorch: started from the engine's own initial weights,
 * with dropout 0 (the one source of randomness left), on the engine run's batch file, it logs the
 * losses, gradient norms, learning rates and validation losses the engine logged for the same steps.
 * Its checkpoint then scores with the engine's evaluate, as bench/equal-time.mjs uses it.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { before, test } from 'node:test';
import { initBackend } from '../../src/engine/backend';
import { saveCheckpoint } from '../../src/engine/checkpoint';
import { readSafetensors } from '../../src/engine/checkpoint/safetensors';
import { taskSpec } from '../../src/engine/data/dataset';
import type { MetricsRow } from '../../src/engine/run/runDir';
import { createRun } from '../../src/engine/run/setup';
import { startTrainer } from '../../src/engine/train/start';
import { cannotRun, REPO } from '../helpers';
import { MICRO_MODEL, MICRO_TRAINING, scratch } from '../train/helpers';

const PYTHON = process.env.BENCH_PYTHON || '/usr/bin/python3';
const STEPS = 12;
const cli = (args: string[]) =>
  spawnSync(process.execPath, [join(REPO, 'bin', 'attention-debugger'), ...args], { cwd: REPO, encoding: 'utf8' });
const metrics = (run: string): MetricsRow[] =>
  readFileSync(join(run, 'metrics.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as MetricsRow);

before(async () => {
  await initBackend('wasm');
});

/** One request to the peer (bench/lib/peer.mjs's protocol): ready, the reply, then its info at end of stdin. */
async function runPeer(request: object): Promise<{ steps: number; exhausted: boolean }> {
  const child = spawn(PYTHON, [join(REPO, 'bench', 'equal_time.py')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines: string[] = [];
  createInterface({ input: child.stdout }).on('line', (l) => lines.push(l));
  child.stdin.end(`${JSON.stringify(request)}\n`);
  const code = await new Promise((resolve) => child.on('exit', resolve));
  assert.equal(code, 0, lines.join('\n'));
  assert.equal(lines.length, 3, lines.join('\n'));
  return JSON.parse(lines[1]!) as { steps: number; exhausted: boolean };
}

test('the PyTorch peer, from the engine’s initial weights without dropout, logs the engine’s numbers', async (t) => {
  if (spawnSync(PYTHON, ['-c', 'import torch'], { stdio: 'ignore' }).status !== 0)
    return cannotRun(t, 'python', `${PYTHON} cannot import torch`);
  const dir = scratch('ad-equal-time-');
  const config = join(dir, 'micro.json');
  writeFileSync(
    config,
    JSON.stringify({
      ...MICRO_MODEL,
      dropout: 0,
      training: { ...MICRO_TRAINING, steps: STEPS, eval_every: 4, snapshot_every: 0, clip_norm: 1 },
    }),
  );
  const engineRun = join(dir, 'engine');
  const opened = createRun({
    out: engineRun,
    data: taskSpec('copy', { train: 60, valid: 16, test: 8 }),
    config,
    overrides: {},
  });
  const { trainer } = startTrainer(opened, { resume: false });
  const init = join(dir, 'init.safetensors');
  await saveCheckpoint(trainer.model, init);
  await trainer.train();
  trainer.dispose();

  const batches = join(dir, 'batches.bin');
  const wrote = cli(['batches', '--run', engineRun, '--steps', String(STEPS), '--out', batches]);
  assert.equal(wrote.status, 0, wrote.stderr);
  const peerRun = join(dir, 'pytorch');
  const reply = await runPeer({ engine_run: engineRun, batches, out: peerRun, minutes: 5, init });
  assert.deepEqual(reply, { ...reply, steps: STEPS, exhausted: false });

  const [engine, peer] = [metrics(engineRun), metrics(peerRun)];
  assert.deepEqual(
    peer.map((r) => r.step),
    engine.map((r) => r.step),
  );
  const close = (a: number | undefined, b: number | undefined, tol: number, what: string): void =>
    assert.ok(
      a !== undefined && b !== undefined && Math.abs(a - b) <= tol * Math.max(1, Math.abs(b)),
      `${what}: ${a} vs ${b}`,
    );
  // Measured: within 6e-7 over the 12 steps (float32 summation order); 1e-4 leaves room for kernels that
  // change it (the engine's own tests hold them to 1e-5 a step), and none for a different recipe.
  for (const [i, e] of engine.entries()) {
    const p = peer[i]!;
    close(p.lr, e.lr, 1e-9, `lr at step ${e.step}`);
    close(p.loss, e.loss, 1e-4, `loss at step ${e.step}`);
    close(p.nll, e.nll, 1e-4, `nll at step ${e.step}`);
    close(p.grad_norm, e.grad_norm, 1e-4, `gradient norm at step ${e.step} (clipped to 1 when above)`);
    assert.equal(p.val_loss === undefined, e.val_loss === undefined, `validation at step ${e.step} on both sides`);
    if (e.val_loss !== undefined) close(p.val_loss, e.val_loss, 1e-4, `val_loss at step ${e.step}`);
  }
  assert.ok(
    engine.some((r) => r.grad_norm! > 1),
    'some step is clipped (clip_norm 1), so clipping is compared too',
  );

  // The peer's run folder is one the engine scores.
  const scored = cli(['evaluate', '--run', peerRun, '--beam', '1', '--backend', 'wasm']);
  assert.equal(scored.status, 0, scored.stderr);
  assert.match(scored.stdout, /^BLEU = /);
  assert.match(scored.stderr, new RegExp(`checkpoints/step-${STEPS}\\.safetensors`));
});

test('the PyTorch peer draws its initial weights from the engine’s distributions', async (t) => {
  if (spawnSync(PYTHON, ['-c', 'import torch'], { stdio: 'ignore' }).status !== 0)
    return cannotRun(t, 'python', `${PYTHON} cannot import torch`);
  const dir = scratch('ad-equal-time-');
  const config = join(dir, 'wide.json');
  // Wide enough that every weight has thousands of draws: d 64, d_ff 256, a vocabulary of 200.
  const model = { ...MICRO_MODEL, d_model: 64, heads: 4, d_ff: 256 };
  writeFileSync(config, JSON.stringify({ ...model, training: { ...MICRO_TRAINING, steps: 1, snapshot_every: 0 } }));
  const engineRun = join(dir, 'engine');
  const opened = createRun({
    out: engineRun,
    data: taskSpec('copy', { vocabSize: 200, train: 20, valid: 4, test: 4 }),
    config,
    overrides: {},
  });
  const { trainer } = startTrainer(opened, { resume: false });
  const init = join(dir, 'init.safetensors');
  await saveCheckpoint(trainer.model, init);
  trainer.dispose();
  const batches = join(dir, 'batches.bin');
  assert.equal(cli(['batches', '--run', engineRun, '--steps', '1', '--out', batches]).status, 0);
  const peerRun = join(dir, 'pytorch');
  assert.equal((await runPeer({ engine_run: engineRun, batches, out: peerRun, minutes: 0 })).steps, 0);

  const engine = readSafetensors(init).tensors;
  const peer = readSafetensors(join(peerRun, 'checkpoints', 'step-0.safetensors')).tensors;
  assert.deepEqual([...peer.keys()].sort(), [...engine.keys()].sort());
  const stats = (x: Float32Array) => {
    const mean = x.reduce((a, b) => a + b, 0) / x.length;
    const std = Math.sqrt(x.reduce((a, b) => a + (b - mean) ** 2, 0) / x.length);
    return { mean, std, max: x.reduce((a, b) => Math.max(a, Math.abs(b)), 0) };
  };
  for (const [name, e] of engine) {
    const p = peer.get(name)!;
    assert.deepEqual(p.shape, e.shape, name);
    const [se, sp] = [stats(e.data), stats(p.data)];
    if (se.std === 0) {
      assert.deepEqual(p.data, e.data, `${name}: constant (zeros or LayerNorm's ones)`);
      continue;
    }
    // Xavier-uniform (W^Q, W^K, W^V each [d, d]) or N(0, d^-0.5): thousands of draws put the spread
    // within a few percent; PyTorch's own in_proj init (fan_out 3d) would be 29% narrower.
    assert.ok(Math.abs(sp.std / se.std - 1) < 0.08, `${name}: std ${sp.std} vs the engine's ${se.std}`);
    assert.ok(Math.abs(sp.mean) < 0.1 * se.std, `${name}: mean ${sp.mean}`);
    if (!name.includes('embed') && name !== 'generator.weight')
      assert.ok(Math.abs(sp.max / se.max - 1) < 0.08, `${name}: uniform bound ${sp.max} vs ${se.max}`);
  }
});
