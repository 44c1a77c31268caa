/**
 * Which heads matter (issue 11), as `heads --json` prints it and the engine answers `heads/report`:
 * importance I_h = E|∂L/∂ξ_h| on held-out pairs (Michel et al. 2019) and pruning curves, heads
 * removed one more at a time in increasing importance and in a seeded random order, with the
 * held-out metric after each removal.
 */
import { type Check, arrayOf, isFiniteNumber, isIndex, isString, nullable, object, oneOf } from './check';

export interface PruningPoint {
  /** Heads removed so far. */
  removed: number;
  /** The head removed at this point (null at 0). */
  head: string | null;
  metric: number;
}

export interface HeadReport {
  run: string;
  checkpoint: string;
  step: number;
  /** Exact match in % (built-in tasks) or corpus BLEU (corpora), on `sentences` test sentences. */
  metric: 'exact_match_percent' | 'bleu';
  sentences: number;
  /** How much of the metric "can go" allows: 1 point of exact match, 0.5 BLEU. */
  tolerance: number;
  /** Head id → I_h, ascending (the order heads are pruned in). */
  importance: Record<string, number>;
  byImportance: PruningPoint[];
  random: { seed: number; points: PruningPoint[] };
  /** How many heads can go for at most `tolerance` lost, in each order. */
  prunable: { byImportance: number; random: number };
}

const checkPoints = arrayOf(object({ removed: isIndex, head: nullable(isString), metric: isFiniteNumber }));

export const checkHeadReport: Check = object({
  run: isString,
  checkpoint: isString,
  step: isIndex,
  metric: oneOf(['exact_match_percent', 'bleu']),
  sentences: isIndex,
  tolerance: isFiniteNumber,
  importance: (v, path) =>
    typeof v === 'object' && v !== null && Object.values(v).every((x) => Number.isFinite(x))
      ? undefined
      : `${path} must map head ids to finite numbers`,
  byImportance: checkPoints,
  random: object({ seed: isIndex, points: checkPoints }),
  prunable: object({ byImportance: isIndex, random: isIndex }),
});
