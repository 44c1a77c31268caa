/**
 * train/fork on the engine ↔ extension wire (issue 13): a new run from one checkpoint of another,
 * with heads frozen, masked or re-initialised and some of the recipe changed (the engine's
 * run/fork.ts). It then trains as train/start's runs do: train/metrics, train/snapshot, train/ended.
 */
import { isHeadId } from './ablation';
import { arrayOf, type Check, intIn, isAbsolutePath, isIndex, numberIn, object, optional } from './check';
import { TRAIN_LIMITS } from './training';

export interface ForkParams {
  /** The parent run folder, and the step of its checkpoint to start from. */
  parent: string;
  step: number;
  /** The new run folder. */
  runDir: string;
  /** `kind:layer.head` ids. */
  freezeHeads?: string[];
  maskHeads?: string[];
  reinitHeads?: string[];
  /** The fork's step budget, a total past `step` (the parent's when absent). */
  steps?: number;
  lrFactor?: number;
  warmup?: number;
  dropout?: number;
  labelSmoothing?: number;
}

/** How a fork's changes read in headers and logs (config.json `fork.changes` keys), in the order given. */
const EDIT_WORDS: Record<string, (v: unknown) => string> = {
  freeze_heads: (v) => `frozen ${list(v)}`,
  mask_heads: (v) => `masked ${list(v)}`,
  reinit_heads: (v) => `re-initialised ${list(v)}`,
  lr_factor: (v) => `lr × ${String(v)}`,
  label_smoothing: (v) => `label smoothing ${String(v)}`,
  steps: (v) => `to step ${String(v)}`,
};
const list = (v: unknown): string => (Array.isArray(v) ? v.join(', ') : String(v));

/** `frozen cross:1.0; lr × 0.5`: a fork's changes as a person reads them ('no changes' for none). */
export function describeForkChanges(changes: Readonly<Record<string, unknown>>): string {
  const parts = Object.entries(changes)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => EDIT_WORDS[k]?.(v) ?? `${k.replace(/_/g, ' ')} ${list(v)}`);
  return parts.length ? parts.join('; ') : 'no changes';
}

/** At most this many heads in one list (the big model has 6 × 16 × 3 = 288). */
export const FORK_LIMITS = { heads: 1024 };

const heads: Check<string[]> = (v, path) =>
  Array.isArray(v) && v.length > FORK_LIMITS.heads
    ? `${path} must list at most ${FORK_LIMITS.heads} heads, got ${v.length}`
    : arrayOf(isHeadId)(v, path);

export const checkForkParams: Check<ForkParams> = object({
  parent: isAbsolutePath,
  step: isIndex,
  runDir: isAbsolutePath,
  freezeHeads: optional(heads),
  maskHeads: optional(heads),
  reinitHeads: optional(heads),
  steps: optional(intIn(1, TRAIN_LIMITS.steps)),
  lrFactor: optional(numberIn(1e-6, 1e3)),
  warmup: optional(intIn(1, TRAIN_LIMITS.steps)),
  dropout: optional(numberIn(0, 0.999)),
  labelSmoothing: optional(numberIn(0, 0.999)),
});
