/**
 * Forking a run (issue 13): the fork starts from the parent's checkpoint and step, records where
 * it came from, and holds its frozen heads bitwise still for 100 steps and across a resume, while
 * everything else trains; a masked head is the zero-ablated head; a re-initialised head is drawn
 * afresh and nothing else is. The head's weights are indexed here by hand (§3.2.2: rows
 * h·d_k … (h+1)·d_k of W^Q, W^K, W^V and the same columns of W^O), not through the engine's code.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { ablationGates } from '../../src/engine/ablate/gates';
import { initBackend } from '../../src/engine/backend';
import { loadCheckpoint } from '../../src/engine/checkpoint';
import { type NamedTensor, readSafetensors } from '../../src/engine/checkpoint/safetensors';
import { taskSpec } from '../../src/engine/data/dataset';
import type { HeadGate } from '../../src/engine/model/attention';
import type { Transformer } from '../../src/engine/model/transformer';
import { createFork } from '../../src/engine/run/fork';
import { createRun, openRun } from '../../src/engine/run/setup';
import { startTrainer } from '../../src/engine/train/start';
import { microConfig, scratch } from './helpers';

before(async () => {
  await initBackend('wasm');
});

// micro model: d_model 16, 2 heads, so d_k = 8
const D = 16;
const DK = 8;

async function train(opened: ReturnType<typeof openRun>, resume: boolean): Promise<void> {
  const { trainer } = startTrainer(opened, { resume });
  await trainer.train();
  trainer.dispose();
}

/** A parent run: 20 steps, checkpoints at 10 and 20. */
async function parentRun(dir: string): Promise<string> {
  const out = join(dir, 'parent');
  const opened = createRun({
    out,
    data: taskSpec('reverse', { train: 400, valid: 20, test: 20 }),
    config: microConfig(dir, { steps: 20, checkpoint_every: 10, snapshot_every: 0 }),
    overrides: {},
  });
  await train(opened, false);
  return out;
}

const weights = (run: string, step: number): Map<string, NamedTensor> =>
  readSafetensors(join(run, 'checkpoints', `step-${step}.safetensors`)).tensors;

/** Flat indices of head h's weights in one attention, by hand. */
function headIndices(h: number): Record<'in_proj_weight' | 'in_proj_bias' | 'out_proj.weight', number[]> {
  const rows = [0, 1, 2].flatMap((j) => Array.from({ length: DK }, (_, i) => j * D + h * DK + i));
  return {
    in_proj_weight: rows.flatMap((r) => Array.from({ length: D }, (_, c) => r * D + c)),
    in_proj_bias: rows,
    'out_proj.weight': Array.from({ length: D }, (_, r) =>
      Array.from({ length: DK }, (_, c) => r * D + h * DK + c),
    ).flat(),
  };
}

const hashFolder = (dir: string): string => {
  const h = createHash('sha256');
  const walk = (d: string): void => {
    for (const f of readdirSync(d).sort()) {
      const p = join(d, f);
      if (statSync(p).isDirectory()) walk(p);
      else h.update(p).update(readFileSync(p));
    }
  };
  walk(dir);
  return h.digest('hex');
};

test('a fork with a frozen head trains 100 steps and across a resume without changing that head', async () => {
  const dir = scratch('ad-fork-');
  const parent = await parentRun(dir);
  const out = join(dir, 'fork');
  const { step } = createFork({
    parent,
    step: 10,
    out,
    changes: { freeze_heads: ['cross:0.1'], steps: 110, lr_factor: 0.5 },
  });
  assert.equal(step, 10);
  const config = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8'));
  assert.deepEqual(config.fork, {
    parent,
    step: 10,
    changes: { freeze_heads: ['cross:0.1'], steps: 110, lr_factor: 0.5 },
  });
  assert.deepEqual(config.training.freeze_heads, ['cross:0.1']);
  await train(openRun(out), true);
  const rows = openRun(out).run.readMetrics();
  assert.deepEqual(
    rows.map((r) => r.step),
    Array.from({ length: 100 }, (_, i) => i + 11),
    'the fork logs steps 11…110, once each',
  );
  // eq. 3 at step 11 with d_model 16, warmup 4, times the fork's factor 0.5: 0.5 · 16^-0.5 · 11^-0.5
  assert.ok(Math.abs(rows[0]!.lr - 0.5 * 0.25 * 11 ** -0.5) < 1e-9);

  const before10 = weights(out, 10);
  assert.deepEqual(before10, weights(parent, 10), "the fork starts from the parent's weights at step 10");
  await train(openRun(out, { steps: 130 }), true); // resuming the fork keeps the freeze
  for (const end of [110, 130]) {
    const after = weights(out, end);
    const frozen = headIndices(1);
    for (const [part, idx] of Object.entries(frozen)) {
      const name = `decoder.layers.0.multihead_attn.${part}`;
      const [a, b] = [before10.get(name)!.data, after.get(name)!.data];
      assert.ok(
        idx.every((i) => Object.is(a[i], b[i])),
        `${name}: head 1's elements unchanged at ${end}`,
      );
      const idx0 = new Set(idx);
      assert.ok(
        Array.from(a).some((x, i) => !idx0.has(i) && x !== b[i]),
        `${name}: the other head changed`,
      );
    }
    for (const [name, t] of before10)
      if (!name.startsWith('decoder.layers.0.multihead_attn.in_proj') && !name.includes('multihead_attn.out_proj.w'))
        assert.ok(
          t.data.some((x, i) => x !== after.get(name)!.data[i]),
          `${name} trained`,
        );
  }
});

