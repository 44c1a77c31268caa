/**
 * Each health check fires on something built to trip it, and not on its healthy twin: numbers fed
 * to the monitor, models with a planted broken mask, and a run made to diverge.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../src/engine/backend';
import { loadCheckpoint } from '../../src/engine/checkpoint';
import { taskSpec } from '../../src/engine/data/dataset';
import { paddingMask } from '../../src/engine/model/attention';
import { Transformer } from '../../src/engine/model/transformer';
import { createRun } from '../../src/engine/run/setup';
import { HealthMonitor, THRESHOLDS } from '../../src/engine/telemetry/checks';
import { locateNonFinite } from '../../src/engine/telemetry/nonfinite';
import { maskLeak, paddingLeak } from '../../src/engine/telemetry/probes';
import type { TelemetryRow } from '../../src/protocol/telemetry';
import { startTrainer } from '../../src/engine/train/start';
import { microConfig, scratch } from '../train/helpers';
import { smallConfig } from '../helpers';

before(async () => {
  await initBackend('wasm');
});

const config = smallConfig({ decoder_layers: 2 });

/** A planted bug: the decoder's self-attention sees the future (no causal mask). */
class NoCausalMask extends Transformer {
  protected override targetMask(tgt: tf.Tensor2D): tf.Tensor {
    return paddingMask(tgt, this.config.pad_id);
  }
}
/** A planted bug: the source's padding is not masked (the encoder and cross-attention see it). */
class NoSourcePadding extends Transformer {
  protected override sourceMask(src: tf.Tensor2D): tf.Tensor4D {
    return tf.zeros([src.shape[0], 1, 1, src.shape[1]]);
  }
}

test('nonfinite: a NaN loss or gradient norm is a finding at once', () => {
  const m = new HealthMonitor();
  assert.deepEqual(m.onStep(1, 2.5, 1), []);
  const [f] = m.onStep(2, Number.NaN, 1);
  assert.equal(f?.check, 'nonfinite');
  assert.match(f!.message, /^the loss is NaN: the update was not applied/);
  assert.equal(m.onStep(3, 2, Number.POSITIVE_INFINITY)[0]?.check, 'nonfinite');
});

test('loss spike: above 25× the running median, after the warm-up', () => {
  const m = new HealthMonitor();
  for (let s = 1; s <= THRESHOLDS.spikeWarmup; s++) assert.deepEqual(m.onStep(s, 100, 1), [], 'no spike before');
  for (let s = 51; s <= 60; s++) m.onStep(s, 0.1, 1); // the median of the window is still 100
  const m2 = new HealthMonitor();
  for (let s = 1; s <= 60; s++) m2.onStep(s, 0.1, 1);
  assert.deepEqual(m2.onStep(61, 2.4, 1), [], '24× the median: no spike');
  const [f] = m2.onStep(62, 2.6, 1);
  assert.equal(f?.check, 'loss_spike');
  assert.match(f!.message, /26\.0× the median of the last 61 steps \(0\.1000\)/);
});

/** Telemetry rows of one head with these normalised entropies (and norms). */
function rows(entropy: number[], grad = entropy.map(() => 1), output = entropy.map(() => 1)): TelemetryRow[] {
  return entropy.map((e, i) => ({
    step: (i + 1) * 25,
    pairs: 4,
    heads: ['cross:0.0', 'cross:0.1', 'cross:0.2'],
    stats: { entropy_norm: [e, 0.8, 0.8], grad_norm: [grad[i]!, 1, 1], output_norm: [output[i]!, 1, 1] },
  }));
}

