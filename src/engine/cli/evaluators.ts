/** Validation BLEU during training: greedy decoding of the first validation sentences (text data only). */
import type { PreparedData } from '../train/dataset';
import type { TrainingSettings } from '../train/settings';
import type { BleuEvaluator } from '../train/trainer';

export function bleuEvaluator(_data: PreparedData, _settings: TrainingSettings): BleuEvaluator | undefined {
  return undefined; // wired once batched decoding lands
}
