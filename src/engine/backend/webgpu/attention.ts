/**
 * SELF_ATTENTION and CROSS_ATTENTION (backend/trainingOps.ts) on webgpu, as WGSL programs: the same
 * softmax(Q·Kᵀ/√dk + mask)·V per head as native/attention.c, reading each head's columns of the
 * projected rows in place and writing the heads concatenated, so that a training step dispatches one
 * program per attention instead of tfjs's transposes, matMuls, scale, mask and softmax.
 * One workgroup per (query row t, head j, batch row b): it reduces the row's softmax statistics over
 * S in workgroup memory, then accumulates P·V a chunk of keys at a time. Masked (−∞) scores get
 * probability exactly 0; a row whose scores are all −∞ comes out NaN, as in tfjs and the native kernel.
 * The gradient (ATTENTION_GRAD) is in attentionGrad.ts; the shared WGSL and sizes are here.
 */
import * as tf from '@tensorflow/tfjs-core';
import { attentionSizes, type AttentionSizes, CROSS_ATTENTION, SELF_ATTENTION } from '../trainingOps';
import type { WebgpuBackend, WebgpuProgram } from './program';
import { addKernel, type KernelFunc } from '../kernels';

/** Threads per workgroup: a row's keys (and its dk output columns) are shared among them. */
export const WG = 64;
/** WebGPU's least limit on workgroups per dispatch dimension: the row programs dispatch [T, heads, B]. */
const MAX_GROUPS = 65535;

/** Sizes, as uniforms so that one compiled shader serves every shape. */
export const UNIFORMS =
  'B : i32, T : i32, S : i32, heads : i32, dk : i32, d : i32, qWidth : i32, kvWidth : i32, kOffset : i32, ' +
  'vOffset : i32, maskB : i32, maskT : i32, op0 : i32, op1 : i32, op2 : i32, scale : f32,';

export type Dims = AttentionSizes;

/**
 * The sizes of q [B, T, qWidth] and kv [B, S, kvWidth] (self-attention: kv absent, q holds Q, K, V
 * side by side) and the mask [Bm, 1, Tm, S] (strides 0 where broadcast), as attentionDims in wasm/trainingKernels.ts.
 */
export function attentionDims(q: tf.TensorInfo, kv: tf.TensorInfo | undefined, mask: tf.TensorInfo, heads: number) {
  const z = attentionSizes(q, kv, mask, heads);
  if (!Number.isInteger(z.dk)) throw new Error(`attention: d = ${z.d} does not split into ${heads} heads`);
  if (z.t > MAX_GROUPS || heads > MAX_GROUPS || z.b > MAX_GROUPS)
    throw new Error(`attention of [${z.b}, ${z.t}] is too large`);
  return z;
}

/** The uniforms' values, in UNIFORMS' order; ops: what each block of output columns holds (attentionGrad.ts). */
export function uniformData(dims: Dims, ops: [number, number, number] = [0, 0, 0]) {
  const { b, t, s, heads, dk, d, qWidth, kvWidth, kOffset, vOffset, maskB, maskT } = dims;
  const ints = [b, t, s, heads, dk, d, qWidth, kvWidth, kOffset, vOffset, maskB, maskT, ...ops];
  const scale = dk > 0 ? 1 / Math.sqrt(dk) : 1;
  return [...ints.map((x) => ({ type: 'int32' as const, data: [x] })), { type: 'float32' as const, data: [scale] }];
}

/**
 * WGSL shared by the row programs (inputs Q, KV, M): a score, the row's softmax statistics reduced
 * over the workgroup, and a probability from them. Q's head j of row (b, t) starts at
 * (b·T + t)·qWidth + j·dk, K's and V's of row (b, s) at (b·S + s)·kvWidth + kOffset (vOffset) + j·dk.
 */
export const ROW_SNIPPET = `
  const WG = ${WG};
  var<workgroup> redM : array<f32, ${WG}>;
  var<workgroup> redL : array<f32, ${WG}>;

  // Q·Kᵀ/√dk + mask for query t, key s of head j (tfjs's order: product · scale + mask).
  fn scoreAt(b : i32, j : i32, t : i32, s : i32) -> f32 {
    let qAt = (b * uniforms.T + t) * uniforms.qWidth + j * uniforms.dk;
    let kAt = (b * uniforms.S + s) * uniforms.kvWidth + uniforms.kOffset + j * uniforms.dk;
    var acc = 0.0;
    for (var c = 0; c < uniforms.dk; c++) {
      acc += Q[qAt + c] * KV[kAt + c];
    }
    return acc * uniforms.scale + M[b * uniforms.maskB + t * uniforms.maskT + s];
  }

  // (max, Σ e^(x − max)) over the finite scores of row (b, j, t); Σ = 0 when all are −∞. Every
  // thread of the workgroup calls it (it has barriers); tid is the thread's index.
  fn rowStats(b : i32, j : i32, t : i32, tid : i32) -> vec2<f32> {
    let NEG = -uniforms.INFINITY;
    var m = 0.0;
    var l = 0.0;
    for (var s = tid; s < uniforms.S; s += WG) {
      let x = scoreAt(b, j, t, s);
      if (x == NEG) {
        continue;
      }
      if (l == 0.0) {
        m = x;
        l = 1.0;
      } else if (x > m) {
        l = l * exp(m - x) + 1.0;
        m = x;
      } else {
        l += exp(x - m);
      }
    }
    redM[tid] = m;
    redL[tid] = l;
    workgroupBarrier();
    for (var half = WG / 2; half > 0; half /= 2) {
      if (tid < half && redL[tid + half] > 0.0) {
        let m2 = redM[tid + half];
        let l2 = redL[tid + half];
        if (redL[tid] == 0.0) {
          redM[tid] = m2;
          redL[tid] = l2;
        } else {
          let m1 = redM[tid];
          let top = max(m1, m2);
          redM[tid] = top;
          redL[tid] = redL[tid] * exp(m1 - top) + l2 * exp(m2 - top);
        }
      }
      workgroupBarrier();
    }
    let stats = vec2<f32>(redM[0], redL[0]);
    workgroupBarrier(); // every thread has read redM, redL before they are reused
    return stats;
  }

  // softmax's value for score x of a row with these statistics: exactly 0 where x is −∞, NaN for a
  // row of −∞ only.
  fn prob(x : f32, stats : vec2<f32>) -> f32 {
    let p = select(exp(x - stats.x) / stats.y, 0.0, x == -uniforms.INFINITY);
    return select(p, uniforms.NAN, stats.y == 0.0);
  }
`;

