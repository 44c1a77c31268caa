/**
 * Where a non-finite training step first went wrong (the `nonfinite` check names it): the first
 * head, in the order the forward pass computes them (encoder layers, then each decoder layer's
 * self- and cross-attention), whose attention weights or output are not finite on the step's
 * batch; failing that, the first head whose gradient norm is not finite.
 */
import { perKind } from '../model/context';
import * as tf from '@tensorflow/tfjs-core';
import { ATTENTION_KINDS, type AttentionKind, headId } from '../../protocol/attention';
import type { Batch } from '../data/batchStream';
import type { Transformer } from '../model/transformer';
import { headIds } from './telemetry';

export interface NonFiniteSite {
  head: string;
  where: 'attention weights' | 'head output' | 'gradient';
}

/** [kind, layer] in the order of the forward pass. */
function forwardOrder(encoderLayers: number, decoderLayers: number): [AttentionKind, number][] {
  const enc = Array.from({ length: encoderLayers }, (_, i): [AttentionKind, number] => ['encoder_self', i]);
  const dec = Array.from({ length: decoderLayers }, (_, i): [AttentionKind, number][] => [
    ['decoder_self', i],
    ['cross', i],
  ]);
  return [...enc, ...dec.flat()];
}

/**
 * The first non-finite head of a forward pass over `batch` (eval mode), else of `headGradNorms`
 * (telemetry/heads.ts order). Undefined when every head is finite (the loss alone overflowed).
 */
export async function locateNonFinite(
  model: Transformer,
  batch: Batch,
  headGradNorms?: Float32Array,
): Promise<NonFiniteSite | undefined> {
  const c = model.config;
  const record = perKind<tf.Tensor4D>();
  const recordHeads = perKind<tf.Tensor4D>();
  const order = forwardOrder(c.encoder_layers, c.decoder_layers);
  const flags = tf.tidy(() => {
    const src = tf.tensor2d(batch.src, undefined, 'int32'); // [B, S]
    const tgt = tf.tensor2d(batch.tgtIn, undefined, 'int32'); // [B, T]
    model.forward(src, tgt, { training: false, record, recordHeads });
    const bad = (t: tf.Tensor4D) => tf.any(tf.logicalNot(tf.isFinite(t)), [0, 2, 3]); // [h]
    // [sites, 2, h]: per attention in forward order, its weights' and its outputs' flags.
    return tf.stack(order.map(([k, l]) => tf.stack([bad(record[k][l]!), bad(recordHeads[k][l]!)])));
  });
  let data: Uint8Array;
  try {
    data = (await flags.data()) as Uint8Array;
  } finally {
    flags.dispose();
    for (const k of ATTENTION_KINDS) tf.dispose([...record[k], ...recordHeads[k]]);
  }
  const h = c.heads;
  for (let s = 0; s < order.length; s++)
    for (const [j, where] of (['attention weights', 'head output'] as const).entries())
      for (let head = 0; head < h; head++)
        if (data[(s * 2 + j) * h + head])
          return { head: headId({ kind: order[s]![0], layer: order[s]![1], head }), where };
  if (!headGradNorms) return undefined;
  const ids = headIds({ encoder_self: c.encoder_layers, decoder_self: c.decoder_layers, cross: c.decoder_layers }, h);
  const i = headGradNorms.findIndex((v) => !Number.isFinite(v));
  return i < 0 ? undefined : { head: ids[i]!, where: 'gradient' };
}
