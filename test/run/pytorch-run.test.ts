/**
 * A run folder written by PyTorch: python/examples/train_reverse.py trains nn.Transformer on the
 * reverse task under `torchrun --nproc_per_node 2` (gloo, CPU) with the RunWriter of
 * python/attention_debugger. The folder must pass the engine's format checks, the checks must
 * find defects planted in a copy, and the engine's attention for the newest checkpoint must equal
 * what PyTorch computed for the same probe when it wrote that checkpoint (its snapshot).
 *
 * Needs Debian's PyTorch (/usr/bin/python3 with torch, or the interpreter ATTENTION_DEBUGGER_PYTHON
 * names); without it the tests fail, unless ATTENTION_DEBUGGER_SKIP_PYTHON=1 says to skip them.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { initBackend } from '../../src/engine/backend';
import { listCheckpoints, loadCheckpoint } from '../../src/engine/checkpoint';
import { readSafetensors, writeSafetensors } from '../../src/engine/checkpoint/safetensors';
import { checkRunFolder } from '../../src/engine/run/checkFolder';
import { REPO } from '../helpers';
import { engineAttention, idsOfLabels, KINDS, maxAbsDiffFlat, pytorchAvailable, TORCHRUN } from './pytorch';

const skip = process.env.ATTENTION_DEBUGGER_SKIP_PYTHON === '1' ? 'ATTENTION_DEBUGGER_SKIP_PYTHON=1' : false;
let work: string;
let run: string;

before(() => {
  if (skip) return;
  const why = pytorchAvailable();
  assert.equal(why, undefined, why);
  work = mkdtempSync(join(tmpdir(), 'pytorch-run-'));
  run = join(work, 'run');
  const [python, ...torchrun] = TORCHRUN;
  const r = spawnSync(
    python!,
    [...torchrun, '--log_dir', join(work, 'logs'), 'python/examples/train_reverse.py', '--out', run],
    {
      cwd: REPO,
      encoding: 'utf8',
      env: { ...process.env, PYTHONPATH: join(REPO, 'python'), OMP_NUM_THREADS: '1' },
      timeout: 10 * 60_000,
    },
  );
  assert.equal(r.status, 0, `torchrun failed:\n${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /trained steps 1\.\.300 on 2 process\(es\)/);
});

after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

test('the folder torchrun wrote passes the format checks', { skip }, () => {
  assert.deepEqual(checkRunFolder(run), []);
  const config = JSON.parse(readFileSync(join(run, 'config.json'), 'utf8'));
  assert.equal(config.writer, 'pytorch');
  assert.equal(config.run_format_version, 2);
  const steps = readFileSync(join(run, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l).step);
  assert.deepEqual(
    steps,
    Array.from({ length: 300 }, (_, i) => i + 1),
  );
  assert.deepEqual(
    listCheckpoints(run).map((c) => c.step),
    [50, 100, 150, 200, 250, 300],
  );
  const cli = spawnSync(process.execPath, [join(REPO, 'bin', 'attention-debugger'), 'check-run', run], {
    encoding: 'utf8',
  });
  assert.equal(cli.status, 0, cli.stdout + cli.stderr);
});

/** A fresh copy of the run to damage. */
function copyRun(name: string): string {
  const dir = join(work, name);
  cpSync(run, dir, { recursive: true });
  return dir;
}

