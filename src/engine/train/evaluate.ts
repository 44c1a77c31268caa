/**
 * Validation: the label-smoothed loss and NLL over held-out pairs, teacher-forced, in eval mode;
 * and BLEU of greedy decoding of the first validation sentences (text data only).
 */
import * as tf from '@tensorflow/tfjs-core';
import { translate } from '../decode/translate';
import { corpusBleu } from '../metrics/bleu';
import type { Transformer } from '../model/transformer';
import type { PreparedData } from '../data/dataset';
import { smoothedLossFromLogits } from './loss';
import type { TrainingSettings } from '../run/settings';
import type { Batch } from '../data/batchStream';
import { countTokens } from './step';

export async function validationLoss(
  model: Transformer,
  batches: Batch[],
  labelSmoothing: number,
): Promise<{ loss: number; nll: number; tokens: number }> {
  let loss = 0;
  let nll = 0;
  let tokens = 0;
  const c = model.config;
  for (const b of batches) {
    const n = countTokens(b.tgtOut, c.pad_id);
    const [l, x] = tf.tidy(() => {
      const logits = model.logits(tf.tensor2d(b.src, undefined, 'int32'), tf.tensor2d(b.tgtIn, undefined, 'int32')); // [B, T, V]
      const targets = tf.reshape(tf.tensor2d(b.tgtOut, undefined, 'int32'), [-1]) as tf.Tensor1D; // [B·T]
      // The training loss's own op (one native pass on wasm); its gradient output is simply unused.
      const r = smoothedLossFromLogits(
        tf.reshape(logits, [-1, c.tgt_vocab]) as tf.Tensor2D,
        targets,
        c.pad_id,
        labelSmoothing,
        n,
        true, // the logits are read no more
      );
      return [r.loss, r.nll];
    });
    const [lv, xv] = await Promise.all([l.data(), x.data()]);
    tf.dispose([l, x]);
    loss += lv[0] * n;
    nll += xv[0] * n;
    tokens += n;
  }
  return { loss: loss / Math.max(tokens, 1), nll: nll / Math.max(tokens, 1), tokens };
}

/** Decodes validation sentences and scores them; supplied to the trainer so its loop stays small. */
export type BleuEvaluator = (model: Transformer, step: number) => Promise<number>;

export function bleuEvaluator(data: PreparedData, settings: TrainingSettings): BleuEvaluator | undefined {
  if (data.vocab.kind !== 'bpe' || settings.bleu_sentences === 0 || data.validText.length === 0) return undefined;
  const n = Math.min(settings.bleu_sentences, data.valid.length, data.validText.length);
  return async (model) => {
    const out = await translate(
      model,
      data.valid.slice(0, n).map((p) => p.src),
      { beamSize: 1 },
    );
    const hyps = out.map((t) => data.vocab.decode(t.tokens));
    return corpusBleu(hyps, [data.validText.slice(0, n).map((p) => p.tgt)]).score;
  };
}
