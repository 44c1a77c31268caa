/**
 * The attention of one long pair (4,096 tokens): the model's own encoder and decoder (§3.1,
 * model/stacks.ts; eval mode, batch 1) over the long ops (ops/long.ts), which compute each
 * attention's weights a slice of query rows at a time and pool them into thumbnails on the device.
 * The stacks release each sublayer's activations once the next has its output, so the pass holds one
 * slice of weights and one sublayer's activations at a time.
 *
 * With `keep`, each attention's projected queries Q·W^Q and keys K·W^K ([1, h, n, d_k]) are kept:
 * attention/block (inspect/attentionBlock.ts) recomputes any block of any head from them in
 * milliseconds, without the layers before it.
 */
import * as tf from '@tensorflow/tfjs-core';
import { ATTENTION_KINDS, type AttentionKind, type AttentionMaps } from '../protocol/attention';
import { type Pool, pooledCells } from '../algorithms/pool';
import { paddingMask } from './model/attention';
import type { ForwardContext } from './model/context';
import { embed, sinusoidalTable } from './model/embedding';
import { decode, encode } from './model/stacks';
import type { Transformer } from './model/transformer';
import { CHUNK_WEIGHTS, disposeKept, type KeptQK, longOps } from './ops/long';

export interface LongPass {
  maps: AttentionMaps[];
  /** log p of each target token after BOS, then of EOS (as inspect/attentionAt's tokenLogProbs). */
  tokenLogProbs: number[];
  /** Per kind, per layer (with `keep`). */
  kept: Record<AttentionKind, KeptQK[]>;
  src: number[];
  tgt: number[];
}

/**
 * The positional encodings of n positions, [n, d]. Sinusoidal ones exist for any position, so an
 * input may pass the max_len it was trained with; learned ones only up to max_len.
 */
export function positionsFor(model: Transformer, n: number, side: 'encoder' | 'decoder'): tf.Tensor2D {
  const c = model.config;
  if (c.positional === 'sinusoidal') return tf.tensor2d(sinusoidalTable(n, c.d_model), [n, c.d_model]);
  if (n > c.max_len) {
    const what = side === 'encoder' ? 'source' : 'target';
    throw new Error(
      `the ${what} has ${n} tokens, more than max_len ${c.max_len}, and this model's positions are learned ` +
        `(positional: "learned"): it has no encoding for positions past ${c.max_len - 1}, so longer inputs ` +
        `cannot be inspected; shorten the input to ${c.max_len} tokens (sinusoidal positions extend to any length)`,
    );
  }
  return tf.slice(model.layers.positions![side], [0, 0], [n, c.d_model]) as tf.Tensor2D;
}

/**
 * The pass of one pair: src (ending with EOS) and tgt (BOS first), pooled per kind by `pools`
 * (1 × 1 keeps every weight). Returns the pooled maps and the target's log-probs.
 */
export async function longPass(
  model: Transformer,
  src: number[],
  tgt: number[],
  pools: Record<AttentionKind, Pool>,
  keep = false,
): Promise<LongPass> {
  const c = model.config;
  const [S, T] = [src.length, tgt.length];
  const { ops, kept } = longOps(pools, keep);
  const ctx: ForwardContext = { training: false, ops };
  try {
    const out = tf.tidy(() => {
      const srcIds = tf.tensor2d([src], [1, S], 'int32');
      const tgtIds = tf.tensor2d([tgt], [1, T], 'int32');
      const srcMask = paddingMask(srcIds, c.pad_id); // [1, 1, 1, S]
      const tgtMask = paddingMask(tgtIds, c.pad_id); // [1, 1, 1, T]: the long ops add the causal rows
      const x = embed(model.layers.srcEmbed, positionsFor(model, S, 'encoder'), srcIds); // [1, S, d]
      const memory = encode(c, model.layers, x, srcMask, ctx); // [1, S, d]
      const y = embed(model.layers.tgtEmbed, positionsFor(model, T, 'decoder'), tgtIds); // [1, T, d]
      return decode(c, model.layers, y, memory, tgtMask, srcMask, ctx); // [1, T, d]
    });
    const maps = await readMaps(kept.maps, pools, c.heads, [S, T]);
    const tokenLogProbs = await targetLogProbs(model, out, tgt).finally(() => out.dispose());
    return { maps, tokenLogProbs, kept: kept.qk, src, tgt };
  } catch (err) {
    disposeKept(kept.qk);
    throw err;
  } finally {
    tf.dispose(ATTENTION_KINDS.flatMap((kind) => kept.maps[kind]));
  }
}

/** The pooled maps kept per kind and layer, read into one [L, h, rows, cols] map per kind. */
async function readMaps(
  pooled: Record<AttentionKind, tf.Tensor3D[]>,
  pools: Record<AttentionKind, Pool>,
  h: number,
  [S, T]: [number, number],
): Promise<AttentionMaps[]> {
  const axes = { encoder_self: [S, S], decoder_self: [T, T], cross: [T, S] } as const;
  return Promise.all(
    ATTENTION_KINDS.map(async (kind): Promise<AttentionMaps> => {
      const p = pools[kind];
      const layers = pooled[kind];
      const [rows, cols] = [pooledCells(axes[kind][0], p.rows), pooledCells(axes[kind][1], p.cols)];
      const shape: AttentionMaps['shape'] = [layers.length, h, rows, cols];
      const weights = new Float32Array(layers.length * h * rows * cols);
      for (const [i, m] of layers.entries()) weights.set((await m.data()) as Float32Array, i * h * rows * cols);
      const isPooled = p.rows > 1 || p.cols > 1;
      return { kind, shape, weights, ...(isPooled ? { pool: p } : {}) };
    }),
  );
}

/** log p(y_{t+1} | y_≤t, X) of each target position (EOS after the last), a slice of rows at a time. */
async function targetLogProbs(model: Transformer, out: tf.Tensor3D, tgt: number[]): Promise<number[]> {
  const [, T, d] = out.shape;
  const V = model.config.tgt_vocab;
  const rows = Math.max(1, Math.floor(CHUNK_WEIGHTS / V));
  const lp: number[] = [];
  for (let r0 = 0; r0 < T; r0 += rows) {
    const r1 = Math.min(T, r0 + rows);
    const t = tf.tidy(() => model.generate(tf.slice(out, [0, r0, 0], [1, r1 - r0, d]))); // [1, r, V]
    const data = (await t.data()) as Float32Array;
    t.dispose();
    for (let r = r0; r < r1; r++) {
      const next = r + 1 < T ? tgt[r + 1]! : model.config.eos_id;
      lp.push(Math.max(data[(r - r0) * V + next]!, -1e30)); // finite: JSON has no −∞
    }
  }
  return lp;
}
