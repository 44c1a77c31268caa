/**
 * §5.4's label-smoothed loss from the logits on webgpu (SMOOTHED_CROSS_ENTROPY, as native/ops.c
 * smoothedXent does it on wasm), so that train/loss.ts's loss and its gradient are four dispatches
 * instead of tfjs's ~15 passes over [N, V]:
 * 1. one workgroup per row: the row max m, Σ e^(l − m) and Σ (l − m), reduced in workgroup memory,
 *    then the row's log-sum-exp, KL(q ‖ p) and −log p(target) → stats [N, 4];
 * 2. rowLoss [N] and rowNll [N] read out of the stats (one thread per row each);
 * 3. the gradient row (softmax − q) · scale, one thread per element, from the row's m and log Σ,
 *    written over the logits where the caller gives them up (consumeLogits).
 * q is `confidence` at the target, `spread` at every other non-pad class and 0 at the pad column.
 * A row whose target is padId (or outside [0, V), as in ops.c) has 0 loss, 0 nll and a 0 gradient row.
 */
import type * as tf from '@tensorflow/tfjs-core';
import { SCALE_INTO, SMOOTHED_CROSS_ENTROPY } from '../fusedKernels';
import { addKernel, type KernelFunc, product } from '../kernels';
import { disposeAll, perElement, REDUCE, runProgram, type Uniform, type WebgpuBackend } from './program';

/** Threads per row in the reduction (V is thousands of classes). */
const ROW_WORKGROUP = 256;

/** The stats' columns per row: m, log Σ e^(l − m), the row's loss, its nll. */
const STATS = 4;
const [LOSS_COLUMN, NLL_COLUMN] = [2, 3];

interface SmoothingAttrs {
  padId: number;
  confidence: number;
  spread: number;
  entropy: number;
  scale: number;
  /** The caller gives up the logits: the gradient is written over them (no second [N, V] buffer). */
  consumeLogits?: boolean;
}

/**
 * WGSL shared by the programs: the row's target when its loss counts, else −1 (a pad target, one
 * outside [0, V), or a row past N in a dispatch that tfjs folded into y and z).
 */
const ROW_TARGET = `
  fn rowTarget(i : i32) -> i32 {
    if (i >= uniforms.rows) {
      return -1;
    }
    let t = targets[i];
    return select(-1, t, t != uniforms.pad && t >= 0 && t < uniforms.v);
  }`;

