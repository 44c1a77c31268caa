/**
 * A resume after SIGKILL is exact: two copies of one run, resumed from the same checkpoint, one
 * SIGKILLed mid-training and resumed again, the other left alone, end with the same weights, optimizer
 * state and logged losses, bit for bit (wasm, dropout on, so the per-step dropout seed and the data
 * position are restored too). Both also equal the run trained straight through, never resumed: a
 * resume bug the two copies share (say, Adam's step count off by one) shows there.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { readSafetensors } from '../../src/engine/checkpoint/safetensors';
import { REPO } from '../helpers';
import { microConfig, scratch } from '../train/helpers';

const bin = join(REPO, 'bin', 'attention-debugger');

function train(args: string[]) {
  const child = spawn(process.execPath, [bin, 'train', '--backend', 'wasm', ...args], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  child.stdout.resume();
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, stderr })),
  );
  return { child, done };
}

interface Row {
  step: number;
  lr: number;
  loss: number;
  nll: number;
  grad_norm: number;
  val_loss?: number;
}
const rows = (run: string): Row[] =>
  existsSync(join(run, 'metrics.jsonl'))
    ? readFileSync(join(run, 'metrics.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Row)
    : [];
// What a step computed; time and tokens_per_sec differ between any two runs.
const computed = (r: Row) => [r.step, r.lr, r.loss, r.nll, r.grad_norm, r.val_loss];

async function until(cond: () => boolean, timeoutMs = 120_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Every tensor of two safetensors files, equal bit for bit (names, shapes and Float32 words). */
function sameTensors(a: string, b: string): number {
  const x = readSafetensors(a).tensors;
  const y = readSafetensors(b).tensors;
  assert.deepEqual([...x.keys()].sort(), [...y.keys()].sort());
  for (const [name, t] of x) {
    const u = y.get(name)!;
    assert.deepEqual(u.shape, t.shape, name);
    const words = (d: ArrayLike<number>) => new Uint32Array(Float32Array.from(d).buffer);
    assert.deepEqual(words(u.data), words(t.data), `${name} differs`);
  }
  return x.size;
}

test('SIGKILLed and resumed, a run ends bit-identical to one not killed and to one never resumed', async () => {
  const dir = scratch('ad-kill-');
  const first = join(dir, 'first');
  const config = microConfig(dir, { steps: 20, checkpoint_every: 20, eval_every: 20, snapshot_every: 0 });
  const start = train(['--task', 'copy', '--config', config, '--out', first]);
  const r0 = await start.done;
  assert.equal(r0.code, 0, r0.stderr);
  // Two copies of the run at its step-20 checkpoint.
  const [calm, killed] = [join(dir, 'calm'), join(dir, 'killed')];
  cpSync(first, calm, { recursive: true });
  cpSync(first, killed, { recursive: true });
  const more = ['--resume', '--steps', '100', '--checkpoint-every', '25'];
  const straight = join(dir, 'straight');
  const s = await train(['--task', 'copy', '--config', config, '--out', straight, ...more.slice(1)]).done;
  assert.equal(s.code, 0, s.stderr);

  const a = await train(['--out', calm, ...more]).done;
  assert.equal(a.code, 0, a.stderr);
  assert.match(a.stderr, /resuming .* at step 20:/);

  // SIGKILL once step 60 is logged: past the step-50 checkpoint, before the one at 75.
  const b = train(['--out', killed, ...more]);
  await until(() => rows(killed).length >= 60);
  b.child.kill('SIGKILL');
  const k = await b.done;
  assert.equal(k.signal, 'SIGKILL', 'killed before it finished');
  const logged = rows(killed).length;
  assert.ok(logged < 100, `the kill came at step ${logged}, before the end`);
  const again = await train(['--out', killed, '--resume']).done;
  assert.equal(again.code, 0, again.stderr);
  const from = Number(/resuming .* at step (\d+):/.exec(again.stderr)?.[1]);
  assert.ok(from >= 50 && from <= logged, `resumed at step ${from} after the kill at step ${logged}`);

  // Every step once, with the same computed values; the same weights and Adam state at the end.
  const [ra, rb] = [rows(calm), rows(killed)];
  assert.deepEqual(
    rb.map((r) => r.step),
    Array.from({ length: 100 }, (_, i) => i + 1),
  );
  assert.deepEqual(rb.map(computed), ra.map(computed));
  assert.deepEqual(ra.map(computed), rows(straight).map(computed), 'resumed at 20 = never resumed');
  assert.equal(rb.filter((r) => r.val_loss !== undefined).length, 5, 'validated at 20, 40, 60, 80, 100');
  assert.ok(rb.every((r) => Number.isFinite(r.loss)));
  const ckpt = (run: string, f: string) => join(run, 'checkpoints', f);
  const weights = sameTensors(ckpt(calm, 'step-100.safetensors'), ckpt(killed, 'step-100.safetensors'));
  assert.ok(weights > 10, `${weights} tensors compared`);
  sameTensors(ckpt(calm, 'step-100.optim.safetensors'), ckpt(killed, 'step-100.optim.safetensors'));
  sameTensors(ckpt(straight, 'step-100.safetensors'), ckpt(calm, 'step-100.safetensors'));
  sameTensors(ckpt(straight, 'step-100.optim.safetensors'), ckpt(calm, 'step-100.optim.safetensors'));
});
