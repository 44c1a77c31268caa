// The learning-rate schedule of "Attention Is All You Need", section 5.3, equation (3):
//
//   lrate = d_model^-0.5 · min(step_num^-0.5, step_num · warmup_steps^-1.5)
//
// "This corresponds to increasing the learning rate linearly for the first warmup_steps training
// steps, and decreasing it thereafter proportionally to the inverse square root of the step number.
// We used warmup_steps = 4000." A constant `factor` (1 in the paper) scales the whole curve, as in
// common re-implementations. Steps count from 1; the peak is at step_num = warmup_steps, where
// both arms of the min are equal: lrate_peak = factor · (d_model · warmup_steps)^-0.5.

/** Options of equation (3). */
export interface ScheduleOptions {
  /** d_model, the model width (512 for the base model). */
  dModel: number;
  /** warmup_steps (default 4000). */
  warmupSteps?: number;
  /** A constant multiplier of the whole curve (default 1, the paper's value). */
  factor?: number;
}

/** One sampled point of the planned curve. */
export interface LrPoint {
  step: number;
  lr: number;
}

function checkOptions(opts: ScheduleOptions): { dModel: number; warmup: number; factor: number } {
  const warmup = opts.warmupSteps ?? 4000;
  const factor = opts.factor ?? 1;
  if (!(opts.dModel > 0)) throw new RangeError(`dModel must be positive, got ${opts.dModel}`);
  if (!(warmup > 0)) throw new RangeError(`warmupSteps must be positive, got ${warmup}`);
  if (!(factor >= 0)) throw new RangeError(`factor must be non-negative, got ${factor}`);
  return { dModel: opts.dModel, warmup, factor };
}

/**
 * lrate = factor · d_model^-0.5 · min(step_num^-0.5, step_num · warmup_steps^-1.5)  (eq. 3).
 * `step` is step_num, counted from 1 (the first update uses step 1); step < 1 is an error because
 * step_num^-0.5 is undefined at 0.
 */
export function transformerLr(step: number, opts: ScheduleOptions): number {
  const { dModel, warmup, factor } = checkOptions(opts);
  if (!(step >= 1)) throw new RangeError(`step counts from 1, got ${step}`);
  return factor * dModel ** -0.5 * Math.min(step ** -0.5, step * warmup ** -1.5);
}

/** The peak of eq. (3), reached at step_num = warmup_steps: factor · (d_model · warmup_steps)^-0.5. */
export function peakLr(opts: ScheduleOptions): number {
  const { dModel, warmup, factor } = checkOptions(opts);
  return factor * (dModel * warmup) ** -0.5;
}

/**
 * The planned curve of a whole run of `totalSteps` updates, sampled for plotting: at most
 * `maxPoints` (≥ 2) (step, lr) pairs with strictly increasing integer steps, always including
 * step 1, the last step, and the peak step (warmup_steps) when it lies inside the run. Samples are
 * spread evenly over the steps; if the run has no more steps than `maxPoints`, every step is given.
 */
export function plannedLrCurve(totalSteps: number, opts: ScheduleOptions, maxPoints = 200): LrPoint[] {
  if (!Number.isInteger(totalSteps) || totalSteps < 1) {
    throw new RangeError(`totalSteps must be a positive integer, got ${totalSteps}`);
  }
  if (!Number.isInteger(maxPoints) || maxPoints < 2) {
    throw new RangeError(`maxPoints must be an integer ≥ 2, got ${maxPoints}`);
  }
  const { warmup } = checkOptions(opts);
  const steps = new Set<number>();
  if (totalSteps <= maxPoints) {
    for (let s = 1; s <= totalSteps; s++) steps.add(s);
  } else {
    const peak = Number.isInteger(warmup) && warmup > 1 && warmup < totalSteps ? warmup : 0;
    const budget = peak ? maxPoints - 1 : maxPoints; // leave room for the peak
    for (let i = 0; i < budget; i++) {
      steps.add(1 + Math.round((i * (totalSteps - 1)) / (budget - 1)));
    }
    if (peak) steps.add(peak);
  }
  return [...steps].sort((a, b) => a - b).map((step) => ({ step, lr: transformerLr(step, opts) }));
}
