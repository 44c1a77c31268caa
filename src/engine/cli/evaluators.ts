/** Validation BLEU during training: greedy decoding of the first validation sentences (text data only). */
import { translate } from '../decode/translate';
import { corpusBleu } from '../metrics/bleu';
import type { PreparedData } from '../train/dataset';
import type { TrainingSettings } from '../train/settings';
import type { BleuEvaluator } from '../train/trainer';

export function bleuEvaluator(data: PreparedData, settings: TrainingSettings): BleuEvaluator | undefined {
  if (data.vocab.kind !== 'bpe' || settings.bleu_sentences === 0 || data.validText.length === 0) return undefined;
  const n = Math.min(settings.bleu_sentences, data.valid.length, data.validText.length);
  return async (model) => {
    const out = await translate(model, data.valid.slice(0, n).map((p) => p.src), { beamSize: 1 });
    const hyps = out.map((t) => data.vocab.decode(t.tokens));
    return corpusBleu(hyps, [data.validText.slice(0, n).map((p) => p.tgt)]).score;
  };
}
