/**
 * Loss drops and plateaus, found in the logged training loss by a written rule (docs/TELEMETRY.md,
 * "Roles over training"). Pure, so unit tests run it on synthetic curves.
 *
 * 1. Smooth: s_i is the mean loss of the rows i − h … i + h (clamped to the curve's ends).
 * 2. Fall rate at row i: (s_{i−h} − s_{i+h}) / (step_{i+h} − step_{i−h}), ends clamped as above.
 * 3. The run's mean rate R = (max s − min s) / (last step − first step).
 * 4. A drop is a longest run of rows falling at least `drop` · R that ends at least `minFall` of
 *    the range (max s − min s) below the lowest s before it (so a spike's recovery is no drop);
 *    a plateau is a longest run of rows whose rate is within ± `flat` · R spanning at least
 *    `minPlateau` of the run's steps.
 */

export interface LossPoint {
  step: number;
  loss: number;
}

export interface LossPhase {
  kind: 'drop' | 'plateau';
  /** First and last step of the window. */
  from: number;
  to: number;
  /** The smoothed loss at each end. */
  lossFrom: number;
  lossTo: number;
  /** Drops: the step of the steepest fall; plateaus: the window's middle row. */
  at: number;
}

export interface PhaseRule {
  /** Half-width of the smoothing window, in rows (default max(1, ⌊rows / 50⌋)). */
  halfWindow?: number;
  /** A drop falls at least this many times the run's mean rate (default 2). */
  drop?: number;
  /** A plateau's rate stays within ± this share of the run's mean rate (default 0.2). */
  flat?: number;
  /** A drop ends at least this share of the loss range below every earlier smoothed loss (default 0.05). */
  minFall?: number;
  /** A plateau spans at least this share of the run's steps (default 0.1). */
  minPlateau?: number;
}

/** s_i: the mean of the losses of rows i − h … i + h, clamped to the curve. */
export function smoothLoss(losses: readonly number[], h: number): number[] {
  return losses.map((_, i) => {
    const a = Math.max(0, i - h);
    const b = Math.min(losses.length - 1, i + h);
    let sum = 0;
    for (let j = a; j <= b; j++) sum += losses[j]!;
    return sum / (b - a + 1);
  });
}

/** Drops and plateaus of a loss curve, in step order. Fewer than 5 finite points: none. */
export function lossPhases(points: readonly LossPoint[], rule: PhaseRule = {}): LossPhase[] {
  const pts = points.filter((p) => Number.isFinite(p.loss)).sort((a, b) => a.step - b.step);
  const n = pts.length;
  if (n < 5) return [];
  const h = rule.halfWindow ?? Math.max(1, Math.floor(n / 50));
  const s = smoothLoss(
    pts.map((p) => p.loss),
    h,
  );
  const span = pts[n - 1]!.step - pts[0]!.step;
  const range = Math.max(...s) - Math.min(...s);
  if (span <= 0 || range <= 0) return [];
  const R = range / span;
  const fall = s.map((_, i) => {
    const a = Math.max(0, i - h);
    const b = Math.min(n - 1, i + h);
    return (s[a]! - s[b]!) / (pts[b]!.step - pts[a]!.step);
  });
  const cls = fall.map((f) =>
    f >= (rule.drop ?? 2) * R ? 'drop' : Math.abs(f) <= (rule.flat ?? 0.2) * R ? 'plateau' : '',
  );
  const out: LossPhase[] = [];
  for (let i = 0; i < n; ) {
    let j = i;
    while (j + 1 < n && cls[j + 1] === cls[i]) j++;
    const phase = { from: pts[i]!.step, to: pts[j]!.step, lossFrom: s[i]!, lossTo: s[j]! };
    if (cls[i] === 'drop') {
      const before = Math.min(...s.slice(0, i + 1));
      let steepest = i;
      for (let k = i; k <= j; k++) if (fall[k]! > fall[steepest]!) steepest = k;
      if (s[j]! <= before - (rule.minFall ?? 0.05) * range)
        out.push({ kind: 'drop', ...phase, at: pts[steepest]!.step });
    } else if (cls[i] === 'plateau' && phase.to - phase.from >= (rule.minPlateau ?? 0.1) * span)
      out.push({ kind: 'plateau', ...phase, at: pts[(i + j) >> 1]!.step });
    i = j + 1;
  }
  return out;
}
