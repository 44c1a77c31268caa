/**
 * Runs written by PyTorch (python/attention_debugger's RunWriter, config.json `"writer": "pytorch"`).
 * Their model, checkpoints, vocabulary and data spec are the engine's format, so every command that
 * reads a run reads them (decode, attention, evaluate, heads, average, check-run); but their
 * `training` section is the PyTorch trainer's (batch_pairs, not batch_tokens) and their optimizer
 * files hold no data position, so the engine does not train on them (resume, fork) nor writes the
 * batches its own trainer would take: those are refused with the reason, up front.
 */
import type { TransformerConfig } from '../model/config';
import { type DataSpec, TASK_DEFAULTS } from '../data/dataset';
import { TRAINING_DEFAULTS, type TrainingSettings } from './settings';

/** Whether config.json says PyTorch wrote the run. */
export const writtenByPytorch = (raw: Record<string, unknown>): boolean => raw.writer === 'pytorch';

/** Why the engine cannot train on (or write the batches of) a PyTorch run, naming its config.json. */
export function pytorchTrainingError(configPath: string): Error {
  return new Error(
    `${configPath}: written by PyTorch (writer "pytorch"): the engine cannot resume, fork or write the batches of ` +
      "this run: its training settings and data position are the PyTorch trainer's (no batch_tokens, no data " +
      "position in its optimizer files). Continue it with its PyTorch trainer (attention_debugger's resume()); " +
      'decode, attention, evaluate, heads, average and check-run read it',
  );
}

/**
 * The settings a reader of a PyTorch run uses: the engine's defaults (it has none of its own), with
 * max_length the longest source the model's positions hold with its </s>. Only max_length (which
 * corpus pairs are kept), vocab_size (unused: such a run has its vocab.json) and telemetry_pairs
 * (the probe batch of mean ablation) are read.
 */
export function readingSettings(model: TransformerConfig): TrainingSettings {
  return { ...TRAINING_DEFAULTS.tiny!, max_length: model.max_len - 1 };
}

/** A task spec as the RunWriter records it (task, vocabSize, lengths) with the engine's split sizes and seed. */
export function readingDataSpec(recorded: DataSpec): DataSpec {
  return recorded.kind === 'task' ? { ...TASK_DEFAULTS, ...recorded } : recorded;
}
