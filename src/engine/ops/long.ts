/**
 * The model's ops for one long pair (thousands of tokens, batch 1, outside training): plain tfjs ops
 * (plain.ts), but each multi-head attention computes its weights a slice of query rows at a time,
 * max-pools each slice's weights on the device into thumbnails and releases them before the next
 * slice. So no more than one slice of [h, rows, keys] weights (CHUNK_WEIGHTS) is ever held, where
 * all maps at once would take 9.2 GB on the base shape at 4,096 tokens. The pooled maps, and with
 * `keepQK` each attention's Q·W^Q and K·W^K, are kept per kind in layer order for the caller to read
 * and release (longAttention.ts).
 */
import { perKind } from '../model/context';
import * as tf from '@tensorflow/tfjs-core';
import { type Pool, pooledCells } from '../../algorithms/pool';
import { ATTENTION_KINDS, type AttentionKind } from '../../protocol/attention';
import {
  causalMask,
  isKeysValues,
  mergeHeads,
  project,
  projectKeysValues,
  scaledDotProductAttention,
} from '../model/attention';
import type { AttentionCall, ModelOps } from './modelOps';
import { plainOps } from './plain';

/** Weights of one slice of query rows: 8 M floats (32 MB), e.g. 256 rows × 4,096 keys × 8 heads. */
export const CHUNK_WEIGHTS = 8 << 20;

/** One attention's projected queries and keys: [1, h, n, d_k] each. */
export interface KeptQK {
  q: tf.Tensor4D;
  k: tf.Tensor4D;
}

/** What a long pass keeps, per kind, one entry a layer in the order the layers ran. */
export interface LongKept {
  /** The pooled weights [h, ⌈T/pool.rows⌉, ⌈S/pool.cols⌉]. */
  maps: Record<AttentionKind, tf.Tensor3D[]>;
  /** Q·W^Q and K·W^K (attention/block recomputes any block from them), when asked. */
  qk: Record<AttentionKind, KeptQK[]>;
}

/** Releases each attention's kept Q and K. */
export function disposeKept(qk: Record<AttentionKind, KeptQK[]>): void {
  for (const kind of ATTENTION_KINDS) for (const { q, k } of qk[kind].splice(0)) tf.dispose([q, k]);
}

/**
 * Max over blocks of pool.rows × pool.cols, the edge blocks shorter (as algorithms/pool.ts
 * maxPoolBlocks): w [1, h, r, K] → [h, ⌈r/rows⌉, ⌈K/cols⌉]. Weights are ≥ 0, so the zeros padded in
 * to whole blocks leave every block's max as it is. The columns are pooled first, over the last axis
 * of one view of w, so that the whole slice is never copied.
 */
export function poolWeights(w: tf.Tensor4D, pool: Pool): tf.Tensor3D {
  const [, h, r, K] = w.shape;
  if (pool.rows === 1 && pool.cols === 1) return tf.reshape(w, [h, r, K]);
  const [R, C] = [pooledCells(r, pool.rows), pooledCells(K, pool.cols)];
  const padCols = C * pool.cols - K;
  const wide = padCols
    ? tf.pad(w, [
        [0, 0],
        [0, 0],
        [0, 0],
        [0, padCols],
      ])
    : w; // [1, h, r, C·cols]
  const cols = tf.max(tf.reshape(wide, [h, r, C, pool.cols]), 3); // [h, r, C]
  const padRows = R * pool.rows - r;
  const tall = padRows
    ? tf.pad(cols, [
        [0, 0],
        [0, padRows],
        [0, 0],
      ])
    : cols; // [h, R·rows, C]
  return tf.max(tf.reshape(tall, [h, R, pool.rows, C]), 2) as tf.Tensor3D;
}

/**
 * The additive mask of query rows [r0, r1) over K keys: rows of `mask` (broadcastable to
 * [1, h, Q, K]), and in the decoder's self-attention no later positions (§3.2.3), made here a slice
 * at a time: the long pass hands decode only the target's padding, so that no [T, T] mask is made.
 */
function maskRows(kind: AttentionKind, mask: tf.Tensor | undefined, r0: number, r1: number, K: number) {
  const [b, h, , k] = mask?.shape ?? [];
  const rows = !mask || mask.shape[2] === 1 ? mask : tf.slice(mask, [0, 0, r0, 0], [b!, h!, r1 - r0, k!]);
  if (kind !== 'decoder_self') return rows;
  const causal = causalMask(K, r0, r1); // [1, 1, r, K]
  return rows ? tf.add(rows, causal) : causal;
}

/** The long pass's ops, pooling each kind's weights by `pools` into `kept` (and Q, K with keepQK). */
export function longOps(pools: Record<AttentionKind, Pool>, keepQK: boolean): { ops: ModelOps; kept: LongKept } {
  const kept: LongKept = { maps: perKind(), qk: perKind() };
  /** MultiHead(Q, K, V)·W^O (§3.2.2) a slice of query rows at a time. xq [1, Q, d] → [1, Q, d] */
  const multiHeadAttention = ({ attn, heads: h, kind, xq, xkv, mask }: AttentionCall): tf.Tensor3D => {
    const q = project(attn, 'q', h, xq); // [1, h, Q, d_k]
    const kv = isKeysValues(xkv) ? xkv : projectKeysValues(attn, h, xkv); // [1, h, K, d_k] each
    const [Q, K] = [q.shape[2], kv.k.shape[2]];
    const pool = pools[kind];
    const rows = Math.max(pool.rows, Math.floor(CHUNK_WEIGHTS / (h * K) / pool.rows) * pool.rows);
    const outputs: tf.Tensor[] = [];
    const pooled: tf.Tensor[] = [];
    for (let r0 = 0; r0 < Q; r0 += rows) {
      const r1 = Math.min(Q, r0 + rows);
      const [output, weights] = tf.tidy(() => {
        const qr = tf.slice(q, [0, 0, r0, 0], [1, h, r1 - r0, q.shape[3]]); // [1, h, r, d_k]
        const a = scaledDotProductAttention(qr, kv.k, kv.v, maskRows(kind, mask, r0, r1, K)); // [1, h, r, d_v], [1, h, r, K]
        return [a.output, poolWeights(a.weights as tf.Tensor4D, pool)];
      });
      outputs.push(output!);
      pooled.push(weights!);
    }
    kept.maps[kind].push(tf.keep(tf.concat(pooled, 1) as tf.Tensor3D)); // [h, rows pooled, cols pooled]
    if (keepQK) kept.qk[kind].push({ q: tf.keep(q), k: tf.keep(kv.k) });
    const concat = mergeHeads(tf.concat(outputs, 2)); // [1, Q, d]
    return plainOps.linear(concat, attn.wO, attn.bO) as tf.Tensor3D;
  };
  return { ops: { ...plainOps, name: 'long', multiHeadAttention }, kept };
}
