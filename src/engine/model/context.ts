/** What one forward pass needs besides its inputs (model/stacks.ts, model/transformer.ts). */
import type * as tf from '@tensorflow/tfjs-core';
import type { AttentionKind } from '../../protocol/attention';
import type { ModelOps } from '../ops/modelOps';
import type { HeadGate } from './attention';

/** What one attention read: its queries' input [B, T, d] and its keys and values, projected, [B, h, S, dk]. */
export interface AttentionInputs {
  xq: tf.Tensor3D;
  k: tf.Tensor4D;
  v: tf.Tensor4D;
}

/** A list per attention kind, empty: what a pass records into (ForwardContext.record, …). */
export function perKind<T>(): Record<AttentionKind, T[]> {
  return { encoder_self: [], decoder_self: [], cross: [] };
}

export interface ForwardContext {
  training: boolean;
  /** Seeds for dropout masks, one a call, so that a run repeats; undefined: unseeded. */
  nextSeed?: () => number;
  /** When given, every layer's attention weights [B, h, T, S] are kept here (outside tf.tidy). */
  record?: Record<AttentionKind, tf.Tensor4D[]>;
  /** When given, every layer's head outputs before W^O [B, h, T, dv] are kept here (outside tf.tidy). */
  recordHeads?: Record<AttentionKind, tf.Tensor4D[]>;
  /**
   * When given, every layer's attention inputs are kept here (outside tf.tidy): what value-weighted
   * attention and the score decomposition read (inspect/valueWeighted.ts, inspect/headScores.ts).
   */
  recordInputs?: Record<AttentionKind, AttentionInputs[]>;
  /** Per kind, per layer: the heads' gates ξ (and means): head masks and ablations (attention.ts HeadGate). */
  heads?: Partial<Record<AttentionKind, HeadGate[]>>;
  /**
   * Decoding only: linear maps, residual + LayerNorm and one query's attention as single fused kernels
   * (ops/decoding.ts), which have no gradients; ignored when training or recording.
   */
  fused?: boolean;
  /** The ops this pass runs, instead of those ops/index.ts opsFor picks (tests compare them). */
  ops?: ModelOps;
}
