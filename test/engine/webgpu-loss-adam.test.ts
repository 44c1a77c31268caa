/**
 * The fused training kernels on webgpu (backend/webgpu/loss.ts and adamUpdate.ts; Dawn on lavapipe
 * here): SMOOTHED_CROSS_ENTROPY's rowLoss, rowNll and gradient equal the tfjs ops' (train/loss.ts's
 * fallback, written out here) and the native wasm kernel's, with pad rows, ε 0.1 and 0, rows wider
 * than a workgroup and logits of ±80, and the same bits written over the logits (consumeLogits,
 * as a training step asks); smoothedLossFromLogits gives the same loss, nll and gradient
 * with the kernel as without it. ADAM_UPDATE's steps equal adam.ts's tfjs ops (the kernel
 * unregistered), the formula in float64 and wasm's native kernel, and a gated step that is not ok
 * changes nothing. Neither kernel leaves a tensor or a buffer behind, and two trainSteps on webgpu
 * (both kernels reached) give cpu's losses, weights and moments.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { ADAM_UPDATE, hasFusedKernel, SMOOTHED_CROSS_ENTROPY } from '../../src/engine/backend/fusedKernels';
import { registerWebgpuAdam } from '../../src/engine/backend/webgpu/adamUpdate';
import { registerWebgpuLoss } from '../../src/engine/backend/webgpu/loss';
import { namedVariables } from '../../src/engine/model/params';
import { Transformer } from '../../src/engine/model/transformer';
import { Adam, PAPER_ADAM } from '../../src/engine/train/adam';
import { smoothedLossFromLogits } from '../../src/engine/train/loss';
import { trainStep, type StepOptions } from '../../src/engine/train/step';
import { smallConfig, TOY_BATCH } from '../helpers';
import {
  leakFree,
  onBackend,
  recordingKernels,
  snapshot,
  useWebgpu,
  worstByName,
  worstRelative,
} from './kernelHelpers';

/** Runs f with `name` unregistered on webgpu (adam.ts and loss.ts then take their tfjs ops), then registers it again. */
async function withoutKernel<T>(name: string, f: () => Promise<T>): Promise<T> {
  tf.unregisterKernel(name, 'webgpu');
  try {
    return await f();
  } finally {
    registerWebgpuLoss();
    registerWebgpuAdam();
  }
}

/** Values in [−scale, scale) from a small LCG: repeatable, no symmetry. */
function values(n: number, seed: number, scale = 1): Float32Array {
  let x = seed >>> 0;
  return Float32Array.from({ length: n }, () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return ((x / 2 ** 32) * 2 - 1) * scale;
  });
}

/** §5.4's q as train/loss.ts makes it: confidence, spread, H(q); scale = 1/tokens. */
function smoothing(v: number, eps: number, padId: number, tokens: number) {
  const confidence = 1 - eps;
  const spread = eps > 0 ? eps / (v - 2) : 0;
  const entropy = -(confidence > 0 ? confidence * Math.log(confidence) : 0) - (spread > 0 ? eps * Math.log(spread) : 0);
  return { padId, confidence, spread, entropy, scale: 1 / tokens };
}

interface LossCase {
  n: number;
  v: number;
  eps: number;
  /** Logits in [−range, range). */
  range: number;
  padId: number;
  seed: number;
}

/** Its logits and targets: rows 1 and n − 1 (and every fifth) are padding, the others a class ≠ pad. */
function lossInputs(c: LossCase) {
  const logits = values(c.n * c.v, c.seed, c.range);
  const targets = Int32Array.from({ length: c.n }, (_, i) =>
    i === 1 || i === c.n - 1 || i % 5 === 4 ? c.padId : (c.padId + 1 + ((i * 7919) % (c.v - 1))) % c.v,
  );
  return { logits, targets, tokens: targets.filter((t) => t !== c.padId).length };
}