/** The encoder's output for one source sentence (with optional gates), where a head's removal shows first. */
async function memory(model: Transformer, heads?: Record<string, HeadGate[]>): Promise<Float32Array> {
  const src = tf.tensor2d([[5, 6, 7, 8, 2]], undefined, 'int32');
  const { memory: m, srcMask } = model.encodeSource(src, { training: false, ...(heads ? { heads } : {}) });
  const out = (await m.data()) as Float32Array;
  tf.dispose([src, m, srcMask]);
  return out;
}

test('a masked head is the zero-ablated head, and a re-initialised one is drawn afresh', async () => {
  const dir = scratch('ad-fork-');
  const parent = await parentRun(dir);
  const [maskOut, reinitOut] = [join(dir, 'masked'), join(dir, 'reinit')];
  // Newest checkpoint by default; the parent's step budget (20) is not past it, so --steps is needed.
  assert.throws(() => createFork({ parent, out: maskOut, changes: {} }), /--steps: the fork starts at step 20/);
  createFork({ parent, out: maskOut, changes: { mask_heads: ['encoder_self:0.0'], steps: 30 } });
  createFork({ parent, out: reinitOut, changes: { reinit_heads: ['decoder_self:0.1'], steps: 30 } });

  const masked = weights(maskOut, 20).get('encoder.layers.0.self_attn.out_proj.weight')!.data;
  assert.ok(
    headIndices(0)['out_proj.weight'].every((i) => masked[i] === 0),
    'the masked head’s W^O columns are 0',
  );
  const parentModel = loadCheckpoint(join(parent, 'checkpoints', 'step-20.safetensors'));
  const maskedModel = loadCheckpoint(join(maskOut, 'checkpoints', 'step-20.safetensors'));
  const gates = ablationGates(parentModel, { heads: ['encoder_self:0.0'], mode: 'zero' });
  const [ablated, forked, intact] = [
    await memory(parentModel, gates.heads),
    await memory(maskedModel),
    await memory(parentModel),
  ];
  gates.dispose();
  parentModel.dispose();
  maskedModel.dispose();
  assert.ok(
    ablated.every((x, i) => Math.abs(x - forked[i]!) < 1e-5),
    'the masked fork = the zero-ablated parent',
  );
  const moved = Math.max(...intact.map((x, i) => Math.abs(x - forked[i]!)));
  assert.ok(moved > 1e-3, `and differs from the intact parent (by at most ${moved})`);
  await train(openRun(maskOut), true);
  const trained = weights(maskOut, 30).get('encoder.layers.0.self_attn.out_proj.weight')!.data;
  assert.ok(
    headIndices(0)['out_proj.weight'].every((i) => trained[i] === 0),
    'still 0 after 10 steps',
  );

  const reinit = headIndices(1);
  const name = 'decoder.layers.0.self_attn.in_proj_weight';
  const [p, f] = [weights(parent, 20), weights(reinitOut, 20)];
  const [pw, fw] = [p.get(name)!.data, f.get(name)!.data];
  const fresh = new Set(reinit.in_proj_weight);
  const limit = Math.sqrt(6 / (D + D)); // Xavier uniform on each of W^Q, W^K, W^V [d, d]
  assert.ok(reinit.in_proj_weight.every((i) => fw[i] !== pw[i] && Math.abs(fw[i]!) <= limit));
  assert.ok(
    Array.from(pw).every((x, i) => fresh.has(i) || x === fw[i]),
    'nothing else re-initialised',
  );
  const bias = f.get('decoder.layers.0.self_attn.in_proj_bias')!.data;
  assert.ok(reinit.in_proj_bias.every((i) => bias[i] === 0));
  const optim = readSafetensors(join(reinitOut, 'checkpoints', 'step-20.optim.safetensors')).tensors;
  const m = optim.get(`${name}.exp_avg`)!.data;
  assert.ok(reinit.in_proj_weight.every((i) => m[i] === 0) && m.some((x) => x !== 0), 'fresh moments there only');
});

test('a fork that cannot be made writes nothing and leaves its parent as it was', async () => {
  const dir = scratch('ad-fork-');
  const parent = await parentRun(dir);
  const hash = hashFolder(parent);
  const out = join(dir, 'bad');
  const cases: [Parameters<typeof createFork>[0]['changes'], number | undefined, RegExp][] = [
    [{ freeze_heads: ['cross:5.0'], steps: 40 }, undefined, /--freeze-heads: cross:5\.0 does not exist/],
    [{ mask_heads: ['cross'], steps: 40 }, undefined, /--mask-heads: "cross" is not a head id/],
    [{ steps: 40 }, 15, /no checkpoint at step 15; it has steps 10, 20/],
    [{ steps: 40, dropout: 2 }, undefined, /dropout/],
    [{ steps: 40, lr_factor: -1 }, undefined, /lr_factor: expected a positive number/],
  ];
  for (const [changes, step, error] of cases) {
    assert.throws(() => createFork({ parent, out, changes, ...(step !== undefined ? { step } : {}) }), error);
    assert.ok(!existsSync(out), `no fork folder after ${error}`);
  }
  assert.equal(hashFolder(parent), hash);
});