test('entropy collapse: below the floor, or a 90% fall within the window; a slow sharpening is healthy', () => {
  const fire = (entropies: number[]) => {
    const m = new HealthMonitor();
    return rows(entropies)
      .flatMap((r) => m.onTelemetry(r))
      .filter((f) => f.check === 'entropy_collapse');
  };
  // The healthy run's sharpest head: 0.97 to 0.027 over 60 rows (a fall to at worst 29% in 5 rows).
  const slow = Array.from({ length: 60 }, (_, i) => 0.97 * Math.pow(0.027 / 0.97, i / 59));
  assert.deepEqual(fire(slow), []);
  const fast = fire([0.9, 0.85, 0.8, 0.3, 0.07]);
  assert.equal(fast.length, 1);
  assert.equal(fast[0]!.head, 'cross:0.0');
  assert.match(fast[0]!.message, /fell from 0\.900 to 0\.070 within 5 telemetry rows, while the loss did not fall/);
  const floor = fire([0.5, 0.5, 0.004]);
  assert.match(floor[0]!.message, /0\.0040, below 0\.005/);
  // The same head as a sink on EOS (gettext small's encoder_self:0.3 at step 1100: 0.0043, 56% on EOS).
  // A slow slide under the floor (no fast fall): a finding, unless the head is a sink.
  const slide = [0.006, 0.0055, 0.0045];
  assert.match(fire(slide)[0]!.message, /0\.0045, below 0\.005/);
  const m = new HealthMonitor();
  const sinkRows = rows(slide).map((r) => ({ ...r, stats: { ...r.stats, sink_eos: [0.56, 0, 0] } }));
  assert.deepEqual(
    sinkRows.flatMap((r) => m.onTelemetry(r)).filter((f) => f.check === 'entropy_collapse'),
    [],
  );
});

test('entropy collapse: a fast fall while the loss falls is a head specialising; with the loss flat or rising it fires', () => {
  // 25 steps between rows; the loss of each row's steps given per row.
  const run = (lossPerRow: number[]) => {
    const m = new HealthMonitor();
    const found: string[] = [];
    rows([0.9, 0.85, 0.8, 0.3, 0.07]).forEach((r, i) => {
      for (let s = 0; s < 25; s++) m.onStep(i * 25 + s + 1, lossPerRow[i]!, 1);
      found.push(...m.onTelemetry(r).map((f) => `${f.check}@${f.step}`));
    });
    return found;
  };
  // 5.6 → 5.0 (−11%) over the window, as gettext small at step 350: no finding.
  assert.deepEqual(run([5.6, 5.5, 5.3, 5.1, 5.0]), []);
  // −4%: the loss barely moves while the head collapses: a finding.
  assert.deepEqual(run([5.2, 5.2, 5.1, 5.0, 5.0]), ['entropy_collapse@125']);
  // Rising: a finding.
  assert.deepEqual(run([2, 2.5, 3, 4, 6]), ['entropy_collapse@125']);
});

test('dead head: gradient and output norms near zero for 3 rows, against its layer', () => {
  const m = new HealthMonitor();
  const found = rows([0.8, 0.8, 0.8, 0.8], [1, 1e-5, 1e-5, 1e-5], [1, 1e-6, 1e-6, 1e-6]).flatMap((r) =>
    m.onTelemetry(r),
  );
  assert.deepEqual(
    found.map((f) => [f.check, f.step, f.head]),
    [['dead_head', 100, 'cross:0.0']],
  );
  const alive = new HealthMonitor();
  const onlyGrad = rows([0.8, 0.8, 0.8, 0.8], [1e-5, 1e-5, 1e-5, 1e-5]).flatMap((r) => alive.onTelemetry(r));
  assert.deepEqual(onlyGrad, [], 'a head that still writes its output is not dead');
});

test('mask leak: fires on a decoder without its causal mask, names a decoder head; silent on the model', async () => {
  const src = [5, 6, 7, 8, 2];
  const tgt = [1, 8, 7, 6, 5];
  const healthy = new Transformer(config, undefined, 4);
  const broken = new NoCausalMask(config, undefined, 4);
  try {
    assert.deepEqual(await maskLeak(healthy, 10, src, tgt), []);
    const [f] = await maskLeak(broken, 10, src, tgt);
    assert.equal(f?.check, 'mask_leak');
    assert.match(f!.head!, /^decoder_self:0\./);
    assert.match(f!.message, /positions ≤ 2 changed .* when only the target tokens after 2 changed/);
  } finally {
    healthy.dispose();
    broken.dispose();
  }
});

