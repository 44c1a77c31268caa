/**
 * TILED_ATTENTION (backend/tiledAttention.ts) on webgpu: softmax(Q·Kᵀ/√dk + mask)·V per head in
 * FlashAttention-2's scheme. One workgroup of 256 threads per (tile of BR query rows, head j, batch
 * row b) holds its Q tile in workgroup memory and streams K and V through it BC keys at a time,
 * keeping each row's running max m and sum l (online softmax): per K/V tile, thread (r, c) scores
 * query r against key c, one thread per row folds the tile's scores into (m, l) and turns them into
 * probabilities, and thread (r, g) rescales its output columns g, g + 16, … by e^(m_old − m_new) and
 * adds P·V. At the end O = acc / l, and L = m + ln l is kept for the backward pass
 * (flashBackward.ts). Heads are read in place from the stacked projections, as attention.ts does.
 * Masked (−∞) scores get probability exactly 0; a row whose scores are all −∞ comes out NaN, as in
 * tfjs and the row kernels, its L being −∞.
 * Workgroup memory: (BR + 2·BC)·DMAX + BR·BC + 3·BR floats = 13.5 KiB of WebGPU's 16 KiB.
 */
import type * as tf from '@tensorflow/tfjs-core';
import { TILED_ATTENTION } from '../tiledAttention';
import { addKernel, type KernelFunc } from '../kernels';
import { disposeAll, reshape, sliceRows, type WebgpuBackend, type WebgpuProgram } from './program';
import { attentionDims, attentionProgram, type Dims, uniformData } from './attention';

/** Threads per workgroup of every tiled program: a 16 × 16 grid. */
export const NT = 256;
/** Columns of a head held per tile row: dk up to DMAX (backend/tiledAttention.ts TILED_MAX_DK). */
export const DMAX = 64;
/** Query rows per workgroup and keys per streamed tile in the forward pass. */
export const BR = 16;
export const BC = 16;

/**
 * WGSL shared by the tiled programs: where a head's row starts in Q, K, V (the stacked projections),
 * O and dO ([B, T, d]), the mask's value, a tile of rows copied into workgroup memory, and a
 * probability from a score and its row's log-sum-exp.
 */
export const TILE_SNIPPET = `
  const NT = ${NT};
  const DMAX = ${DMAX};

  fn qAt(b : i32, j : i32, t : i32) -> i32 {
    return (b * uniforms.T + t) * uniforms.qWidth + j * uniforms.dk;
  }
  fn kAt(b : i32, j : i32, s : i32) -> i32 {
    return (b * uniforms.S + s) * uniforms.kvWidth + uniforms.kOffset + j * uniforms.dk;
  }
  fn vAt(b : i32, j : i32, s : i32) -> i32 {
    return (b * uniforms.S + s) * uniforms.kvWidth + uniforms.vOffset + j * uniforms.dk;
  }
  fn oAt(b : i32, j : i32, t : i32) -> i32 {
    return (b * uniforms.T + t) * uniforms.d + j * uniforms.dk;
  }
  fn maskAt(b : i32, t : i32, s : i32) -> f32 {
    return M[b * uniforms.maskB + t * uniforms.maskT + s];
  }
  // Row (b, head j, t)'s index in L and D [B, heads, T].
  fn rowAt(b : i32, j : i32, t : i32) -> i32 {
    return (b * uniforms.heads + j) * uniforms.T + t;
  }

  // P from score x and its row's log-sum-exp: exactly 0 where x is −∞, NaN for a row of −∞ only.
  fn probOf(x : f32, lse : f32) -> f32 {
    let NEG = -uniforms.INFINITY;
    let p = select(exp(x - lse), 0.0, x == NEG);
    return select(p, uniforms.NAN, lse == NEG);
  }
`;

/**
 * Copies rows first … first + n − 1 (those < limit; 0 past it) of a head's dk columns into a tile
 * [n, DMAX] of workgroup memory: WGSL of a loop over the workgroup's threads (tid).
 */
export const loadTile = (tile: string, n: string, first: string, limit: string, start: (row: string) => string) => `
  for (var i = tid; i < ${n} * uniforms.dk; i += NT) {
    let r = i / uniforms.dk;
    let c = i % uniforms.dk;
    var x = 0.0;
    if (${first} + r < ${limit}) {
      x = ${start(`${first} + r`)};
    }
    ${tile}[r * DMAX + c] = x;
  }`;