/** logits [N, V] float32, targets [N] int32 → rowLoss [N], rowNll [N], grad [N, V]; attrs as train/loss.ts passes them. */
const smoothedCrossEntropyKernel: KernelFunc = ({ inputs, backend: be, attrs }) => {
  const { logits, targets } = inputs as { logits: tf.TensorInfo; targets: tf.TensorInfo };
  const a = attrs as unknown as SmoothingAttrs;
  const backend = be as WebgpuBackend;
  const [n, v] = logits.shape as [number, number];
  const rowUniforms: Uniform[] = [
    { name: 'rows', type: 'i32', value: n },
    { name: 'v', type: 'i32', value: v },
    { name: 'pad', type: 'i32', value: a.padId },
  ];
  // Per row [m, log Σ e^(l − m), loss, nll]: [N, 4]
  const stats = runProgram(backend, {
    key: 'xent_stats',
    inputs: { logits, targets },
    outputShape: [n, STATS],
    workgroup: ROW_WORKGROUP,
    workgroups: n,
    uniforms: [
      ...rowUniforms,
      { name: 'confidence', type: 'f32', value: a.confidence },
      { name: 'spread', type: 'f32', value: a.spread },
      { name: 'entropy', type: 'f32', value: a.entropy },
    ],
    prelude: `${REDUCE}
      ${ROW_TARGET}`,
    main: `
      let tid = i32(localIndex);
      let i = index / WG;
      let t = rowTarget(i);
      let kept = t >= 0;
      let base = i * uniforms.v;
      var top = bitcast<f32>(0xff7fffffu); // the lowest float: the max of an empty slice of the row
      if (kept) {
        for (var j = tid; j < uniforms.v; j = j + WG) {
          top = max(top, logits[base + j]);
        }
      }
      let m = workgroupMax(top, tid);
      var e = 0.0;
      var all = 0.0;
      if (kept) {
        for (var j = tid; j < uniforms.v; j = j + WG) {
          let x = logits[base + j] - m;
          e = e + exp(x);
          all = all + x;
        }
      }
      let s = workgroupSum(e, tid); // Σ e^(l − m) ≥ 1
      let total = workgroupSum(all, tid); // Σ (l − m)
      if (tid == 0 && i < uniforms.rows) {
        let at = i * ${STATS};
        if (kept) {
          let logS = log(s);
          let logpT = (logits[base + t] - m) - logS; // log p(target)
          let padIn = uniforms.pad >= 0 && uniforms.pad < uniforms.v;
          let padAt = base + clamp(uniforms.pad, 0, uniforms.v - 1);
          let logpPad = select(0.0, (logits[padAt] - m) - logS, padIn);
          // Σ log p over the classes that are neither the target nor pad: Σ_all − log p_pad − log p_t
          let others = (total - f32(uniforms.v) * logS) - logpPad - logpT;
          result[at] = m;
          result[at + 1] = logS;
          result[at + ${LOSS_COLUMN}] = -(uniforms.confidence * logpT + uniforms.spread * others) - uniforms.entropy;
          result[at + ${NLL_COLUMN}] = -logpT;
        } else {
          for (var c = 0; c < ${STATS}; c = c + 1) {
            result[at + c] = 0.0;
          }
        }
      }`,
  });
  // Column c of the stats as [N].
  const column = (c: number) =>
    runProgram(backend, {
      key: 'xent_column',
      inputs: { stats },
      outputShape: [n],
      ...perElement(n),
      uniforms: [{ name: 'column', type: 'i32', value: c }],
      main: `
        if (index < uniforms.size) {
          result[index] = stats[index * ${STATS} + uniforms.column];
        }`,
    });
  const rowLoss = column(LOSS_COLUMN);
  const rowNll = column(NLL_COLUMN);
  // (softmax − q) · scale, with log p = (l − m) − log Σ as tfjs's logSoftmax: [N, V]; over the
  // logits where the caller gives them up (a training step: one [N, V] buffer here, not two).
  const into = a.consumeLogits === true;
  const grad = runProgram(backend, {
    key: into ? 'xent_grad_into_logits' : 'xent_grad',
    inputs: into ? { targets, stats } : { logits, targets, stats },
    ...(into ? { into: logits } : {}),
    outputShape: [n, v],
    ...perElement(n * v, 256),
    uniforms: [
      ...rowUniforms,
      { name: 'confidence', type: 'f32', value: a.confidence },
      { name: 'spread', type: 'f32', value: a.spread },
      { name: 'scale', type: 'f32', value: a.scale },
    ],
    prelude: ROW_TARGET,
    main: `
      if (index < uniforms.size) {
        let i = index / uniforms.v;
        let j = index - i * uniforms.v;
        let t = rowTarget(i);
        if (t < 0) {
          result[index] = 0.0;
        } else {
          var q = select(uniforms.spread, 0.0, j == uniforms.pad);
          q = select(q, uniforms.confidence, j == t);
          let logit = ${into ? 'result' : 'logits'}[index];
          let logp = (logit - stats[i * ${STATS}]) - stats[i * ${STATS} + 1];
          result[index] = (exp(logp) - q) * uniforms.scale;
        }
      }`,
  });
  disposeAll(backend, [stats]);
  return [rowLoss, rowNll, grad];
};

/** x [any] float32, s [] or [1] float32 → x · s in x's buffer (x is given up), one thread an element. */
const scaleIntoKernel: KernelFunc = ({ inputs, backend }) => {
  const { x, s } = inputs as { x: tf.TensorInfo; s: tf.TensorInfo };
  const size = product(x.shape);
  return runProgram(backend as WebgpuBackend, {
    key: 'scale_into',
    inputs: { s },
    into: x,
    outputShape: x.shape,
    ...perElement(size, 256),
    main: `
      if (index < uniforms.size) {
        result[index] = result[index] * s[0];
      }`,
  });
};

/** Idempotent; after tfjs-backend-webgpu is loaded. */
export function registerWebgpuLoss(): void {
  addKernel(SMOOTHED_CROSS_ENTROPY, 'webgpu', smoothedCrossEntropyKernel);
  addKernel(SCALE_INTO, 'webgpu', scaleIntoKernel);
}