/** The values of the tensors `make` returns (in a tidy scope), read without blocking, then disposed. */
async function read(make: () => tf.Tensor[]): Promise<Float32Array[]> {
  const ts = tf.tidy(make);
  const out = (await Promise.all(ts.map((x) => x.data()))) as Float32Array[];
  tf.dispose(ts);
  return out;
}

/**
 * The kernel's three outputs (rowLoss, rowNll, grad) on the active backend; with `consume` it may
 * write grad over the logits (consumeLogits), which `inPlace` then tells.
 */
function kernelOutputs(c: LossCase, consume = false, inPlace?: (yes: boolean) => void): Promise<Float32Array[]> {
  const { logits, targets, tokens } = lossInputs(c);
  const inputs = () => ({ logits: tf.tensor2d(logits, [c.n, c.v]), targets: tf.tensor1d(targets, 'int32') });
  const attrs = { ...smoothing(c.v, c.eps, c.padId, tokens), consumeLogits: consume } as unknown as tf.NamedAttrMap;
  return read(() => {
    const given = inputs();
    const out = tf.engine().runKernel(SMOOTHED_CROSS_ENTROPY, given, attrs) as tf.Tensor[];
    inPlace?.(out[2]!.dataId === given.logits.dataId);
    return out;
  });
}

/** The same three with tfjs ops from the definition (train/loss.ts smoothedCrossEntropyOps). */
function opsOutputs(c: LossCase): Promise<Float32Array[]> {
  const { logits, targets, tokens } = lossInputs(c);
  const { confidence, spread, entropy, scale } = smoothing(c.v, c.eps, c.padId, tokens);
  return read(() => {
    const t = tf.tensor1d(targets, 'int32');
    const keep = tf.cast(tf.notEqual(t, c.padId), 'float32'); // [N]
    const logProbs = tf.logSoftmax(tf.tensor2d(logits, [c.n, c.v])); // [N, V]
    const target = tf.oneHot(t, c.v, 1, 0, 'float32'); // [N, V]
    const notPad = tf.oneHot(tf.tensor1d([c.padId], 'int32'), c.v, 0, 1, 'float32'); // [1, V]
    const q = tf.add(tf.mul(notPad, spread), tf.mul(target, confidence - spread)); // [N, V]
    return [
      tf.mul(tf.sub(tf.neg(tf.sum(tf.mul(q, logProbs), 1)), entropy), keep),
      tf.mul(tf.neg(tf.sum(tf.mul(target, logProbs), 1)), keep),
      tf.mul(tf.sub(tf.exp(logProbs), q), tf.mul(tf.expandDims(keep, 1), scale)),
    ];
  });
}

const LOSS_CASES: LossCase[] = [
  { n: 9, v: 37, eps: 0.1, range: 3, padId: 0, seed: 1 }, // V below a workgroup
  { n: 6, v: 1000, eps: 0.1, range: 3, padId: 0, seed: 2 },
  { n: 6, v: 1000, eps: 0, range: 3, padId: 0, seed: 3 },
  { n: 5, v: 1000, eps: 0.1, range: 80, padId: 3, seed: 4 }, // large logits, pad not 0
  { n: 3, v: 37000, eps: 0.1, range: 5, padId: 0, seed: 5 },
  { n: 3, v: 37000, eps: 0, range: 80, padId: 0, seed: 6 },
];
const OUTPUTS = ['rowLoss', 'rowNll', 'grad'];

