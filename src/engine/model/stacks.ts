/**
 * §3.1 The encoder and decoder stacks: N identical layers, each sublayer wrapped in a residual
 * connection and LayerNorm. Post-LN (the paper): LayerNorm(x + Dropout(Sublayer(x))); pre-LN
 * (norm_first): x + Dropout(Sublayer(LayerNorm(x))).
 */
import * as tf from '@tensorflow/tfjs-core';
import type { AttentionKind } from '../../protocol/attention';
import { gatherAppend, hasInferenceKernels } from '../backend/inferenceOps';
import { blockLayerNorm, dropoutAddNorm, hasTrainingKernels } from '../backend/trainingOps';
import {
  attendBlock,
  attendOneFused,
  attendTo,
  type HeadGate,
  projectKeysValues,
  projectQKVOne,
  type KeysValues,
} from './attention';
import type { TransformerConfig } from './config';
import { addNorm, dropout, LAYER_NORM_EPS, layerNorm, positionwiseFeedForward, randomSeed } from './layers';
import type { NormParams, TransformerLayers } from './params';

/** What one forward pass needs besides its inputs. */
export interface ForwardContext {
  training: boolean;
  /** Seeds for dropout masks, one a call, so that a run repeats; undefined: unseeded. */
  nextSeed?: () => number;
  /** When given, every layer's attention weights [B, h, T, S] are kept here (outside tf.tidy). */
  record?: Record<AttentionKind, tf.Tensor4D[]>;
  /** When given, every layer's head outputs before W^O [B, h, T, dv] are kept here (outside tf.tidy). */
  recordHeads?: Record<AttentionKind, tf.Tensor4D[]>;
  /** Per kind, per layer: the heads' gates ξ (and means): head masks and ablations (attention.ts HeadGate). */
  heads?: Partial<Record<AttentionKind, HeadGate[]>>;
  /**
   * Decoding only: linear maps, residual + LayerNorm and one query's attention as single fused kernels
   * (backend/inferenceOps.ts), which have no gradients; ignored when training or recording.
   */
  fused?: boolean;
}

/** Whether this pass may use the fused kernels (they keep no weights and have no gradient). */
function fusedPass(ctx: ForwardContext): boolean {
  return ctx.fused === true && !ctx.training && !ctx.record && !ctx.recordHeads;
}

/**
 * Whether this pass runs whole sequences through the kernels with gradients (backend/trainingOps.ts):
 * training and teacher-forced passes that keep no weights or head outputs and gate no heads.
 */
export function blockPass(ctx: ForwardContext): boolean {
  return !ctx.fused && !ctx.record && !ctx.recordHeads && !ctx.heads && hasTrainingKernels();
}

function keep(ctx: ForwardContext, kind: AttentionKind, r: { weights: tf.Tensor4D; heads: tf.Tensor4D }): void {
  ctx.record?.[kind].push(tf.keep(r.weights));
  ctx.recordHeads?.[kind].push(tf.keep(r.heads));
}

/** LayerNorm(x) alone (pre-LN's, and the stacks' final norms), in the pass's kernels. */
function normOf(norm: NormParams, x: tf.Tensor, ctx: ForwardContext): tf.Tensor {
  if (blockPass(ctx)) return blockLayerNorm(x, norm.gain, norm.bias, LAYER_NORM_EPS);
  return addNorm(norm, x, undefined, fusedPass(ctx));
}

/** The residual connection around a sublayer, in the configured order. */
function sublayer(
  c: TransformerConfig,
  norm: NormParams,
  x: tf.Tensor3D,
  ctx: ForwardContext,
  f: (y: tf.Tensor3D) => tf.Tensor,
): tf.Tensor3D {
  if (fusedPass(ctx)) {
    // No dropout outside training; the residual's add is inside the fused LayerNorm (post-LN).
    if (c.norm_first) return tf.add(x, f(addNorm(norm, x, undefined, true) as tf.Tensor3D)) as tf.Tensor3D;
    return addNorm(norm, x, f(x), true) as tf.Tensor3D;
  }
  if (c.norm_first && blockPass(ctx)) {
    // x + Dropout(Sublayer(LayerNorm(x))), the norm and the dropout one kernel each way.
    const y = f(normOf(norm, x, ctx) as tf.Tensor3D);
    return tf.add(x, dropout(y, c.dropout, ctx.training, ctx.nextSeed?.())) as tf.Tensor3D;
  }
  if (blockPass(ctx)) {
    // LayerNorm(x + Dropout(Sublayer(x))) as one kernel each way.
    const rate = ctx.training ? c.dropout : 0;
    return dropoutAddNorm(
      x,
      f(x),
      norm.gain,
      norm.bias,
      LAYER_NORM_EPS,
      rate,
      ctx.nextSeed?.() ?? randomSeed(),
    ) as tf.Tensor3D;
  }
  const drop = (y: tf.Tensor): tf.Tensor => dropout(y, c.dropout, ctx.training, ctx.nextSeed?.());
  if (c.norm_first) return tf.add(x, drop(f(layerNorm(norm, x) as tf.Tensor3D))) as tf.Tensor3D;
  return layerNorm(norm, tf.add(x, drop(f(x)))) as tf.Tensor3D;
}

