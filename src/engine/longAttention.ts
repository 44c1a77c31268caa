/**
 * The attention of one long pair (4,096 tokens), layer by layer: each attention computes its
 * weights a slice of query rows at a time, pools them into thumbnails (algorithms/pool.ts) and
 * releases them before the next slice; a layer's activations are released once the next layer
 * has them. So no more than one slice of [h, rows, keys] weights (CHUNK_WEIGHTS) is ever held,
 * where all maps at once would take 9.2 GB on the base shape. The model's forward pass of §3.1,
 * eval mode (no dropout), batch 1.
 *
 * With `keep`, each attention's projected queries Q·W^Q and keys K·W^K ([1, h, n, d_k]) are kept:
 * attention/block (inspect/attentionBlock.ts) recomputes any block of any head from them in
 * milliseconds, without the layers before it.
 */
import * as tf from '@tensorflow/tfjs-core';
import { ATTENTION_KINDS, type AttentionKind, type AttentionMaps } from '../protocol/attention';
import { maxPoolBlocks, type Pool, pooledCells } from '../algorithms/pool';
import {
  causalMask,
  mergeHeads,
  paddingMask,
  project,
  projectKeysValues,
  scaledDotProductAttention,
} from './model/attention';
import { embed, sinusoidalTable } from './model/embedding';
import type { AttentionParams, NormParams } from './model/params';
import { sublayerInput, sublayerOutput } from './model/stacks';
import type { Transformer } from './model/transformer';
import { plainOps as ops } from './ops';

/** Weights of one slice of query rows: 8 M floats (32 MB), e.g. 256 rows × 4,096 keys × 8 heads. */
export const CHUNK_WEIGHTS = 8 << 20;

/** One attention's projected queries and keys, kept for attention/block: [1, h, n, d_k] each. */
export interface KeptQK {
  q: tf.Tensor4D;
  k: tf.Tensor4D;
}

export interface LongPass {
  maps: AttentionMaps[];
  /** log p of each target token after BOS, then of EOS (as inspect/attentionAt's tokenLogProbs). */
  tokenLogProbs: number[];
  /** Per kind, per layer (with `keep`). */
  kept: Record<AttentionKind, KeptQK[]>;
  src: number[];
  tgt: number[];
}

export function disposeKept(kept: Record<AttentionKind, KeptQK[]>): void {
  for (const kind of ATTENTION_KINDS) for (const { q, k } of kept[kind].splice(0)) tf.dispose([q, k]);
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
  return tf.keep(tf.slice(model.layers.positions![side], [0, 0], [n, c.d_model]) as tf.Tensor2D);
}

/** The additive bias of query rows [r0, r1) over n keys: −∞ past the row (causal) and at padding. */
function rowMask(keyPad: tf.Tensor4D, causal: boolean, r0: number, r1: number, n: number): tf.Tensor {
  if (!causal) return keyPad; // [1, 1, 1, n]
  const full = r0 === 0 && r1 === n ? causalMask(n) : sliceCausal(r0, r1, n); // [1, 1, r, n]
  return tf.add(full, keyPad);
}

function sliceCausal(r0: number, r1: number, n: number): tf.Tensor4D {
  const i = tf.reshape(tf.range(r0, r1, 1, 'int32'), [r1 - r0, 1]); // query positions
  const j = tf.reshape(tf.range(0, n, 1, 'int32'), [1, n]); // key positions
  const masked = tf.where(tf.greater(j, i), tf.fill([r1 - r0, n], -Infinity), tf.zeros([r1 - r0, n]));
  return tf.reshape(masked, [1, 1, r1 - r0, n]);
}

/** Where one attention's pooled weights go: maps of [L, H, rows, cols] cells pooled by `pool`. */
interface Sink {
  out: Float32Array;
  layer: number;
  heads: number;
  pool: Pool;
  cells: [number, number];
}

/**
 * MultiHead(xq, xkv)·W^O (§3.2.2) a slice of query rows at a time. xq [1, Q, d], xkv [1, K, d]
 * → [1, Q, d]; each slice's weights [1, h, r, K] are pooled into `sink` and released.
 */
async function attendInSlices(
  attn: AttentionParams,
  h: number,
  xq: tf.Tensor3D,
  xkv: tf.Tensor3D,
  mask: (r0: number, r1: number) => tf.Tensor,
  sink: Sink,
  keep: KeptQK[] | undefined,
): Promise<tf.Tensor3D> {
  const [, Q, d] = xq.shape;
  const K = xkv.shape[1];
  const q = tf.tidy(() => project(attn, 'q', h, xq)); // [1, h, Q, d_k]
  const kv = tf.tidy((): { k: tf.Tensor4D; v: tf.Tensor4D } => projectKeysValues(attn, h, xkv)); // [1, h, K, d_k] each
  const br = sink.pool.rows;
  const rows = Math.max(br, Math.floor(CHUNK_WEIGHTS / (h * K) / br) * br);
  const outs: tf.Tensor[] = [];
  try {
    for (let r0 = 0; r0 < Q; r0 += rows) {
      const r1 = Math.min(Q, r0 + rows);
      const [out, weights] = tf.tidy(() => {
        const qr = tf.slice(q, [0, 0, r0, 0], [1, h, r1 - r0, d / h]); // [1, h, r, d_k]
        const a = scaledDotProductAttention(qr, kv.k, kv.v, mask(r0, r1)); // [1, h, r, d_v], [1, h, r, K]
        const merged = mergeHeads(a.output); // [1, r, d]
        return [ops.linear(merged, attn.wO, attn.bO), a.weights]; // [1, r, d]
      });
      outs.push(out);
      const w = (await weights.data()) as Float32Array;
      weights.dispose();
      const [cr, cc] = sink.cells;
      for (let hd = 0; hd < h; hd++) {
        const at = ((sink.layer * sink.heads + hd) * cr + r0 / br) * cc;
        maxPoolBlocks(w, r1 - r0, K, br, sink.pool.cols, sink.out, hd * (r1 - r0) * K, at);
      }
    }
    return tf.concat(outs, 1) as tf.Tensor3D; // [1, Q, d]
  } finally {
    tf.dispose(outs);
    tf.dispose(kv.v);
    if (keep) keep.push({ q, k: kv.k });
    else tf.dispose([q, kv.k]);
  }
}

