/**
 * ATTENTION_GRAD (backend/trainingOps.ts) on webgpu: the backward pass of attention.ts's programs,
 * as native/attention.c computes it, in two steps because WGSL has no float atomics to sum dK and dV
 * over query rows:
 * 1. one workgroup per query row (t, head j, batch row b) recomputes P and writes it with
 *    dS = P ⊙ (dP − Σ_s dP ⊙ P), dP = dO·Vᵀ, into a temporary G [2, B·heads·T, S];
 * 2. one thread per gradient element sums over G: dQ = dS·K/√dk (over keys), dK = dSᵀ·Q/√dk and
 *    dV = Pᵀ·dO (over queries), written side by side as the inputs were (self-attention: dq [B, T, 3d];
 *    cross-attention: dq [B, T, d] and dkv [B, S, 2d]).
 */
import type * as tf from '@tensorflow/tfjs-core';
import { ATTENTION_GRAD } from '../trainingOps';
import { addKernel, type KernelFunc } from '../kernels';
import type { WebgpuBackend, WebgpuProgram } from './program';
import { attentionDims, attentionProgram, type Dims, rowProgram, uniformData, WG } from './attention';

/** What a block of d output columns holds (the uniforms op0, op1, op2). */
const DQ = 0;
const DK = 1;
const DV = 2;

/** Index of G's value (which: 0 for P, 1 for dS) at query t, key s of head j, batch row b. */
const G_AT = `
  fn gAt(which : i32, b : i32, j : i32, t : i32, s : i32) -> i32 {
    return (((which * uniforms.B + b) * uniforms.heads + j) * uniforms.T + t) * uniforms.S + s;
  }
`;

/**
 * G [2, B·heads·T, S] from Q, KV, M and dO [B, T, d]: per key, P and dP = dO·V; their dot product
 * reduced over the workgroup; then dS = P ⊙ (dP − that) over the dP written first.
 */
const ROW_GRAD = `
  ${G_AT}
  fn body(b : i32, j : i32, t : i32, tid : i32) {
    let stats = rowStats(b, j, t, tid);
    let doAt = (b * uniforms.T + t) * uniforms.d + j * uniforms.dk;
    var dot = 0.0;
    for (var s = tid; s < uniforms.S; s += WG) {
      let p = prob(scoreAt(b, j, t, s), stats);
      let vAt = (b * uniforms.S + s) * uniforms.kvWidth + uniforms.vOffset + j * uniforms.dk;
      var dp = 0.0;
      for (var c = 0; c < uniforms.dk; c++) {
        dp += dO[doAt + c] * KV[vAt + c];
      }
      result[gAt(0, b, j, t, s)] = p;
      result[gAt(1, b, j, t, s)] = dp;
      dot += dp * p;
    }
    redL[tid] = dot;
    workgroupBarrier();
    for (var half = WG / 2; half > 0; half /= 2) {
      if (tid < half) {
        redL[tid] += redL[tid + half];
      }
      workgroupBarrier();
    }
    let total = redL[0];
    for (var s = tid; s < uniforms.S; s += WG) {
      let dS = gAt(1, b, j, t, s);
      result[dS] = result[gAt(0, b, j, t, s)] * (result[dS] - total);
    }
  }
`;

/**
 * One gradient element per thread, output [B, R, W]: column block k of d columns holds uniforms.opk
 * (DQ: rows are queries; DK, DV: rows are keys); head j, column c of that block.
 */
const SUMS = `
  ${G_AT}
  fn main(index : i32) {
    if (index >= uniforms.size) {
      return;
    }
    let W = uniforms.outShape[2];
    let R = uniforms.outShape[1];
    let col = index % W;
    let r = (index / W) % R;
    let b = index / (W * R);
    let blk = col / uniforms.d;
    let j = (col % uniforms.d) / uniforms.dk;
    let c = col % uniforms.dk;
    let op = select(select(uniforms.op0, uniforms.op1, blk == 1), uniforms.op2, blk == 2);
    var acc = 0.0;
    if (op == ${DQ}) {
      // dQ = dS·K/√dk: row r is query t, summed over keys s
      var kAt = b * uniforms.S * uniforms.kvWidth + uniforms.kOffset + j * uniforms.dk + c;
      for (var s = 0; s < uniforms.S; s++) {
        acc += G[gAt(1, b, j, r, s)] * KV[kAt];
        kAt += uniforms.kvWidth;
      }
      acc *= uniforms.scale;
    } else if (op == ${DK}) {
      // dK = dSᵀ·Q/√dk: row r is key s, summed over queries t
      var qAt = b * uniforms.T * uniforms.qWidth + j * uniforms.dk + c;
      for (var t = 0; t < uniforms.T; t++) {
        acc += G[gAt(1, b, j, t, r)] * Q[qAt];
        qAt += uniforms.qWidth;
      }
      acc *= uniforms.scale;
    } else {
      // dV = Pᵀ·dO: row r is key s, summed over queries t
      var doAt = b * uniforms.T * uniforms.d + j * uniforms.dk + c;
      for (var t = 0; t < uniforms.T; t++) {
        acc += G[gAt(0, b, j, t, r)] * dO[doAt];
        doAt += uniforms.d;
      }
    }
    result[index] = acc;
  }
`;

/** The gradient-sum program for an output of this shape. */
function sumsProgram(outputShape: number[]): WebgpuProgram {
  const n = outputShape.reduce((a, x) => a * x, 1);
  const key = 'AttentionDebuggerAttentionGradSums';
  return attentionProgram(key, ['G', 'Q', 'KV', 'dO'], outputShape, [Math.ceil(n / WG), 1, 1], WG, SUMS, true);
}

type GradInputs = { dy: tf.TensorInfo; q: tf.TensorInfo; kv?: tf.TensorInfo; mask: tf.TensorInfo };

/** dy [B, T, d] and the inputs of SELF_ATTENTION or CROSS_ATTENTION → [dq], or [dq, dkv] for cross-attention */
const attentionGradKernel: KernelFunc = ({ inputs, backend, attrs }) => {
  const { dy, q, kv, mask } = inputs as GradInputs;
  const be = backend as WebgpuBackend;
  const dims: Dims = attentionDims(q, kv, mask, (attrs as { heads: number }).heads);
  const { b, t, s, heads } = dims;
  const key = 'AttentionDebuggerAttentionGradRows';
  const rows = rowProgram(key, ['Q', 'KV', 'M', 'dO'], [2, b * heads * t, s], dims, ROW_GRAD);
  const g = be.runWebGPUProgram(rows, [q, kv ?? q, mask, dy], 'float32', uniformData(dims)); // [2, B·heads·T, S]
  const sums = (shape: number[], ops: [number, number, number]) =>
    be.runWebGPUProgram(sumsProgram(shape), [g, q, kv ?? q, dy], 'float32', uniformData(dims, ops));
  const outs = kv ? [sums(q.shape, [DQ, DQ, DQ]), sums(kv.shape, [DK, DV, DV])] : [sums(q.shape, [DQ, DK, DV])];
  be.disposeData(g.dataId);
  return outs;
};

/** Idempotent; after tfjs-backend-webgpu is loaded. */
export function registerWebgpuAttentionGrad(): void {
  addKernel(ATTENTION_GRAD, 'webgpu', attentionGradKernel);
}
