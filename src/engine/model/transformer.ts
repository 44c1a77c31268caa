/**
 * The Transformer of "Attention Is All You Need" (Vaswani et al., 2017), Figure 1: an encoder and a
 * decoder stack between embeddings and a linear + softmax generator.
 */
import * as tf from '@tensorflow/tfjs-core';
import { causalMask, paddingMask } from './attention';
import { validateConfig, type TransformerConfig } from './config';
import { embed, sinusoidalTable } from './embedding';
import { type ModelOps, opsFor, plainOps } from '../ops';
import type { ForwardContext } from './context';
import { disposeParams, initParams, type Params, resolveLayers, type TransformerLayers } from './params';
import { decode, encode } from './stacks';

export const EVAL: ForwardContext = { training: false };

export class Transformer {
  readonly config: TransformerConfig;
  /** The parameters by their PyTorch names: what checkpoints and the optimizer read and write. */
  readonly params: Params;
  /** The same parameters as the model reads them (resolved once from `params`). */
  readonly layers: TransformerLayers;
  /** The sinusoidal table [max_len, d] (a constant), or null with learned positions. */
  private readonly sinusoid: tf.Tensor2D | null;

  constructor(config: TransformerConfig, params?: Params, seed = 1) {
    this.config = validateConfig(config);
    this.params = params ?? initParams(this.config, seed);
    this.layers = resolveLayers(this.config, this.params);
    this.sinusoid =
      this.config.positional === 'sinusoidal'
        ? tf.tensor2d(sinusoidalTable(this.config.max_len, this.config.d_model), [
            this.config.max_len,
            this.config.d_model,
          ])
        : null;
  }

  private positions(side: 'encoder' | 'decoder'): tf.Tensor {
    if (this.sinusoid) return this.sinusoid;
    if (!this.layers.positions) throw new Error('learned positions without their parameters'); // resolveLayers has them
    return this.layers.positions[side];
  }

  private drop(x: tf.Tensor3D, ctx: ForwardContext): tf.Tensor3D {
    return opsFor(ctx).dropout(x, ctx.training ? this.config.dropout : 0, ctx.nextSeed?.()) as tf.Tensor3D;
  }

  /** src: [B, S] int32 → memory [B, S, d] and its padding mask [B, 1, 1, S] */
  encodeSource(src: tf.Tensor2D, ctx: ForwardContext = EVAL): { memory: tf.Tensor3D; srcMask: tf.Tensor4D } {
    const srcMask = this.sourceMask(src); // [B, 1, 1, S]
    const x = this.drop(embed(this.layers.srcEmbed, this.positions('encoder'), src), ctx); // [B, S, d]
    return { memory: encode(this.config, this.layers, x, srcMask, ctx), srcMask };
  }

  /** Decoder output → logits y·Wᵀ + b (before the softmax), in `ops`. y: [B, T, d] → [B, T, V] */
  project(y: tf.Tensor3D, ops: ModelOps = plainOps): tf.Tensor3D {
    return ops.linear(y, this.layers.generator.w, this.layers.generator.b) as tf.Tensor3D;
  }

  /** Decoder output → log-probabilities: log softmax(y·Wᵀ + b). y: [B, T, d] → [B, T, V] */
  generate(y: tf.Tensor3D): tf.Tensor3D {
    return tf.logSoftmax(this.project(y)) as tf.Tensor3D;
  }

  /**
   * Teacher-forced forward pass. src: [B, S], tgt: [B, T] (int32, starting with BOS) →
   * log-probabilities of the next token at each target position, [B, T, V].
   */
  forward(src: tf.Tensor2D, tgt: tf.Tensor2D, ctx: ForwardContext = EVAL): tf.Tensor3D {
    return this.generate(this.decodeTeacherForced(src, tgt, ctx));
  }

  /** As forward, but the logits (training computes its loss from them). [B, T, V] */
  logits(src: tf.Tensor2D, tgt: tf.Tensor2D, ctx: ForwardContext = EVAL): tf.Tensor3D {
    return this.project(this.decodeTeacherForced(src, tgt, ctx), opsFor(ctx));
  }

  /** The source's padding mask (encoder self- and cross-attention): src [B, S] → [B, 1, 1, S] */
  protected sourceMask(src: tf.Tensor2D): tf.Tensor4D {
    return paddingMask(src, this.config.pad_id);
  }

  /** The decoder's self-attention mask: no future positions (§3.2.3), no padding. tgt [B, T] → [B, 1, T, T] */
  protected targetMask(tgt: tf.Tensor2D): tf.Tensor {
    return tf.add(causalMask(tgt.shape[1]), paddingMask(tgt, this.config.pad_id));
  }

  /** Encoder and decoder stacks, teacher-forced: src [B, S], tgt [B, T] → decoder output [B, T, d] */
  private decodeTeacherForced(src: tf.Tensor2D, tgt: tf.Tensor2D, ctx: ForwardContext): tf.Tensor3D {
    // 1. Encode the source.
    const { memory, srcMask } = this.encodeSource(src, ctx);
    // 2. Mask padding and future positions of the target (§3.2.3).
    const tgtMask = this.targetMask(tgt); // [B, 1, T, T]
    // 3. Embed the shifted-right target and decode against the memory.
    const y = this.drop(embed(this.layers.tgtEmbed, this.positions('decoder'), tgt), ctx); // [B, T, d]
    return decode(this.config, this.layers, y, memory, tgtMask, srcMask, ctx); // [B, T, d]
  }

  /** Embeds target positions [offset, offset + T) for incremental decoding. ids: [B, T] → [B, T, d] */
  embedTarget(ids: tf.Tensor2D, offset: number): tf.Tensor3D {
    return embed(this.layers.tgtEmbed, this.positions('decoder'), ids, offset);
  }

  dispose(): void {
    this.sinusoid?.dispose();
    disposeParams(this.params);
  }
}
