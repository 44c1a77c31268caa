/**
 * Heads a run holds still while it trains (a fork's freeze_heads and mask_heads, run/settings.ts):
 * their weights (model/headParams.ts) get a 0 in the gradient mask. The fork zeroed their Adam
 * moments (run/fork.ts), so every update leaves them bitwise as they were; a masked head's W^O
 * columns, zeroed by the fork too, stay zero: its output is removed before W^O (ξ_h = 0) in every
 * forward pass, trained or inspected.
 */
import * as tf from '@tensorflow/tfjs-core';
import { checkHeadIds, headElements } from '../model/headParams';
import type { Transformer } from '../model/transformer';
import { heldHeads, type TrainingSettings } from '../run/settings';

/** Per variable that a held head touches, 1 where training may change it and 0 where it may not. */
export function heldHeadsMask(model: Transformer, settings: TrainingSettings): Map<tf.Variable, tf.Tensor> {
  const refs = checkHeadIds(model.config, heldHeads(settings), 'training.freeze_heads or mask_heads');
  const out = new Map<tf.Variable, tf.Tensor>();
  for (const [name, owned] of headElements(model.config, refs, 'all')) {
    const v = model.params.get(name)!;
    out.set(
      v,
      tf.tensor(
        Float32Array.from(owned, (o) => 1 - o),
        v.shape,
      ),
    );
  }
  return out;
}
