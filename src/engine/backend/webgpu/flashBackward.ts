/**
 * TILED_ATTENTION_GRAD (backend/tiledAttention.ts) on webgpu: the backward pass of flashForward.ts in
 * FlashAttention-2's scheme, without float atomics (WGSL has none) and without anything
 * [B·heads·T, S] in size. With P = e^(S − L) recomputed from Q, K and the forward's L, dP = dO·Vᵀ,
 * D = rowsum(dO ⊙ O) and dS = P ⊙ (dP − D):
 * 1. D [B, heads, T], one thread per row;
 * 2. one workgroup per (tile of BK keys, head, batch row) holds K, V and accumulates dV = Pᵀ·dO and
 *    dK = dSᵀ·Q/√dk for its keys over every tile of BQ queries streamed through workgroup memory;
 * 3. one workgroup per (tile of BR queries, head, batch row) holds Q, dO and accumulates
 *    dQ = dS·K/√dk over every tile of BC keys streamed through.
 * Gradients are written side by side as the inputs were read: self-attention's dq [B, T, 3d] (dQ by
 * 3, dK and dV by 2 into the same buffer), or cross-attention's dq [B, T, d] and dkv [B, S, 2d].
 * Workgroup memory: 13.4 KiB for 2 and 12.9 KiB for 3, of WebGPU's 16 KiB.
 */
import type * as tf from '@tensorflow/tfjs-core';
import { TILED_ATTENTION_GRAD } from '../tiledAttention';
import { addKernel, type KernelFunc } from '../kernels';
import type { WebgpuBackend, WebgpuProgram } from './program';
import { attentionDims, attentionProgram, type Dims, uniformData } from './attention';
import { DMAX, loadTile, TILE_SNIPPET, tileProgram } from './flashForward';

/** Program 2: keys held per workgroup, and queries per streamed tile. */
const BK = 16;
const BQ = 8;
/** Program 3: queries held per workgroup, and keys per streamed tile. */
const BR = 16;
const BC = 8;

/** D = rowsum(dO ⊙ O) [B, heads, T], one thread per row (b, j, t). */
const ROW_DOT = `
  fn main(index : i32) {
    if (index >= uniforms.size) {
      return;
    }
    let t = index % uniforms.T;
    let j = (index / uniforms.T) % uniforms.heads;
    let b = index / (uniforms.T * uniforms.heads);
    let at = (b * uniforms.T + t) * uniforms.d + j * uniforms.dk;
    var acc = 0.0;
    for (var c = 0; c < uniforms.dk; c++) {
      acc += dO[at + c] * O[at + c];
    }
    result[index] = acc;
  }
`;

/**
 * WGSL: P and dS of query r of the query tile (rows from t0) and key c of the key tile (from s0),
 * from tiles qTile, kTile, vTile, dOTile and the rows' L and D (lRow, dRow); 0 and 0 outside T × S.
 */
const P_AND_DS = `
  fn pAndDs(b : i32, j : i32, t0 : i32, s0 : i32, r : i32, c : i32) -> vec2<f32> {
    let t = t0 + r;
    let s = s0 + c;
    if (t >= uniforms.T || s >= uniforms.S) {
      return vec2<f32>(0.0, 0.0);
    }
    var qk = 0.0;
    var dp = 0.0;
    for (var i = 0; i < uniforms.dk; i++) {
      qk += qTile[r * DMAX + i] * kTile[c * DMAX + i];
      dp += dOTile[r * DMAX + i] * vTile[c * DMAX + i];
    }
    let p = probOf(qk * uniforms.scale + maskAt(b, t, s), lRow[r]);
    return vec2<f32>(p, p * (dp - dRow[r]));
  }
`;