/**
 * A program of the attention kernels over UNIFORMS, `threads` a workgroup and `groups` workgroups:
 * one per (query row, head, batch row) for the row programs (rowProgram), per (tile, head, batch
 * row) for the tiled ones (flashForward.ts tileProgram), ⌈n / threads⌉ in a line for those with one
 * thread an output element (`perElement`: tfjs's `size`, the output's length as uniforms.size).
 */
export function attentionProgram(
  key: string,
  names: string[],
  outputShape: number[],
  groups: [number, number, number],
  threads: number,
  code: string,
  perElement = false,
): WebgpuProgram {
  return {
    variableNames: names,
    outputShape,
    shaderKey: key,
    dispatchLayout: { x: outputShape.map((_, i) => i) },
    dispatch: groups,
    workgroupSize: [threads, 1, 1],
    ...(perElement ? { size: true } : {}),
    uniforms: UNIFORMS,
    getUserCode: () => code,
  };
}

/** A program with one workgroup per (t, j, b): [T, heads, B] workgroups of WG threads. */
export function rowProgram(
  key: string,
  names: string[],
  outputShape: number[],
  dims: Dims,
  code: string,
): WebgpuProgram {
  return attentionProgram(
    key,
    names,
    outputShape,
    [dims.t, dims.heads, dims.b],
    WG,
    `
      ${ROW_SNIPPET}
      ${code}
      fn main(index : i32) {
        let tid = i32(localIndex);
        let t = i32(workgroupId.x);
        let j = i32(workgroupId.y);
        let b = i32(workgroupId.z);
        body(b, j, t, tid);
      }
    `,
  );
}

/**
 * out [B, T, d]: the row's statistics, then per chunk of WG keys their probabilities in workgroup
 * memory and out += P·V for the head's dk columns (the output holds the running sum).
 */
const FORWARD = `
  var<workgroup> probs : array<f32, ${WG}>;

  fn body(b : i32, j : i32, t : i32, tid : i32) {
    let stats = rowStats(b, j, t, tid);
    let outAt = (b * uniforms.T + t) * uniforms.d + j * uniforms.dk;
    for (var s0 = 0; s0 < uniforms.S; s0 += WG) {
      let s = s0 + tid;
      var p = 0.0;
      if (s < uniforms.S) {
        p = prob(scoreAt(b, j, t, s), stats);
      }
      probs[tid] = p;
      workgroupBarrier();
      let n = min(WG, uniforms.S - s0);
      for (var c = tid; c < uniforms.dk; c += WG) {
        var acc = select(result[outAt + c], 0.0, s0 == 0);
        var vAt = (b * uniforms.S + s0) * uniforms.kvWidth + uniforms.vOffset + j * uniforms.dk + c;
        for (var i = 0; i < n; i++) {
          acc += probs[i] * KV[vAt];
          vAt += uniforms.kvWidth;
        }
        result[outAt + c] = acc;
      }
      workgroupBarrier(); // the chunk's probabilities are read before the next overwrites them
    }
  }
`;

type AttentionInputs = { q: tf.TensorInfo; kv?: tf.TensorInfo; mask: tf.TensorInfo };

/** SELF_ATTENTION (q = Q, K, V [B, T, 3d], mask) or CROSS_ATTENTION (q [B, T, d], kv = K, V [B, S, 2d], mask) → [B, T, d] */
const attentionKernel: KernelFunc = ({ inputs, backend, attrs }) => {
  const { q, kv, mask } = inputs as AttentionInputs;
  const dims = attentionDims(q, kv, mask, (attrs as { heads: number }).heads);
  const program = rowProgram('AttentionDebuggerAttention', ['Q', 'KV', 'M'], [dims.b, dims.t, dims.d], dims, FORWARD);
  // Self-attention reads K and V from q itself: the one buffer is bound twice, read-only.
  return (backend as WebgpuBackend).runWebGPUProgram(program, [q, kv ?? q, mask], 'float32', uniformData(dims));
};

/** Idempotent; after tfjs-backend-webgpu is loaded. */
export function registerWebgpuAttention(): void {
  addKernel(SELF_ATTENTION, 'webgpu', attentionKernel);
  addKernel(CROSS_ATTENTION, 'webgpu', attentionKernel);
}
