/**
 * One training step of the engine against PyTorch's (test/fixtures/golden/<case>/step.json, written by
 * make_step_fixture.py): the engine's own trainStep (loss, backward, clipping, Adam) on the
 * case's checkpoint with dropout off, checked on the active backend against
 *   - PyTorch's loss, gradient norm and ∂L/∂θ of every parameter (no clipping);
 *   - the gradient Adam receives with clipping active (c = 0.6‖g‖): PyTorch's gradient × c/(‖g‖ + 1e-6);
 *   - the weights after one Adam step at eq. 3's learning rate from the fixture's prior moments, and
 *     the update they hold (after − before).
 * "Relative": max |a − b| / max(|b|, rms(b)) per tensor, b PyTorch's value: the error relative to each
 * value, or to the tensor's RMS for values near zero (float32 cannot give 1e-4 of a value that is
 * itself a rounding residue). The fixture's tolerance is 1e-4; float32 PyTorch reaches ~4e-6.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { paramsFromTensors, readConfig } from '../../src/engine/checkpoint';
import { readSafetensors } from '../../src/engine/checkpoint/safetensors';
import { namedVariables } from '../../src/engine/model/params';
import { Transformer } from '../../src/engine/model/transformer';
import { Adam, PAPER_ADAM } from '../../src/engine/train/adam';
import { transformerLr } from '../../src/engine/train/schedule';
import { trainStep } from '../../src/engine/train/step';
import { GOLDEN, readJson } from '../helpers';

export interface StepFixture {
  src: number[][];
  tgt_in: number[][];
  tgt_out: number[][];
  label_smoothing: number;
  loss: number;
  grad_norm: number;
  grads: Record<string, number[]>;
  clip_norm: number;
  schedule: { step: number; warmup_steps: number; factor: number; d_model: number };
  lr: number;
  adam: { beta1: number; beta2: number; epsilon: number; prior_step: number; m_scale: number; v_scale: number };
  after: Record<string, number[]>;
  shapes: Record<string, number[]>;
  tolerance: number;
}

export const STEP_CASES = readdirSync(GOLDEN).sort();

export function readStepFixture(name: string): StepFixture {
  return readJson<StepFixture>(join(GOLDEN, name, 'step.json'));
}

/** max |a − b| / max(|b|, rms(b)) (b the reference); |a − b| alone when b is all zero. */
export function relativeError(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assert.equal(a.length, b.length, 'lengths differ');
  let sq = 0;
  for (let i = 0; i < b.length; i++) sq += b[i] * b[i];
  const rms = Math.sqrt(sq / b.length);
  let worst = 0;
  for (let i = 0; i < b.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    worst = Math.max(worst, rms > 0 ? d / Math.max(Math.abs(b[i]), rms) : d);
  }
  return worst;
}

/** The prior Adam moments of the fixture: float32 of m_scale·sin(0.5 + 0.61k), v_scale·(1.1 + sin(1.3 + 0.37k)). */
function priorMoments(f: StepFixture): Map<string, { shape: number[]; data: Float32Array }> {
  const out = new Map<string, { shape: number[]; data: Float32Array }>();
  for (const [name, shape] of Object.entries(f.shapes)) {
    const size = shape.reduce((a, b) => a * b, 1);
    const m = new Float32Array(size);
    const v = new Float32Array(size);
    for (let k = 0; k < size; k++) {
      m[k] = f.adam.m_scale * Math.sin(0.5 + 0.61 * k);
      v[k] = f.adam.v_scale * (1.1 + Math.sin(1.3 + 0.37 * k));
    }
    out.set(`${name}.exp_avg`, { shape, data: m });
    out.set(`${name}.exp_avg_sq`, { shape, data: v });
  }
  return out;
}

/** Adam that keeps a copy of the gradients trainStep hands it (after clipping), and applies them or not. */
export class RecordingAdam extends Adam {
  readonly seen = new Map<string, tf.Tensor>(); // by tfjs variable name

  constructor(private readonly update: boolean) {
    super();
  }

  /** Records each gradient as the update takes it: times the clipping factor `scale` where given. */
  override apply(vars: tf.Variable[], grads: tf.NamedTensorMap, lr: number, ok?: tf.Tensor, scale?: tf.Tensor): void {
    for (const v of vars) {
      const g = grads[v.name]!;
      this.seen.set(v.name, tf.keep(scale ? tf.mul(g, scale) : tf.clone(g)));
    }
    if (this.update) super.apply(vars, grads, lr, ok, scale);
  }

  /** The recorded gradients by parameter name; disposes them. */
  async take(named: [string, tf.Variable][]): Promise<Map<string, Float32Array>> {
    const out = new Map<string, Float32Array>();
    for (const [name, v] of named) {
      const g = this.seen.get(v.name);
      assert.ok(g, `no gradient for ${name}`);
      out.set(name, (await g.data()) as Float32Array);
    }
    tf.dispose([...this.seen.values()]);
    this.seen.clear();
    return out;
  }
}