/** Loads the tiles of queries from t0 (Q, dO, L, D) of `rows` rows. */
const loadQueries = (rows: string) => `
  ${loadTile('qTile', rows, 't0', 'uniforms.T', (t) => `Q[qAt(b, j, ${t}) + c]`)}
  ${loadTile('dOTile', rows, 't0', 'uniforms.T', (t) => `dO[oAt(b, j, ${t}) + c]`)}
  if (tid < ${rows} && t0 + tid < uniforms.T) {
    lRow[tid] = Lse[rowAt(b, j, t0 + tid)];
    dRow[tid] = D[rowAt(b, j, t0 + tid)];
  }`;

/** Loads the tiles of keys from s0 (K, V) of `rows` rows. */
const loadKeys = (rows: string) => `
  ${loadTile('kTile', rows, 's0', 'uniforms.S', (s) => `KV[kAt(b, j, ${s}) + c]`)}
  ${loadTile('vTile', rows, 's0', 'uniforms.S', (s) => `KV[vAt(b, j, ${s}) + c]`)}`;

const KEY_TILES = `
  ${TILE_SNIPPET}
  const BK = ${BK};
  const BQ = ${BQ};
  var<workgroup> kTile : array<f32, ${BK * DMAX}>;
  var<workgroup> vTile : array<f32, ${BK * DMAX}>;
  var<workgroup> qTile : array<f32, ${BQ * DMAX}>;
  var<workgroup> dOTile : array<f32, ${BQ * DMAX}>;
  var<workgroup> pTile : array<f32, ${BQ * BK}>;
  var<workgroup> dsTile : array<f32, ${BQ * BK}>;
  var<workgroup> lRow : array<f32, ${BQ}>;
  var<workgroup> dRow : array<f32, ${BQ}>;
  ${P_AND_DS}

  fn main(index : i32) {
    let tid = i32(localIndex);
    let s0 = i32(workgroupId.x) * BK;
    let j = i32(workgroupId.y);
    let b = i32(workgroupId.z);
    ${loadKeys('BK')}
    let key = tid / 16; // the key of the tile whose columns g, g + 16, … this thread accumulates
    let g = tid % 16;
    var dK = array<f32, ${DMAX / 16}>();
    var dV = array<f32, ${DMAX / 16}>();
    for (var t0 = 0; t0 < uniforms.T; t0 += BQ) {
      workgroupBarrier(); // the last tile is read before it is overwritten
      ${loadQueries('BQ')}
      workgroupBarrier();
      if (tid < BQ * BK) {
        let pds = pAndDs(b, j, t0, s0, tid / BK, tid % BK);
        pTile[tid] = pds.x;
        dsTile[tid] = pds.y;
      }
      workgroupBarrier();
      let n = min(BQ, uniforms.T - t0);
      for (var k = 0; k < ${DMAX / 16}; k++) {
        let c = g + 16 * k;
        if (c < uniforms.dk) {
          var dv = dV[k];
          var dk = dK[k];
          for (var r = 0; r < n; r++) {
            dv += pTile[r * BK + key] * dOTile[r * DMAX + c];
            dk += dsTile[r * BK + key] * qTile[r * DMAX + c];
          }
          dV[k] = dv;
          dK[k] = dk;
        }
      }
    }
    let s = s0 + key;
    if (s < uniforms.S) {
      for (var k = 0; k < ${DMAX / 16}; k++) {
        let c = g + 16 * k;
        if (c < uniforms.dk) {
          result[kAt(b, j, s) + c] = dK[k] * uniforms.scale;
          result[vAt(b, j, s) + c] = dV[k];
        }
      }
    }
  }
`;