const FORWARD = `
  ${TILE_SNIPPET}
  const BR = ${BR};
  const BC = ${BC};
  var<workgroup> qTile : array<f32, ${BR * DMAX}>;
  var<workgroup> kTile : array<f32, ${BC * DMAX}>;
  var<workgroup> vTile : array<f32, ${BC * DMAX}>;
  var<workgroup> pTile : array<f32, ${BR * BC}>; // scores, then probabilities
  var<workgroup> mRow : array<f32, ${BR}>; // running max of each row's finite scores (−∞: none yet)
  var<workgroup> lRow : array<f32, ${BR}>; // running Σ e^(x − m)
  var<workgroup> alphaRow : array<f32, ${BR}>; // e^(m_old − m_new): the rescale of acc for this tile

  fn main(index : i32) {
    let NEG = -uniforms.INFINITY;
    let tid = i32(localIndex);
    let t0 = i32(workgroupId.x) * BR;
    let j = i32(workgroupId.y);
    let b = i32(workgroupId.z);
    let dk = uniforms.dk;
    ${loadTile('qTile', 'BR', 't0', 'uniforms.T', (t) => `Q[qAt(b, j, ${t}) + c]`)}
    if (tid < BR) {
      mRow[tid] = NEG;
      lRow[tid] = 0.0;
    }
    let r = tid / 16; // query row of the tile; also the row whose columns this thread accumulates
    let g = tid % 16; // key of the tile scored; also the first of the columns g, g + 16, … accumulated
    let t = t0 + r;
    var acc = array<f32, ${DMAX / 16}>();
    for (var s0 = 0; s0 < uniforms.S; s0 += BC) {
      workgroupBarrier(); // the last tile is read before it is overwritten
      ${loadTile('kTile', 'BC', 's0', 'uniforms.S', (s) => `KV[kAt(b, j, ${s}) + c]`)}
      ${loadTile('vTile', 'BC', 's0', 'uniforms.S', (s) => `KV[vAt(b, j, ${s}) + c]`)}
      workgroupBarrier();
      let s = s0 + g;
      var x = NEG;
      if (t < uniforms.T && s < uniforms.S) {
        var dot = 0.0;
        for (var c = 0; c < dk; c++) {
          dot += qTile[r * DMAX + c] * kTile[g * DMAX + c];
        }
        x = dot * uniforms.scale + maskAt(b, t, s);
      }
      pTile[r * BC + g] = x;
      workgroupBarrier();
      if (tid < BR) {
        var top = mRow[tid];
        for (var k = 0; k < BC; k++) {
          top = max(top, pTile[tid * BC + k]);
        }
        let old = mRow[tid];
        // Nothing finite yet (old = −∞): acc and l are 0, whatever the factor.
        let alpha = select(exp(old - top), 0.0, old == NEG);
        var sum = 0.0;
        for (var k = 0; k < BC; k++) {
          let y = pTile[tid * BC + k];
          let p = select(exp(y - top), 0.0, y == NEG);
          pTile[tid * BC + k] = p;
          sum += p;
        }
        mRow[tid] = top;
        lRow[tid] = lRow[tid] * alpha + sum;
        alphaRow[tid] = alpha;
      }
      workgroupBarrier();
      let alpha = alphaRow[r];
      let n = min(BC, uniforms.S - s0);
      for (var k = 0; k < ${DMAX / 16}; k++) {
        let c = g + 16 * k;
        if (c < dk) {
          var a = acc[k] * alpha;
          for (var i = 0; i < n; i++) {
            a += pTile[r * BC + i] * vTile[i * DMAX + c];
          }
          acc[k] = a;
        }
      }
    }
    if (t < uniforms.T) {
      let l = lRow[r];
      for (var k = 0; k < ${DMAX / 16}; k++) {
        let c = g + 16 * k;
        if (c < dk) {
          result[oAt(b, j, t) + c] = select(acc[k] / l, uniforms.NAN, l == 0.0);
        }
      }
      if (g == 0) {
        // L after O: [B, T, d] then [B, heads, T] in one output.
        result[uniforms.B * uniforms.T * uniforms.d + rowAt(b, j, t)] = select(mRow[r] + log(l), NEG, l == 0.0);
      }
    }
  }
`;

/** A tiled program: one workgroup of NT threads per (tile of `rows` rows among n, head, batch row). */
export function tileProgram(
  key: string,
  names: string[],
  outputShape: number[],
  dims: Dims,
  rows: number,
  n: number,
  code: string,
): WebgpuProgram {
  return attentionProgram(key, names, outputShape, [Math.ceil(n / rows), dims.heads, dims.b], NT, code);
}

type Inputs = { q: tf.TensorInfo; kv?: tf.TensorInfo; mask: tf.TensorInfo };

/** q (and kv), mask → [O [B, T, d], L [B, heads, T]]: one program writing both, then each sliced out. */
const tiledAttentionKernel: KernelFunc = ({ inputs, backend, attrs }) => {
  const { q, kv, mask } = inputs as Inputs;
  const be = backend as WebgpuBackend;
  const dims = attentionDims(q, kv, mask, (attrs as { heads: number }).heads);
  if (dims.dk > DMAX) throw new Error(`tiled attention: dk = ${dims.dk} is over ${DMAX}`);
  const { b, t, d, heads } = dims;
  const [oSize, lSize] = [b * t * d, b * heads * t];
  const program = tileProgram('AttentionDebuggerTiledForward', ['Q', 'KV', 'M'], [oSize + lSize], dims, BR, t, FORWARD);
  const both = be.runWebGPUProgram(program, [q, kv ?? q, mask], 'float32', uniformData(dims));
  const parts = [sliceRows(be, both, 0, oSize), sliceRows(be, both, oSize, lSize)];
  const out = [reshape(be, parts[0]!, [b, t, d]), reshape(be, parts[1]!, [b, heads, t])];
  disposeAll(be, [both, ...parts]);
  return out;
};

/** Idempotent; after tfjs-backend-webgpu is loaded. */
export function registerWebgpuTiledAttention(): void {
  addKernel(TILED_ATTENTION, 'webgpu', tiledAttentionKernel);
}