test('padding leak: fires when the source padding is not masked; silent on the model', async () => {
  const src = [
    [5, 6, 7, 2],
    [5, 2],
  ];
  const tgt = [
    [1, 7, 6, 5],
    [1, 5],
  ];
  const healthy = new Transformer(config, undefined, 4);
  const broken = new NoSourcePadding(config, undefined, 4);
  try {
    assert.deepEqual(await paddingLeak(healthy, 3, src, tgt), []);
    const [f] = await paddingLeak(broken, 3, src, tgt);
    assert.equal(f?.check, 'padding_leak');
    assert.match(f!.head!, /^encoder_self:0\./);
    assert.match(f!.message, /query 0 of pair 1 puts .* on padded key 2/);
  } finally {
    healthy.dispose();
    broken.dispose();
  }
});

test('nonfinite: the first head in forward order whose attention is not finite is named', async () => {
  const model = new Transformer(config, undefined, 4);
  const batch = { src: [[5, 6, 7, 2]], tgtIn: [[1, 7, 6, 5]], tgtOut: [[7, 6, 5, 2]] };
  try {
    assert.equal(await locateNonFinite(model, batch), undefined, 'a healthy model is finite everywhere');
    // NaN in W^Q of head 1 of decoder layer 0's self-attention (rows d_k … 2·d_k of in_proj_weight):
    // that head's weights are NaN first; everything after it (cross-attention, layer 1) follows.
    const w = model.params.get('decoder.layers.0.self_attn.in_proj_weight')!;
    const dk = config.d_model / config.heads;
    const rows = tf.reshape(tf.range(0, 3 * config.d_model), [-1, 1]);
    const inHead1 = tf.logicalAnd(tf.greaterEqual(rows, dk), tf.less(rows, 2 * dk));
    w.assign(tf.where(tf.broadcastTo(inHead1, w.shape), tf.fill(w.shape, NaN), w));
    assert.deepEqual(await locateNonFinite(model, batch), { head: 'decoder_self:0.1', where: 'attention weights' });
    // Without a non-finite forward pass, the first head whose gradient norm is not finite.
    const healthy = new Transformer(config, undefined, 4);
    const grads = new Float32Array(10).fill(1);
    grads[7] = Infinity; // kind-major: 2 encoder, 4 decoder self, then cross:0.0 (6), cross:0.1 (7)
    assert.deepEqual(await locateNonFinite(healthy, batch, grads), { head: 'cross:0.1', where: 'gradient' });
    healthy.dispose();
  } finally {
    model.dispose();
  }
});

