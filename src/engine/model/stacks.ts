/**
 * §3.1 The encoder and decoder stacks: N identical layers, each sublayer wrapped in a residual
 * connection and LayerNorm. Post-LN (the paper): LayerNorm(x + Dropout(Sublayer(x))); pre-LN
 * (norm_first): x + Dropout(Sublayer(LayerNorm(x))). Written once over the ops the pass runs
 * (ops/index.ts opsFor: plain tfjs ops, the training kernels or the decoding kernels).
 *
 * Each sublayer runs in its own tf.tidy scope, and its input goes once it has its output: a pass
 * holds one sublayer's intermediates at a time (what the backward pass needs, the tape keeps).
 */
import * as tf from '@tensorflow/tfjs-core';
import type { AttentionKind } from '../../protocol/attention';
import { opsFor } from '../ops';
import type { AttentionCall, ModelOps } from '../ops/modelOps';
import type { KeysValues } from './attention';
import type { TransformerConfig } from './config';
import type { ForwardContext } from './context';
import type { NormParams, TransformerLayers } from './params';

/** The residual rule's first half: what the sublayer reads, x (post-LN) or LayerNorm(x) (pre-LN). */
function sublayerInput(ops: ModelOps, c: TransformerConfig, norm: NormParams, x: tf.Tensor3D): tf.Tensor3D {
  return c.norm_first ? (ops.layerNorm(norm, x) as tf.Tensor3D) : x;
}

/** Its second half, from the sublayer's output r: LayerNorm(x + Dropout(r)) or x + Dropout(r). [B, T, d] */
function sublayerOutput(
  ops: ModelOps,
  c: TransformerConfig,
  norm: NormParams,
  x: tf.Tensor3D,
  r: tf.Tensor,
  rate: number,
  seed: number | undefined,
): tf.Tensor3D {
  if (c.norm_first) return tf.add(x, ops.dropout(r, rate, seed)) as tf.Tensor3D;
  return ops.dropoutAddNorm(norm, x, r, rate, seed) as tf.Tensor3D;
}

/**
 * The residual stream of one stack: x [B, T, d] through each sublayer's residual connection in turn
 * (§3.1, §5.4: dropout on the sublayer's output). Each sublayer runs in its own tf.tidy, and the x
 * before it goes once it has its output, unless that x is the caller's.
 */
function residualStream(ops: ModelOps, c: TransformerConfig, ctx: ForwardContext, input: tf.Tensor3D) {
  let x = input;
  return {
    get x(): tf.Tensor3D {
      return x;
    },
    sublayer(norm: NormParams, sublayer: (y: tf.Tensor3D) => tf.Tensor): void {
      const next = tf.tidy(() => {
        const r = sublayer(sublayerInput(ops, c, norm, x)); // [B, T, d]
        return sublayerOutput(ops, c, norm, x, r, ctx.training ? c.dropout : 0, ctx.nextSeed?.());
      });
      if (x !== input) x.dispose();
      x = next;
    },
  };
}

/** One attention's place in the model: its kind, its heads' gates, and where its weights are kept. */
function site(ctx: ForwardContext, kind: AttentionKind, layer: number): Pick<AttentionCall, 'kind' | 'gate' | 'keep'> {
  const keep =
    ctx.record || ctx.recordHeads || ctx.recordInputs
      ? (weights: tf.Tensor4D, heads: tf.Tensor4D, { xq, kv }: { xq: tf.Tensor3D; kv: KeysValues }) => {
          ctx.record?.[kind].push(tf.keep(weights)); // [B, h, T, S]
          ctx.recordHeads?.[kind].push(tf.keep(heads)); // [B, h, T, dv]
          ctx.recordInputs?.[kind].push({ xq: tf.keep(tf.clone(xq)), k: tf.keep(kv.k), v: tf.keep(kv.v) }); // [B, T, d], [B, h, S, dk]
        }
      : undefined;
  return { kind, gate: ctx.heads?.[kind]?.[layer], keep };
}

