/**
 * An ablation as the forward pass's head gates (model/attention.ts HeadGate): ξ_h = 0 at the
 * ablated heads and 1 elsewhere; for mean ablation, each ablated head's output is replaced by its
 * mean over a batch of pairs (telemetry/heads.ts headOutputMeans), computed on the intact model.
 */
import * as tf from '@tensorflow/tfjs-core';
import type { Ablation } from '../../protocol/ablation';
import { ATTENTION_KINDS, type AttentionKind, type HeadRef } from '../../protocol/attention';
import { checkHeadIds } from '../model/headParams';
import type { HeadGate } from '../model/attention';
import type { Transformer } from '../model/transformer';
import { headOutputMeans } from '../telemetry/heads';
import { headGates, layersOf } from '../telemetry/importance';

/** Gates of every layer of every kind; `dispose` frees their tensors. */
export interface AblationGates {
  heads: Record<AttentionKind, HeadGate[]>;
  dispose(): void;
}

/** The ablation's heads, each checked against the model's layers and heads. */
export function ablatedHeads(model: Transformer, ablation: Ablation): HeadRef[] {
  return checkHeadIds(model.config, ablation.heads, 'ablation');
}

/**
 * The gates of an ablation. Mean ablation needs `meanOver`, the pairs whose mean head outputs
 * replace the ablated heads (src ending with EOS, tgt starting with BOS, as attentionOfPairs).
 */
export function ablationGates(
  model: Transformer,
  ablation: Ablation,
  meanOver?: { src: number[][]; tgt: number[][] },
): AblationGates {
  const refs = ablatedHeads(model, ablation);
  if (ablation.mode === 'mean' && !meanOver?.src.length)
    throw new RangeError('mean ablation needs pairs to average head outputs over (the run’s probe batch)');
  const L = layersOf(model);
  const H = model.config.heads;
  const xi = {} as Record<AttentionKind, tf.Tensor2D>;
  for (const kind of ATTENTION_KINDS) {
    const v = new Float32Array(L[kind] * H).fill(1);
    for (const r of refs) if (r.kind === kind) v[r.layer * H + r.head] = 0;
    xi[kind] = tf.tensor2d(v, [L[kind], H]); // [L, H]
  }
  const means = ablation.mode === 'mean' ? headOutputMeans(model, meanOver!.src, meanOver!.tgt) : undefined;
  const heads = headGates(xi, means);
  const owned: tf.Tensor[] = [
    ...Object.values(xi),
    ...Object.values(means ?? {}),
    ...ATTENTION_KINDS.flatMap((k) => heads[k].flatMap((g) => (g.mean ? [g.xi, g.mean] : [g.xi]))),
  ];
  return { heads, dispose: () => tf.dispose(owned) };
}