test('webgpu SMOOTHED_CROSS_ENTROPY: rowLoss, rowNll and grad equal the tfjs ops’ and the native wasm kernel’s, to 1e-5', async (t) => {
  if (!(await useWebgpu(t, [SMOOTHED_CROSS_ENTROPY, ADAM_UPDATE]))) return;
  for (const c of LOSS_CASES) {
    const what = `N ${c.n}, V ${c.v}, ε ${c.eps}, logits ±${c.range}, pad ${c.padId}`;
    const got = await kernelOutputs(c);
    const want = await opsOutputs(c);
    const wasm = await onBackend('wasm', () => kernelOutputs(c));
    got.forEach((x, k) => {
      for (const [whose, b] of [
        ['the tfjs ops’', want[k]!],
        ['wasm’s', wasm[k]!],
      ] as const) {
        const e = worstRelative([x], [b]);
        assert.ok(e <= 1e-5, `${what}: ${OUTPUTS[k]} differs from ${whose} by ${e} (relative)`);
      }
    });
    // Written over the logits (a training step's consumeLogits): the same bits, in the logits' buffer.
    let inPlace = false;
    const over = await kernelOutputs(c, true, (yes) => (inPlace = yes));
    assert.ok(inPlace, `${what}: consumeLogits wrote the gradient into a new buffer`);
    over.forEach((x, k) => assert.deepEqual(x, got[k], `${what}: ${OUTPUTS[k]} over the logits differs`));
    // Pad rows: exactly 0 loss, nll and gradient.
    const { targets } = lossInputs(c);
    targets.forEach((target, i) => {
      if (target !== c.padId) return;
      assert.ok(got[0]![i] === 0 && got[1]![i] === 0, `${what}: pad row ${i} has a loss`);
      assert.ok(
        got[2]!.subarray(i * c.v, (i + 1) * c.v).every((g) => g === 0),
        `${what}: pad row ${i} has a gradient`,
      );
    });
  }
});

test('webgpu smoothedLossFromLogits: the same loss, nll and gradient with the kernel as with its tfjs fallback', async (t) => {
  if (!(await useWebgpu(t, [SMOOTHED_CROSS_ENTROPY, ADAM_UPDATE]))) return;
  for (const c of [LOSS_CASES[1]!, LOSS_CASES[3]!]) {
    const { logits, targets, tokens } = lossInputs(c);
    const run = async () => {
      const x = tf.tensor2d(logits, [c.n, c.v]);
      const tt = tf.tensor1d(targets, 'int32');
      let nll: tf.Scalar | undefined;
      const { value, grad } = tf.valueAndGrad((xi: tf.Tensor) => {
        const r = smoothedLossFromLogits(xi as tf.Tensor2D, tt, c.padId, c.eps, tokens);
        nll = r.nll;
        return r.loss;
      })(x);
      const out = [await value.data(), await nll!.data(), await grad.data()] as Float32Array[];
      tf.dispose([x, tt, value, grad, nll!]);
      return out;
    };
    const fused = await run();
    const plain = await withoutKernel(SMOOTHED_CROSS_ENTROPY, async () => {
      assert.equal(hasFusedKernel(SMOOTHED_CROSS_ENTROPY), false);
      return run();
    });
    ['loss', 'nll', 'gradient'].forEach((name, k) => {
      const diff = worstRelative([fused[k]!], [plain[k]!]);
      assert.ok(diff <= 1e-5, `V ${c.v}, logits ±${c.range}: ${name} differs from the fallback's by ${diff}`);
    });
  }
});

const ADAM_SHAPES = [[37, 5], [1000], [3]];
const ADAM_STEPS = 4;
const LRS = [1e-3, 5e-4, 2e-3, 7e-4];
/** Parameter i's values before the first step. */
const initialParameter = (i: number) =>
  values(
    ADAM_SHAPES[i]!.reduce((a, b) => a * b, 1),
    40 + i,
  );

/**
 * Adam's parameters and moments after `steps` steps of fixed gradients on the active backend (the
 * last step gated by ok = `gateLast` when given), as [p0, p1, p2, m0, v0, m1, v1, m2, v2].
 */