/** The worst relative error over the parameters, and where. */
function worst(
  got: Map<string, ArrayLike<number>>,
  want: (name: string) => ArrayLike<number>,
): { error: number; at: string } {
  let r = { error: 0, at: '' };
  for (const [name, a] of got) {
    const e = relativeError(a, want(name));
    if (!(e <= r.error)) r = { error: e, at: name }; // NaN counts as the worst
  }
  return r;
}

/** The case's checkpoint with dropout 0 (the fixture is deterministic), and its weights as loaded. */
export function loadWithoutDropout(name: string): { model: Transformer; before: Map<string, Float32Array> } {
  const dir = join(GOLDEN, name);
  const config = { ...readConfig(join(dir, 'config.json')), dropout: 0 };
  const { tensors } = readSafetensors(join(dir, 'model.safetensors'));
  const model = new Transformer(config, paramsFromTensors(config, tensors, dir));
  return { model, before: new Map([...tensors].map(([n, t]) => [n, Float32Array.from(t.data)])) };
}

/**
 * Runs the case's step on the active backend and checks every value against PyTorch's; fails with
 * every check that missed, else returns the worst errors.
 */
export async function checkStepAgainstPytorch(name: string): Promise<string> {
  const f = readStepFixture(name);
  const tol = f.tolerance;
  const batch = { src: f.src, tgtIn: f.tgt_in, tgtOut: f.tgt_out };
  const { model, before } = loadWithoutDropout(name);
  const named = namedVariables(model.params);
  const misses: string[] = [];
  const check = (ok: boolean, what: string) => ok || misses.push(what);
  const e = (x: { error: number; at: string }) => `relative error ${x.error.toExponential(2)} (at ${x.at})`;
  try {
    assert.deepEqual(named.map(([n]) => n).sort(), Object.keys(f.grads).sort(), 'the parameters PyTorch has');
    // 1. Loss and gradients, no clipping (the spy records them and leaves the weights).
    const probe = new RecordingAdam(false);
    const r = await trainStep(model, probe, batch, { lr: f.lr, labelSmoothing: f.label_smoothing, clipNorm: 0 });
    const g = worst(await probe.take(named), (n) => f.grads[n]);
    check(g.error <= tol, `∂L/∂θ: ${e(g)}`);
    check(Math.abs(r.loss - f.loss) <= tol * f.loss, `loss ${r.loss} vs PyTorch ${f.loss}`);
    check(Math.abs(r.gradNorm - f.grad_norm) <= tol * f.grad_norm, `‖g‖ ${r.gradNorm} vs PyTorch ${f.grad_norm}`);

    // 2. Clipping active and one Adam step at eq. 3's rate, from the fixture's moments.
    assert.ok(f.clip_norm < f.grad_norm, 'the fixture clips');
    const s = f.schedule;
    const lr = transformerLr(s.step, { dModel: s.d_model, warmupSteps: s.warmup_steps, factor: s.factor });
    check(Math.abs(lr - f.lr) <= 1e-12 * f.lr, `eq. 3 lr ${lr} vs ${f.lr}`);
    const adam = new RecordingAdam(true);
    check(
      PAPER_ADAM.beta1 === f.adam.beta1 && PAPER_ADAM.beta2 === f.adam.beta2 && PAPER_ADAM.epsilon === f.adam.epsilon,
      `Adam's β1, β2, ε ${JSON.stringify(PAPER_ADAM)} vs PyTorch's ${JSON.stringify(f.adam)}`,
    );
    adam.restore(named, f.adam.prior_step, priorMoments(f), 'step.json');
    const r2 = await trainStep(model, adam, batch, {
      lr, // the engine's eq. 3
      labelSmoothing: f.label_smoothing,
      clipNorm: f.clip_norm,
    });
    const k = Math.min(1, f.clip_norm / (f.grad_norm + 1e-6)); // torch's clip_grad_norm_
    const c = worst(await adam.take(named), (n) => f.grads[n].map((x) => x * k));
    check(c.error <= tol, `clipped gradient: ${e(c)}`);
    check(adam.step === s.step && r2.applied, `the update is step ${adam.step} (applied: ${r2.applied})`);
    const after = new Map<string, Float32Array>();
    for (const [n, v] of named) after.set(n, (await v.data()) as Float32Array);
    const w = worst(after, (n) => f.after[n]);
    check(w.error <= tol, `weights after the step: ${e(w)}`);
    const delta = (n: string, a: ArrayLike<number>) => Array.from(a, (x, i) => x - before.get(n)![i]);
    const moved = new Map([...after].map(([n, a]) => [n, delta(n, a)]));
    const u = worst(moved, (n) => delta(n, f.after[n]));
    check(u.error <= tol, `update (after − before): ${e(u)}`);
    adam.dispose();
    assert.deepEqual(misses, [], `${name} differs from PyTorch`);
    const short = (x: { error: number }) => x.error.toExponential(1);
    return `relative error: ∂L/∂θ ${short(g)}, clipped ${short(c)}, weights ${short(w)}, update ${short(u)}`;
  } finally {
    model.dispose();
  }
}
