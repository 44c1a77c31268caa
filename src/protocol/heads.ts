/**
 * Which heads matter (issue 11), as `heads --json` prints it and the engine answers `heads/report`:
 * importance I_h = E|∂L/∂ξ_h| on held-out pairs (Michel et al. 2019) and pruning curves, heads
 * removed one more at a time in increasing importance and in a seeded random order, with the
 * held-out metric after each removal.
 */
import {
  type Check,
  arrayOf,
  intIn,
  isAbsolutePath,
  isFiniteNumber,
  isIndex,
  isString,
  nullable,
  object,
  oneOf,
  optional,
} from './check';

export interface PruningPoint {
  /** Heads removed so far. */
  removed: number;
  /** The head removed at this point (null at 0). */
  head: string | null;
  metric: number;
}

/** A score's metric as axes, tables and sentences name it (head reports and ablation scores share them). */
export const HEAD_METRIC: Record<'exact_match_percent' | 'bleu', string> = {
  exact_match_percent: 'exact match %',
  bleu: 'BLEU',
};

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

const checkPoints = arrayOf(
  object<PruningPoint>({ removed: isIndex, head: nullable(isString), metric: isFiniteNumber }),
);

/**
 * What a report says instead of how many heads can go when the model, with every head, scores no
 * more than may be lost (an untrained model's 0 exact match): removing heads cannot cost more than
 * the tolerance, so every head "can go" and the curves say nothing of the heads yet.
 */
export function nothingToLose(r: HeadReport): string | undefined {
  const base = r.byImportance.find((p) => p.removed === 0)?.metric;
  if (base === undefined || base > r.tolerance) return undefined;
  const unit = r.metric === 'bleu' ? 'BLEU' : r.tolerance === 1 ? 'point' : 'points';
  return (
    `with every head the model scores ${base.toFixed(2)} ${HEAD_METRIC[r.metric]} on ${r.sentences} test ` +
    `sentences, no more than the ${r.tolerance} ${unit} that may be lost: every head “can go”, and the ` +
    'curves say nothing of the heads yet. Train further before pruning.'
  );
}

export const checkHeadReport: Check<HeadReport> = object({
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

/** heads/report: importance and pruning curves of a checkpoint. */
export interface HeadReportParams {
  runDir: string;
  /** The checkpoint's step; the newest when absent. */
  step?: number;
  /** Held-out pairs for the importance (default 256). */
  pairs?: number;
  /** Test sentences for the metric (default 200). */
  limit?: number;
  /** Seed of the random order (default 1). */
  seed?: number;
}
export const checkHeadReportParams: Check<HeadReportParams> = object({
  runDir: isAbsolutePath,
  step: optional(isIndex),
  pairs: optional(intIn(1, 4096)),
  limit: optional(intIn(1, 10000)),
  seed: optional(isIndex),
});

/** heads/saved: the newest heads report saved beside a run, at most `step` when given. */
export interface HeadsSavedParams {
  runDir: string;
  step?: number;
}
export const checkHeadsSavedParams: Check<HeadsSavedParams> = object({
  runDir: isAbsolutePath,
  step: optional(isIndex),
});

/**
 * heads/report's progress: `done` of `total` pruning points measured (each curve scores the intact
 * model, then one head more removed at a time), so the wait of minutes can be shown.
 */
export interface HeadsProgress {
  runDir: string;
  done: number;
  total: number;
}
export const checkHeadsProgress: Check<HeadsProgress> = object({ runDir: isString, done: isIndex, total: isIndex });

/** A heads report's file in its run folder: `heads-report-step-N.md` or `.json` (docs/RUN_FOLDER.md). */
export const headReportFile = (step: number, ext: 'md' | 'json'): string => `heads-report-step-${step}.${ext}`;
/** The saved JSON reports' names; group 1 is the step. */
export const HEAD_REPORT_JSON = /^heads-report-step-(\d+)\.json$/;