test('planted defects are reported with their file, line and field', { skip }, () => {
  // A torn checkpoint: a model file cut in half, as a writer without temp file and rename would leave it.
  const torn = copyRun('torn');
  const ckpt = join(torn, 'checkpoints', 'step-300.safetensors');
  truncateSync(ckpt, Math.floor(statSync(ckpt).size / 2));
  const tornProblems = checkRunFolder(torn);
  assert.equal(tornProblems.length, 1, JSON.stringify(tornProblems));
  assert.equal(tornProblems[0]!.file, 'checkpoints/step-300.safetensors');
  assert.match(tornProblems[0]!.message, /torn/);

  // A bad JSON line in the middle of metrics.jsonl (line 5), and a torn last line, which is allowed.
  const badLine = copyRun('bad-line');
  const metrics = join(badLine, 'metrics.jsonl');
  const lines = readFileSync(metrics, 'utf8').split('\n');
  lines[4] = '{"step": 5, "lr": 0.001, "loss": 1.';
  writeFileSync(metrics, `${lines.join('\n')}{"step": 301, "lr"`);
  assert.deepEqual(
    checkRunFolder(badLine).map((p) => [p.file, p.line]),
    [['metrics.jsonl', 5]],
  );

  // A wrong tensor shape: the snapshot's cross-attention of pair 0 and the checkpoint's generator bias.
  const shape = copyRun('shape');
  const snap = join(shape, 'snapshots', 'step-300.safetensors');
  const s = readSafetensors(snap);
  const cross = s.tensors.get('cross.0')!; // [L, H, T, S] = [2, 4, 8, 8]
  s.tensors.set('cross.0', { shape: [2, 4, 4, 16], data: cross.data });
  writeSafetensors(snap, s.tensors, s.metadata);
  const model = join(shape, 'checkpoints', 'step-250.safetensors');
  const m = readSafetensors(model);
  m.tensors.set('generator.bias', { shape: [10], data: m.tensors.get('generator.bias')!.data.slice(0, 10) });
  writeSafetensors(model, m.tensors, m.metadata);
  const shapeProblems = checkRunFolder(shape);
  assert.deepEqual(
    shapeProblems.map((p) => [p.file, p.field]),
    [
      ['checkpoints/step-250.safetensors', 'generator.bias'],
      ['snapshots/step-300.safetensors', 'cross.0'],
    ],
  );
  assert.match(shapeProblems[0]!.message, /shape \[10\], config expects \[11\]/);
  assert.match(shapeProblems[1]!.message, /shape \[2,4,4,16\], expected \[2,4,8,8\]/);

  const cli = spawnSync(process.execPath, [join(REPO, 'bin', 'attention-debugger'), 'check-run', shape], {
    encoding: 'utf8',
  });
  assert.equal(cli.status, 1);
  assert.match(cli.stdout, /step-250\.safetensors: generator\.bias: has shape \[10\]/);
  assert.match(cli.stdout, /2 problems/);
});

test(
  "the engine's attention for the newest checkpoint equals PyTorch's when it wrote it (1e-4)",
  { skip },
  async (t) => {
    await initBackend('wasm');
    const newest = listCheckpoints(run).pop()!;
    const snapshot = readSafetensors(join(run, 'snapshots', `step-${newest.step}.safetensors`));
    assert.equal(snapshot.metadata.step, String(newest.step));
    const pairs = JSON.parse(snapshot.metadata.pairs!) as { src: string[]; tgt: string[] }[];
    assert.equal(pairs.length, 2);
    const model = loadCheckpoint(newest.path);
    let worst = 0;
    try {
      for (const [b, pair] of pairs.entries()) {
        const engine = await engineAttention(model, idsOfLabels(pair.src), idsOfLabels(pair.tgt));
        for (const kind of KINDS) {
          const torch = snapshot.tensors.get(`${kind}.${b}`)!;
          assert.deepEqual(engine[kind].shape, torch.shape, `${kind}.${b}: shape`);
          const diff = maxAbsDiffFlat(engine[kind].data, torch.data);
          assert.ok(diff <= 1e-4, `${kind}.${b}: max |engine − PyTorch| = ${diff.toExponential(2)} > 1e-4`);
          worst = Math.max(worst, diff);
        }
      }
      t.diagnostic(
        `step ${newest.step}: max |engine − PyTorch| = ${worst.toExponential(2)} over ${pairs.length} pairs`,
      );
    } finally {
      model.dispose();
    }
  },
);