const QUERY_TILES = `
  ${TILE_SNIPPET}
  const BR = ${BR};
  const BC = ${BC};
  var<workgroup> qTile : array<f32, ${BR * DMAX}>;
  var<workgroup> dOTile : array<f32, ${BR * DMAX}>;
  var<workgroup> kTile : array<f32, ${BC * DMAX}>;
  var<workgroup> vTile : array<f32, ${BC * DMAX}>;
  var<workgroup> dsTile : array<f32, ${BR * BC}>;
  var<workgroup> lRow : array<f32, ${BR}>;
  var<workgroup> dRow : array<f32, ${BR}>;
  ${P_AND_DS}

  fn main(index : i32) {
    let tid = i32(localIndex);
    let t0 = i32(workgroupId.x) * BR;
    let j = i32(workgroupId.y);
    let b = i32(workgroupId.z);
    ${loadQueries('BR')}
    let row = tid / 16; // the query of the tile whose columns g, g + 16, … this thread accumulates
    let g = tid % 16;
    var dQ = array<f32, ${DMAX / 16}>();
    for (var s0 = 0; s0 < uniforms.S; s0 += BC) {
      workgroupBarrier(); // the last tile is read before it is overwritten
      ${loadKeys('BC')}
      workgroupBarrier();
      if (tid < BR * BC) {
        dsTile[tid] = pAndDs(b, j, t0, s0, tid / BC, tid % BC).y;
      }
      workgroupBarrier();
      let n = min(BC, uniforms.S - s0);
      for (var k = 0; k < ${DMAX / 16}; k++) {
        let c = g + 16 * k;
        if (c < uniforms.dk) {
          var dq = dQ[k];
          for (var i = 0; i < n; i++) {
            dq += dsTile[row * BC + i] * kTile[i * DMAX + c];
          }
          dQ[k] = dq;
        }
      }
    }
    let t = t0 + row;
    if (t < uniforms.T) {
      for (var k = 0; k < ${DMAX / 16}; k++) {
        let c = g + 16 * k;
        if (c < uniforms.dk) {
          result[qAt(b, j, t) + c] = dQ[k] * uniforms.scale;
        }
      }
    }
  }
`;

type GradInputs = {
  dy: tf.TensorInfo;
  q: tf.TensorInfo;
  kv?: tf.TensorInfo;
  mask: tf.TensorInfo;
  o: tf.TensorInfo;
  lse: tf.TensorInfo;
};

/** The program of D [B, heads, T]. */
function rowDotProgram(dims: Dims): WebgpuProgram {
  const n = dims.b * dims.heads * dims.t;
  const key = 'AttentionDebuggerTiledRowDot';
  return attentionProgram(key, ['dO', 'O'], [n], [Math.ceil(n / 64), 1, 1], 64, ROW_DOT, true);
}

/** dy [B, T, d], q (and kv), mask, o, lse → [dq] (self-attention) or [dq, dkv] (cross-attention). */
const tiledAttentionGradKernel: KernelFunc = ({ inputs, backend, attrs }) => {
  const { dy, q, kv, mask, o, lse } = inputs as GradInputs;
  const be = backend as WebgpuBackend;
  const dims = attentionDims(q, kv, mask, (attrs as { heads: number }).heads);
  if (dims.dk > DMAX) throw new Error(`tiled attention: dk = ${dims.dk} is over ${DMAX}`);
  const uniforms = uniformData(dims);
  const dRows = be.runWebGPUProgram(rowDotProgram(dims), [dy, o], 'float32', uniforms); // D [B·heads·T]
  const names = ['Q', 'KV', 'M', 'dO', 'Lse', 'D'];
  const ins = [q, kv ?? q, mask, dy, lse, dRows];
  const dq = be.runWebGPUProgram(
    tileProgram('AttentionDebuggerTiledGradQ', names, q.shape, dims, BR, dims.t, QUERY_TILES),
    ins,
    'float32',
    uniforms,
  );
  const keys = tileProgram('AttentionDebuggerTiledGradKV', names, (kv ?? q).shape, dims, BK, dims.s, KEY_TILES);
  // Self-attention: dK and dV go into dq's columns d … 3d, beside dQ.
  const dkv = be.runWebGPUProgram(keys, ins, 'float32', uniforms, kv ? undefined : dq);
  be.disposeData(dRows.dataId);
  return kv ? [dq, dkv] : [dq];
};

/** Idempotent; after tfjs-backend-webgpu is loaded. */
export function registerWebgpuTiledAttentionGrad(): void {
  addKernel(TILED_ATTENTION_GRAD, 'webgpu', tiledAttentionGradKernel);
}