test('a run whose weights turn infinite pauses at the next step, with finite weights and a breakpoint', async () => {
  const dir = scratch();
  const o = createRun({
    out: join(dir, 'run'),
    data: taskSpec('copy', { train: 200, valid: 8, test: 8 }),
    config: microConfig(dir, { steps: 50, checkpoint_every: 100, snapshot_every: 0 }),
    overrides: {},
  });
  const { trainer } = startTrainer(o, { resume: false });
  try {
    const step = await trainer.train({
      onStep: (row) => {
        if (row.step !== 3) return;
        // What a bad update does: one weight becomes +∞.
        const w = trainer.model.params.get('decoder.layers.0.linear1.weight')!;
        w.assign(tf.fill(w.shape, Number.POSITIVE_INFINITY));
      },
    });
    assert.equal(step, 4, 'the first step after the poisoning pauses');
    assert.equal(trainer.breakpoint?.check, 'nonfinite');
    // The attention is finite (the poisoned layer comes after it); every head's gradient is not.
    assert.equal(trainer.breakpoint?.head, 'encoder_self:0.0');
    assert.match(trainer.breakpoint!.message, /first in this head's gradient/);
    const status = JSON.parse(readFileSync(o.run.statusPath, 'utf8')) as { state: string; step: number };
    assert.deepEqual([status.state, status.step], ['paused', step]);
    const events = o.run.readEvents();
    assert.deepEqual(
      events.filter((e) => e.severity === 'breakpoint').map((e) => [e.check, e.step]),
      [['nonfinite', step]],
    );
    assert.ok(existsSync(o.run.weightsPath(step)), 'a checkpoint at the paused step');
    const model = loadCheckpoint(o.run.weightsPath(step));
    for (const [name, v] of model.params) {
      if (name === 'decoder.layers.0.linear1.weight') continue; // the poisoned one
      const data = (await v.data()) as Float32Array;
      assert.ok(data.every(Number.isFinite), `${name} stayed finite: the NaN update was not applied`);
    }
    model.dispose();
  } finally {
    trainer.dispose();
  }
});

test('dead head: a head whose W^Q, W^K, W^V rows and W^O columns are zero stays dead in training and is found', async () => {
  const dir = scratch();
  const o = createRun({
    out: join(dir, 'run'),
    data: taskSpec('copy', { train: 200, valid: 8, test: 8 }),
    config: microConfig(dir, { steps: 30, checkpoint_every: 100, snapshot_every: 0 }),
    overrides: { telemetry_every: 2, checks: { dead_head: 'break' } },
  });
  const { trainer } = startTrainer(o, { resume: false });
  try {
    // Head 1 of the decoder's cross-attention, d_k = 8: every row of its Q, K, V projections and
    // every column of W^O zeroed. Its output is 0 and so is every gradient into it, so Adam leaves it.
    const prefix = 'decoder.layers.0.multihead_attn';
    const d = trainer.model.config.d_model;
    const dk = d / trainer.model.config.heads;
    const rowsOff = (i: number) => [0, 1, 2].some((p) => i >= p * d + dk && i < p * d + 2 * dk);
    const w = trainer.model.params.get(`${prefix}.in_proj_weight`)!; // [3d, d]
    w.assign(tf.mul(w, tf.tensor2d(Array.from({ length: 3 * d }, (_, i) => Array(d).fill(rowsOff(i) ? 0 : 1)))));
    const b = trainer.model.params.get(`${prefix}.in_proj_bias`)!; // [3d]
    b.assign(tf.mul(b, tf.tensor1d(Array.from({ length: 3 * d }, (_, i) => (rowsOff(i) ? 0 : 1)))));
    const wo = trainer.model.params.get(`${prefix}.out_proj.weight`)!; // [d, d]: columns are the heads' outputs
    const cols = Array.from({ length: d }, (_, j) => (j >= dk && j < 2 * dk ? 0 : 1));
    wo.assign(tf.mul(wo, tf.tensor2d(Array.from({ length: d }, () => cols))));
    const step = await trainer.train({});
    assert.equal(trainer.breakpoint?.check, 'dead_head');
    assert.equal(trainer.breakpoint?.head, 'cross:0.1');
    assert.equal(step, 6, 'found at the third telemetry row (every 2 steps)');
    assert.deepEqual(
      o.run.readEvents().map((e) => [e.check, e.head]),
      [['dead_head', 'cross:0.1']],
      'only that head',
    );
  } finally {
    trainer.dispose();
  }
});

test('loss spike: a generator scaled 1000× after 60 healthy steps spikes the next step’s loss and pauses the run', async () => {
  const dir = scratch();
  const o = createRun({
    out: join(dir, 'run'),
    data: taskSpec('copy', { train: 200, valid: 8, test: 8 }),
    config: microConfig(dir, { steps: 80, checkpoint_every: 100, snapshot_every: 0 }),
    overrides: { checks: { loss_spike: 'break' } },
  });
  const { trainer } = startTrainer(o, { resume: false });
  try {
    const step = await trainer.train({
      onStep: (row) => {
        if (row.step !== 60) return;
        // What a bad update to the output layer does: logits 1000× as confident, mostly wrong.
        const w = trainer.model.params.get('generator.weight')!;
        w.assign(tf.mul(w, 1000));
      },
    });
    assert.equal(step, 61, 'the first step after it pauses');
    assert.equal(trainer.breakpoint?.check, 'loss_spike');
    assert.match(trainer.breakpoint!.message, /× the median of the last 60 steps/);
    assert.ok(existsSync(o.run.weightsPath(step)), 'a checkpoint at the paused step');
  } finally {
    trainer.dispose();
  }
});
