/** A micro model and task for training tests that must run in seconds. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function scratch(prefix = 'ad-train-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** The micro Transformer's model fields: d_model 16, 2 heads, 1 + 1 layers (seconds a run). */
export const MICRO_MODEL = {
  d_model: 16,
  heads: 2,
  d_ff: 32,
  encoder_layers: 1,
  decoder_layers: 1,
  dropout: 0.1,
  norm_first: false,
  final_norm: false,
  positional: 'sinusoidal',
  max_len: 32,
  share_embeddings: true,
};

/** Its training settings: 20 steps, checkpoints every 5, snapshots every 5. */
export const MICRO_TRAINING = {
  steps: 20,
  warmup: 4,
  lr_factor: 1,
  batch_tokens: 200,
  label_smoothing: 0.1,
  clip_norm: 0,
  seed: 3,
  checkpoint_every: 5,
  eval_every: 10,
  snapshot_every: 5,
  vocab_size: 100,
  max_length: 20,
  bleu_sentences: 0,
};

/** Writes a config file for the micro Transformer and returns its path. */
export function microConfig(dir: string, training: Record<string, number> = {}): string {
  const path = join(dir, 'micro.json');
  writeFileSync(path, JSON.stringify({ ...MICRO_MODEL, training: { ...MICRO_TRAINING, ...training } }));
  return path;
}
