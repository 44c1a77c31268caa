/**
 * attention/block: one head's weights over queries [q0, q1) × keys [k0, k1) of the long pair the
 * attention view shows. The pass that made its thumbnails (longAttention.ts) kept each attention's
 * Q·W^Q and K·W^K; a block is softmax(Q_h·K_hᵀ / √d_k + mask) over all keys (so its rows are the
 * rows of the full map), cut to the keys asked for and max-pooled to at most BLOCK_CELLS a side.
 * One pass is kept (the newest), and released after CACHE_IDLE_MS unused or when another replaces it.
 */
import * as tf from '@tensorflow/tfjs-core';
import {
  type AttentionBlock,
  type AttentionBlockParams,
  type BlockRange,
  blockPool,
} from '../../protocol/attentionBlock';
import type { InputPair } from '../../protocol/attention';
import { maxPoolBlocks, pooledCells } from '../../algorithms/pool';
import type { LongPass } from '../longAttention';
import { CHUNK_WEIGHTS, disposeKept } from '../ops/long';

/** How long a kept pass waits for a block request before its tensors are released. */
export const CACHE_IDLE_MS = 10 * 60_000;

interface Kept {
  key: string;
  pass: LongPass;
  padId: number;
  timer: ReturnType<typeof setTimeout>;
}
let kept: Kept | undefined;

/** What names a pass: the run, the checkpoint's step and the input (a decoded target decodes alike). */
export const passKey = (runDir: string, step: number | undefined, input: InputPair): string =>
  JSON.stringify([runDir, step ?? null, input]);

/** Keeps `pass` for blocks, releasing the one kept before. */
export function keepPass(key: string, pass: LongPass, padId: number): void {
  releasePass();
  kept = { key, pass, padId, timer: setTimeout(releasePass, CACHE_IDLE_MS) };
  kept.timer.unref?.();
}

export function releasePass(): void {
  if (!kept) return;
  clearTimeout(kept.timer);
  disposeKept(kept.pass.kept);
  kept = undefined;
}

/** The kept pass of `key`, or undefined. */
export function keptPass(key: string): { pass: LongPass; padId: number } | undefined {
  if (kept?.key !== key) return undefined;
  kept.timer.refresh?.();
  return kept;
}

/** The block `p` asks for, from the kept pass, computing that pass first (`compute`) when it is not kept. */
export async function attentionBlockAt(
  p: AttentionBlockParams,
  compute: () => Promise<unknown>,
): Promise<AttentionBlock> {
  const key = passKey(p.runDir, p.step, p.input);
  if (!keptPass(key)) await compute();
  const k = keptPass(key);
  if (!k)
    throw new Error(
      'attention/block: this input was shown whole (no pooled maps); its weights are all in attention/get',
    );
  return blockOf(k.pass, k.padId, p);
}

/** One head's block from a pass's kept Q and K; errors name the field and its bound. */
export async function blockOf(pass: LongPass, padId: number, r: BlockRange): Promise<AttentionBlock> {
  const layers = pass.kept[r.kind];
  if (r.layer >= layers.length)
    throw new Error(
      `attention/block params.layer must be below ${layers.length} (the ${r.kind} layers), got ${r.layer}`,
    );
  const { q, k } = layers[r.layer]!;
  const [, heads, Q, dk] = q.shape;
  const K = k.shape[2];
  if (r.head >= heads) throw new Error(`attention/block params.head must be below ${heads}, got ${r.head}`);
  if (r.q1 > Q)
    throw new Error(`attention/block params.q1 must be at most ${Q} (the queries of ${r.kind}), got ${r.q1}`);
  if (r.k1 > K) throw new Error(`attention/block params.k1 must be at most ${K} (the keys of ${r.kind}), got ${r.k1}`);
  const keyIds = r.kind === 'decoder_self' ? pass.tgt : pass.src;
  const causal = r.kind === 'decoder_self';
  const pool = blockPool(r);
  const [rows, cols] = [pooledCells(r.q1 - r.q0, pool.rows), pooledCells(r.k1 - r.k0, pool.cols)];
  const out = new Float32Array(rows * cols);
  const kc = r.k1 - r.k0;
  const slice = Math.max(pool.rows, Math.floor(CHUNK_WEIGHTS / K / pool.rows) * pool.rows);
  const kh = tf.tidy(() => tf.reshape(tf.slice(k, [0, r.head, 0, 0], [1, 1, K, dk]), [K, dk])); // [K, d_k]
  try {
    for (let a = r.q0; a < r.q1; a += slice) {
      const b = Math.min(r.q1, a + slice);
      const bias = new Float32Array((b - a) * K); // −∞ at padding keys and (decoder) future keys
      for (let i = a; i < b; i++)
        for (let j = 0; j < K; j++) if (keyIds[j] === padId || (causal && j > i)) bias[(i - a) * K + j] = -Infinity;
      const w = tf.tidy(() => {
        const qh = tf.reshape(tf.slice(q, [0, r.head, a, 0], [1, 1, b - a, dk]), [b - a, dk]); // [r, d_k]
        const scores = tf.add(tf.mul(tf.matMul(qh, kh, false, true), 1 / Math.sqrt(dk)), tf.tensor2d(bias, [b - a, K]));
        return tf.slice(tf.softmax(scores), [0, r.k0], [b - a, kc]); // [r, k1 − k0]
      });
      const data = (await w.data()) as Float32Array;
      w.dispose();
      maxPoolBlocks(data, b - a, kc, pool.rows, pool.cols, out, 0, ((a - r.q0) / pool.rows) * cols);
    }
  } finally {
    kh.dispose();
  }
  const { kind, layer, head, q0, q1, k0, k1 } = r;
  return { kind, layer, head, q0, q1, k0, k1, pool, shape: [rows, cols], weights: out };
}