/** Encoder: x [B, S, d], srcMask [B, 1, 1, S] → memory [B, S, d] */
export function encode(
  c: TransformerConfig,
  layers: TransformerLayers,
  x: tf.Tensor3D,
  srcMask: tf.Tensor,
  ctx: ForwardContext,
): tf.Tensor3D {
  const ops = opsFor(ctx);
  const stream = residualStream(ops, c, ctx, x);
  for (const [i, layer] of layers.encoder.entries()) {
    // Multi-head self-attention over the source (§3.2.3), then the position-wise FFN (§3.3).
    const attention = { attn: layer.selfAttn, heads: c.heads, mask: srcMask, ...site(ctx, 'encoder_self', i) };
    stream.sublayer(layer.norm1, (y) => ops.multiHeadAttention({ ...attention, xq: y, xkv: y }));
    stream.sublayer(layer.norm2, (y) => ops.feedForward(layer.ffn, y));
  }
  return layers.encoderNorm ? (ops.layerNorm(layers.encoderNorm, stream.x) as tf.Tensor3D) : stream.x;
}

/** Per decoder layer: the self-attention keys/values of the positions decoded so far, and the
 *  cross-attention keys/values of the memory (computed once per sentence). */
export interface DecoderCache {
  self: (KeysValues | null)[];
  cross: KeysValues[];
  /** When given, row i of `self` is row rows[i] of the stored tensors (a beam's reordering, done while appending). */
  rows?: tf.Tensor1D;
}

/** Projects the memory [B, S, d] for every layer's cross-attention, in the given ops. */
export function crossKeysValues(
  c: TransformerConfig,
  layers: TransformerLayers,
  memory: tf.Tensor3D,
  ops: ModelOps,
): KeysValues[] {
  return layers.decoder.map((layer) => ops.keysValues(layer.crossAttn, c.heads, memory));
}

/**
 * Decoder: y [B, T, d] (the newest T positions), the memory [B, S, d] or its keys/values projected
 * per layer (crossKeysValues), tgtMask broadcastable to [B, 1, T, T_total], srcMask [B, 1, 1, S] →
 * [B, T, d]. With `cache`, the self-attention keys and values of earlier positions are taken from it
 * and the new ones appended (incremental decoding).
 */
export function decode(
  c: TransformerConfig,
  layers: TransformerLayers,
  y: tf.Tensor3D,
  memory: tf.Tensor3D | KeysValues[],
  tgtMask: tf.Tensor | undefined,
  srcMask: tf.Tensor,
  ctx: ForwardContext,
  cache?: DecoderCache,
): tf.Tensor3D {
  const ops = opsFor(ctx);
  const stream = residualStream(ops, c, ctx, y);
  for (const [i, layer] of layers.decoder.entries()) {
    // The cached positions' keys and values with the new ones appended: [B, h, T_total, dk].
    // Kept: the cache outlives the sublayer's scope (its owner, decode/incremental.ts, disposes it).
    const extend = (kv: KeysValues): KeysValues => {
      const past = cache!.self[i];
      const all = past ? ops.appendKeysValues(past, kv, cache!.rows) : kv;
      return (cache!.self[i] = { k: tf.keep(all.k), v: tf.keep(all.v) });
    };
    // Masked self-attention (§3.2.3: no later positions), attention over the memory, the FFN (§3.3).
    const self = { attn: layer.selfAttn, heads: c.heads, mask: tgtMask, ...site(ctx, 'decoder_self', i) };
    const cross = { attn: layer.crossAttn, heads: c.heads, mask: srcMask, ...site(ctx, 'cross', i) };
    const kv = Array.isArray(memory) ? memory[i]! : memory; // [B, S, d], or per head [B, h, S, dk]
    stream.sublayer(layer.norm1, (z) =>
      ops.multiHeadAttention({ ...self, xq: z, xkv: z, ...(cache ? { extend } : {}) }),
    );
    stream.sublayer(layer.norm2, (z) => ops.multiHeadAttention({ ...cross, xq: z, xkv: kv }));
    stream.sublayer(layer.norm3, (z) => ops.feedForward(layer.ffn, z));
  }
  return layers.decoderNorm ? (ops.layerNorm(layers.decoderNorm, stream.x) as tf.Tensor3D) : stream.x;
}