/**
 * The residual connection of model/stacks.ts (eval: no dropout) around a sublayer that awaits its
 * slices' weights. Releases x.
 */
async function residual(
  model: Transformer,
  norm: NormParams,
  x: tf.Tensor3D,
  f: (y: tf.Tensor3D) => Promise<tf.Tensor3D>,
): Promise<tf.Tensor3D> {
  const c = model.config;
  const y = tf.tidy(() => sublayerInput(ops, c, norm, x)); // x, or LayerNorm(x) (pre-LN)
  try {
    const z = await f(y);
    const next = tf.tidy(() => sublayerOutput(ops, c, norm, x, z, 0, undefined));
    z.dispose();
    return next;
  } finally {
    if (y !== x) y.dispose();
    x.dispose();
  }
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
  const L = { encoder_self: c.encoder_layers, decoder_self: c.decoder_layers, cross: c.decoder_layers };
  const axes = { encoder_self: [S, S], decoder_self: [T, T], cross: [T, S] } as const;
  const maps = ATTENTION_KINDS.map((kind): AttentionMaps => {
    const p = pools[kind];
    const shape: AttentionMaps['shape'] = [
      L[kind],
      c.heads,
      pooledCells(axes[kind][0], p.rows),
      pooledCells(axes[kind][1], p.cols),
    ];
    const pooled = p.rows > 1 || p.cols > 1;
    return { kind, shape, weights: new Float32Array(shape.reduce((a, b) => a * b, 1)), ...(pooled ? { pool: p } : {}) };
  });
  const sink = (kind: AttentionKind, layer: number): Sink => {
    const m = maps[ATTENTION_KINDS.indexOf(kind)]!;
    return { out: m.weights, layer, heads: c.heads, pool: pools[kind], cells: [m.shape[2], m.shape[3]] };
  };
  const kept = { encoder_self: [], decoder_self: [], cross: [] } as Record<AttentionKind, KeptQK[]>;
  const held: tf.Tensor[] = [];
  const hold = <X extends tf.Tensor>(t: X): X => (held.push(t), t);
  try {
    const srcIds = hold(tf.tensor2d([src], [1, S], 'int32'));
    const tgtIds = hold(tf.tensor2d([tgt], [1, T], 'int32'));
    const srcPad = hold(paddingMask(srcIds, c.pad_id)); // [1, 1, 1, S]
    const tgtPad = hold(paddingMask(tgtIds, c.pad_id)); // [1, 1, 1, T]
    const srcPos = hold(positionsFor(model, S, 'encoder')); // [S, d]
    const tgtPos = hold(positionsFor(model, T, 'decoder')); // [T, d]
    // 1. Encoder (§3.1), layer by layer.
    let x = tf.tidy(() => embed(model.layers.srcEmbed, srcPos, srcIds)); // [1, S, d]
    for (const [i, layer] of model.layers.encoder.entries()) {
      const k = keep ? kept.encoder_self : undefined;
      const mask = (r0: number, r1: number) => rowMask(srcPad, false, r0, r1, S);
      x = await residual(model, layer.norm1, x, (y) =>
        attendInSlices(layer.selfAttn, c.heads, y, y, mask, sink('encoder_self', i), k),
      );
      x = await residual(model, layer.norm2, x, async (y) =>
        tf.tidy(() => ops.feedForward(layer.ffn, y) as tf.Tensor3D),
      );
    }
    const norm = model.layers.encoderNorm;
    const memory = hold(norm ? tf.tidy(() => ops.layerNorm(norm, x)) : x) as tf.Tensor3D; // [1, S, d]
    if (norm) x.dispose();
    // 2. Decoder: masked self-attention, cross-attention over the memory, FFN.
    let y = tf.tidy(() => embed(model.layers.tgtEmbed, tgtPos, tgtIds)); // [1, T, d]
    for (const [i, layer] of model.layers.decoder.entries()) {
      const selfMask = (r0: number, r1: number) => rowMask(tgtPad, true, r0, r1, T);
      const crossMask = (r0: number, r1: number) => rowMask(srcPad, false, r0, r1, S);
      y = await residual(model, layer.norm1, y, (z) =>
        attendInSlices(
          layer.selfAttn,
          c.heads,
          z,
          z,
          selfMask,
          sink('decoder_self', i),
          keep ? kept.decoder_self : undefined,
        ),
      );
      y = await residual(model, layer.norm2, y, (z) =>
        attendInSlices(layer.crossAttn, c.heads, z, memory, crossMask, sink('cross', i), keep ? kept.cross : undefined),
      );
      y = await residual(model, layer.norm3, y, async (z) =>
        tf.tidy(() => ops.feedForward(layer.ffn, z) as tf.Tensor3D),
      );
    }
    const dNorm = model.layers.decoderNorm;
    const out = hold(dNorm ? tf.tidy(() => ops.layerNorm(dNorm, y)) : y) as tf.Tensor3D; // [1, T, d]
    if (dNorm) y.dispose();
    return { maps, tokenLogProbs: await targetLogProbs(model, out, tgt), kept, src, tgt };
  } catch (err) {
    disposeKept(kept);
    throw err;
  } finally {
    tf.dispose(held);
  }
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