/** Encoder: x [B, S, d], srcMask [B, 1, 1, S] → memory [B, S, d] */
export function encode(
  c: TransformerConfig,
  layers: TransformerLayers,
  x: tf.Tensor3D,
  srcMask: tf.Tensor,
  ctx: ForwardContext,
): tf.Tensor3D {
  const fused = fusedPass(ctx);
  const block = blockPass(ctx);
  for (const [i, layer] of layers.encoder.entries()) {
    x = sublayer(c, layer.norm1, x, ctx, (y) => {
      const whole = block ? attendBlock(layer.selfAttn, c.heads, y, undefined, srcMask) : null; // [B, S, d]
      if (whole) return whole;
      const kv = projectKeysValues(layer.selfAttn, c.heads, y, fused); // [B, h, S, dk]
      const r = attendTo(layer.selfAttn, c.heads, y, kv, srcMask, ctx.heads?.encoder_self?.[i], fused);
      keep(ctx, 'encoder_self', r); // [B, h, S, S]
      return r.output; // [B, S, d]
    });
    x = sublayer(c, layer.norm2, x, ctx, (y) => positionwiseFeedForward(layer.ffn, y, fused || block));
  }
  return layers.encoderNorm ? (normOf(layers.encoderNorm, x, ctx) as tf.Tensor3D) : x;
}

/** Per decoder layer: the self-attention keys/values of the positions decoded so far, and the
 *  cross-attention keys/values of the memory (computed once per sentence). */
export interface DecoderCache {
  self: (KeysValues | null)[];
  cross: KeysValues[];
  /** When given, row i of `self` is row rows[i] of the stored tensors (a beam's reordering, done while appending). */
  rows?: tf.Tensor1D;
}

/** Projects the memory for every layer's cross-attention. memory: [B, S, d]; `fused` as in ForwardContext. */
export function crossKeysValues(
  c: TransformerConfig,
  layers: TransformerLayers,
  memory: tf.Tensor3D,
  fused = false,
): KeysValues[] {
  return layers.decoder.map((layer) => projectKeysValues(layer.crossAttn, c.heads, memory, fused));
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
  const fused = fusedPass(ctx);
  const oneStep = fused && y.shape[1] === 1 && hasInferenceKernels();
  const block = blockPass(ctx) && !cache && !Array.isArray(memory);
  let projected = Array.isArray(memory) ? memory : undefined; // the memory's keys/values, when needed
  const cross = (i: number): KeysValues => (projected ??= crossKeysValues(c, layers, memory as tf.Tensor3D, fused))[i]!;
  for (const [i, layer] of layers.decoder.entries()) {
    y = sublayer(c, layer.norm1, y, ctx, (z) => {
      const whole = block && tgtMask ? attendBlock(layer.selfAttn, c.heads, z, undefined, tgtMask) : null;
      if (whole) return whole; // [B, T, d]
      // One position with the fused kernels: W^Q, W^K, W^V as one product, split (PyTorch's in_proj).
      const qkv = oneStep ? projectQKVOne(layer.selfAttn, c.heads, z) : undefined; // 3 × [B, h, 1, dk]
      let kv = qkv ?? projectKeysValues(layer.selfAttn, c.heads, z, fused); // [B, h, T, dk]
      const past = cache?.self[i];
      const rows = cache?.rows;
      const append = (p: tf.Tensor4D, x: tf.Tensor4D) => gatherAppend(p, x, rows!) as tf.Tensor4D; // [B, h, T_total, dk]
      if (past && rows) kv = { k: append(past.k, kv.k), v: append(past.v, kv.v) };
      else if (past) kv = { k: tf.concat([past.k, kv.k], 2), v: tf.concat([past.v, kv.v], 2) }; // [B, h, T_total, dk]
      if (cache) cache.self[i] = kv;
      const gates = ctx.heads?.decoder_self?.[i];
      const one = fused ? attendOneFused(layer.selfAttn, c.heads, z, kv, tgtMask, gates, qkv?.q) : null; // [B, 1, d]
      if (one) return one;
      const r = attendTo(layer.selfAttn, c.heads, z, kv, tgtMask, gates, fused);
      keep(ctx, 'decoder_self', r); // [B, h, T, T_total]
      return r.output;
    });
    y = sublayer(c, layer.norm2, y, ctx, (z) => {
      const whole = block ? attendBlock(layer.crossAttn, c.heads, z, memory as tf.Tensor3D, srcMask) : null; // [B, T, d]
      if (whole) return whole;
      const gates = ctx.heads?.cross?.[i];
      const one = fused ? attendOneFused(layer.crossAttn, c.heads, z, cross(i), srcMask, gates) : null; // [B, 1, d]
      if (one) return one;
      const r = attendTo(layer.crossAttn, c.heads, z, cross(i), srcMask, gates, fused);
      keep(ctx, 'cross', r); // [B, h, T, S]
      return r.output;
    });
    y = sublayer(c, layer.norm3, y, ctx, (z) => positionwiseFeedForward(layer.ffn, z, fused || block));
  }
  return layers.decoderNorm ? (normOf(layers.decoderNorm, y, ctx) as tf.Tensor3D) : y;
}