async function adamRun(steps = ADAM_STEPS, gateLast?: boolean): Promise<Float32Array[]> {
  const vars = ADAM_SHAPES.map((s, i) =>
    tf.tidy(() => tf.variable(tf.tensor(initialParameter(i), s), true, `adamTest${i}_${Math.random()}`)),
  );
  const adam = new Adam();
  for (let step = 0; step < steps; step++) {
    const grads: tf.NamedTensorMap = {};
    vars.forEach((p, i) => (grads[p.name] = tf.tensor(values(p.size, 100 * step + i, 10 ** -i), p.shape)));
    const ok = gateLast !== undefined && step === steps - 1 ? tf.scalar(gateLast) : undefined;
    adam.apply(vars, grads, LRS[step]!, ok);
    tf.dispose([...Object.values(grads), ...(ok ? [ok] : [])]);
  }
  const state = await adam.state(vars.map((p, i) => [`p${i}`, p] as [string, tf.Variable]));
  const out = [
    ...(await Promise.all(vars.map((p) => p.data() as Promise<Float32Array>))),
    ...[...state.values()].map((s) => s.data),
  ];
  adam.dispose();
  tf.dispose(vars);
  return out;
}

/** The same steps in float64 from adam.ts's formula (§5.3, PyTorch's bias correction), ungated. */
function adamFormula(): Float64Array[] {
  const { beta1, beta2, epsilon } = PAPER_ADAM;
  const ps = ADAM_SHAPES.map((_, i) => Float64Array.from(initialParameter(i)));
  const ms = ps.map((p) => new Float64Array(p.length));
  const vs = ps.map((p) => new Float64Array(p.length));
  for (let step = 0; step < ADAM_STEPS; step++) {
    const [c1, c2] = [1 - beta1 ** (step + 1), 1 - beta2 ** (step + 1)];
    ps.forEach((p, i) => {
      const g = values(p.length, 100 * step + i, 10 ** -i);
      for (let k = 0; k < p.length; k++) {
        ms[i]![k] = beta1 * ms[i]![k]! + (1 - beta1) * g[k]!;
        vs[i]![k] = beta2 * vs[i]![k]! + (1 - beta2) * g[k]! * g[k]!;
        p[k] -= (LRS[step]! * (ms[i]![k]! / c1)) / (Math.sqrt(vs[i]![k]! / c2) + epsilon);
      }
    });
  }
  return [...ps, ...ms.flatMap((m, i) => [m, vs[i]!])];
}

test('webgpu ADAM_UPDATE: four steps equal adam.ts’s tfjs ops, the formula in float64 and the native wasm kernel, to 1e-6', async (t) => {
  if (!(await useWebgpu(t, [SMOOTHED_CROSS_ENTROPY, ADAM_UPDATE]))) return;
  const fused = await adamRun();
  const plain = await withoutKernel(ADAM_UPDATE, async () => {
    assert.equal(hasFusedKernel(ADAM_UPDATE), false);
    return adamRun();
  });
  const wasm = await onBackend('wasm', async () => {
    assert.ok(hasFusedKernel(ADAM_UPDATE), 'wasm runs the native kernel');
    return adamRun();
  });
  // state() lists p0.exp_avg, p0.exp_avg_sq, p1…: the formula's order.
  for (const [what, want] of [
    ['adam.ts’s tfjs ops', plain],
    ['the float64 formula', adamFormula()],
    ['wasm’s native kernel', wasm],
  ] as const) {
    const e = worstRelative(fused, want);
    assert.ok(e <= 1e-6, `parameters and moments differ from ${what} by ${e}`);
  }
});

test('webgpu ADAM_UPDATE gated: a last step that is not ok leaves every parameter and moment as the step before left it; an ok one is the ungated step', async (t) => {
  if (!(await useWebgpu(t, [SMOOTHED_CROSS_ENTROPY, ADAM_UPDATE]))) return;
  const same = (a: Float32Array[], b: Float32Array[]) => a.every((x, i) => x.every((y, k) => Object.is(y, b[i]![k])));
  assert.ok(same(await adamRun(ADAM_STEPS, true), await adamRun()), 'a gated step that is ok is the ungated step');
  assert.ok(same(await adamRun(ADAM_STEPS, false), await adamRun(ADAM_STEPS - 1)), 'a step not ok changed something');
});

