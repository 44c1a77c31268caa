/**
 * Sizes bounded before work starts (issue 27 #4): each limit defined once, read by the CLI's flags,
 * the settings of a --config file or config.json (settings.ts) and the engine's requests
 * (server/inspection.ts). A value past one is refused up front with the limit and the largest value
 * that fits, where it used to hang (`batches --steps 1e12`), decode for minutes (`--beam 100000`) or
 * fail deep in the work ("Invalid typed array length" for `--max-length 1e9`). The memory a training
 * step takes is bounded in memory.ts, the attention of one pair in inspect/attentionSize.ts.
 */
import { MAX_BEAM } from '../../protocol/beamTree';
import { TRAIN_LIMITS } from '../../protocol/training';
import type { TransformerConfig } from '../model/config';
import { attentionBytes } from '../inspect/attentionSize';

export interface Limit {
  /** The largest value allowed. */
  max: number;
  /** Why, as the refusal says it. */
  why: string;
}

/** A limit's refusal: "WHAT VALUE: more than MAX (WHY); give at most MAX", or undefined within it. */
export function overLimit(what: string, value: number, limit: Limit): string | undefined {
  if (!(value > limit.max)) return undefined;
  const max = limit.max.toLocaleString('en-US');
  return `${what} ${value}: more than ${max} (${limit.why}); give at most ${limit.max}`;
}

/** Training steps: 33 times the paper's longest run (big, 300,000 steps, §5.2). */
export const STEPS_LIMIT: Limit = {
  max: TRAIN_LIMITS.steps,
  why: "33 times the paper's longest run, big's 300,000 steps; a run trains on from its newest checkpoint with --resume",
};

/** Beam size: 3 times the paper's widest beam (21, for parsing, §6.3); each step scores beam × vocabulary. */
export const BEAM_LIMIT: Limit = {
  max: MAX_BEAM,
  why: "3 times the paper's widest beam, 21 (§6.3): every step scores beam × vocabulary hypotheses",
};

/**
 * Positions a model may have (max_len): the longest input the layer-by-layer attention reads
 * (inspect/attentionSize.ts LONG_PASS_BYTES_LIMIT: the base shape up to about 8,000 tokens a side).
 */
export const POSITIONS_LIMIT: Limit = {
  max: 8192,
  why: 'the most positions a model has here: the longest input its attention is read for',
};

/** max_length: a sentence and its <s> or </s> and one more position in POSITIONS_LIMIT. */
export const MAX_LENGTH_LIMIT: Limit = {
  max: POSITIONS_LIMIT.max - 2,
  why: `a preset's max_len is max_length + 2 positions, at most ${POSITIONS_LIMIT.max.toLocaleString('en-US')}`,
};

/** Validation sentences decoded for BLEU at every evaluation: 3 times newstest2014's 3,003. */
export const BLEU_SENTENCES_LIMIT: Limit = {
  max: 10_000,
  why: "each evaluation decodes them all: 3 times the paper's test set, newstest2014's 3,003 sentences",
};

/** The probe batch's attention maps (telemetry, every telemetry_every steps): 1 GiB. */
export const PROBE_MAPS_BYTES = 1 << 30;

/** Telemetry's probe pairs whose maps, at max_length tokens a side, fit in PROBE_MAPS_BYTES. */
export function telemetryPairsLimit(
  c: Pick<TransformerConfig, 'heads' | 'encoder_layers' | 'decoder_layers'>,
  maxLength: number,
): Limit {
  const perPair = attentionBytes(c, maxLength + 1, maxLength + 1); // a source with </s>, a target with <s>
  return {
    max: Math.max(1, Math.floor(PROBE_MAPS_BYTES / perPair)),
    why: `telemetry keeps every map of its probe pairs: ${Math.round(perPair / 1024).toLocaleString('en-US')} kB a pair of ${maxLength} tokens, 1 GiB in all`,
  };
}

/** A batch file (`batches --out`): 2 GiB, what one write of it holds. */
export const BATCH_FILE_BYTES = 2 ** 31;

/** Training batches of batch_tokens a batch file holds: each at most 2·batch_tokens int32 ids and its 3 sizes. */
export function batchFileStepsLimit(batchTokens: number): Limit {
  const perStep = 4 * (2 * batchTokens + 3);
  return {
    max: Math.floor(BATCH_FILE_BYTES / perStep),
    why: `up to ${perStep.toLocaleString('en-US')} bytes a batch of batch_tokens ${batchTokens}, 2 GiB a file`,
  };
}

/** The settings with a fixed limit, as config.json names them. */
export const SETTING_LIMITS: Readonly<Record<'steps' | 'max_length' | 'bleu_sentences', Limit>> = {
  steps: STEPS_LIMIT,
  max_length: MAX_LENGTH_LIMIT,
  bleu_sentences: BLEU_SENTENCES_LIMIT,
};