test('webgpu SMOOTHED_CROSS_ENTROPY and ADAM_UPDATE leave no tensor and no webgpu buffer behind', async (t) => {
  if (!(await useWebgpu(t, [SMOOTHED_CROSS_ENTROPY, ADAM_UPDATE]))) return;
  await kernelOutputs(LOSS_CASES[1]!); // pipelines compiled and uniform buffers made before counting
  await leakFree('SMOOTHED_CROSS_ENTROPY', async () => void (await kernelOutputs(LOSS_CASES[1]!)));
  await kernelOutputs(LOSS_CASES[1]!, true);
  await leakFree(
    'SMOOTHED_CROSS_ENTROPY over its logits',
    async () => void (await kernelOutputs(LOSS_CASES[1]!, true)),
  );
  await leakFree('smoothedLossFromLogits and its gradient', async () => {
    const { logits, targets, tokens } = lossInputs(LOSS_CASES[0]!);
    const [x, tt] = [tf.tensor2d(logits, [9, 37]), tf.tensor1d(targets, 'int32')];
    const { value, grad } = tf.valueAndGrad((xi: tf.Tensor) => {
      const r = smoothedLossFromLogits(xi as tf.Tensor2D, tt, 0, 0.1, tokens);
      r.nll.dispose();
      return r.loss;
    })(x);
    await grad.data();
    tf.dispose([x, tt, value, grad]);
  });
  await leakFree('ADAM_UPDATE (Adam.apply, gated and not)', async () => {
    await adamRun();
    await adamRun(ADAM_STEPS, false);
  });
});

const stepConfig = smallConfig({ d_model: 8, d_ff: 16, src_vocab: 300, tgt_vocab: 300 }); // a row wider than a workgroup
const stepOpts: StepOptions = { lr: 1e-3, labelSmoothing: 0.1, clipNorm: 0.5 };

test('webgpu trainStep on both kernels: two steps give cpu’s losses, weights and Adam moments to 1e-4', async (t) => {
  const run = async () => {
    const model = new Transformer(stepConfig, undefined, 5);
    const adam = new Adam();
    const first = await trainStep(model, adam, TOY_BATCH, stepOpts);
    const second = await trainStep(model, adam, TOY_BATCH, stepOpts);
    const after = await snapshot(model, adam);
    const parameters = namedVariables(model.params).length;
    model.dispose();
    adam.dispose();
    return { first, second, after, t: adam.step, parameters };
  };
  if (!(await useWebgpu(t, [SMOOTHED_CROSS_ENTROPY, ADAM_UPDATE]))) return;
  const want = await onBackend('cpu', run);
  const { inputs, out: got } = await recordingKernels([SMOOTHED_CROSS_ENTROPY, ADAM_UPDATE], run);
  const calls = [...inputs.values()].map((c) => c.length);
  assert.deepEqual(calls, [2, 2 * got.parameters], 'one loss kernel a step, one Adam kernel a parameter a step');
  assert.ok(got.first.applied && got.second.applied);
  assert.equal(got.t, 2);
  for (const k of ['first', 'second'] as const) {
    assert.ok(Math.abs(got[k].loss - want[k].loss) <= 1e-4 * want[k].loss, `${k} loss ${got[k].loss}, ${want[k].loss}`);
    assert.ok(Math.abs(got[k].nll - want[k].nll) <= 1e-4 * want[k].nll, `${k} nll ${got[k].nll}, ${want[k].nll}`);
  }
  const w = worstByName(got.after, want.after, stepConfig.d_model);
  assert.ok(w.error <= 1e-4, `${w.at}: relative error ${w.error}`);
});
