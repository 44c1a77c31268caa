/**
 * A y range for curves of several runs that one run's outliers do not flatten: a run whose highest
 * value is over OUTLIER × the median of the runs' highest values (a diverged run at 3,000 among
 * losses of ~10) is clipped, and the range covers the others. The median of the runs' maxima, not
 * a quantile of all points: a run diverged half-way has half its points out of range.
 */

/** A run is clipped when its maximum exceeds this many times the median run maximum. */
export const OUTLIER = 10;

/**
 * `runs[i]`: run i's values. Returns no range when no run is clipped (plotly's autorange then),
 * else the range [lowest, highest of the kept runs] with 5 % room, and each clipped run's index
 * with its highest value.
 */
export function clippedRange(runs: readonly (readonly number[])[]): {
  range?: [number, number];
  clipped: [number, number][];
} {
  const stats = runs.map((ys) => {
    let lo = Infinity;
    let hi = -Infinity;
    for (const y of ys)
      if (Number.isFinite(y)) {
        lo = Math.min(lo, y);
        hi = Math.max(hi, y);
      }
    return { lo, hi };
  });
  const maxima = stats
    .map((s) => s.hi)
    .filter(Number.isFinite)
    .sort((a, b) => a - b);
  if (maxima.length < 2) return { clipped: [] };
  const mid = maxima.length >> 1;
  const median = maxima.length % 2 ? maxima[mid]! : (maxima[mid - 1]! + maxima[mid]!) / 2;
  if (!(median > 0)) return { clipped: [] };
  const limit = OUTLIER * median;
  const clipped: [number, number][] = [];
  let lo = Infinity;
  let hi = -Infinity;
  stats.forEach((s, i) => {
    if (!Number.isFinite(s.hi)) return;
    lo = Math.min(lo, s.lo);
    if (s.hi > limit) clipped.push([i, s.hi]);
    else hi = Math.max(hi, s.hi);
  });
  if (!clipped.length || !Number.isFinite(hi)) return { clipped: [] };
  const room = 0.05 * (hi - lo || Math.abs(hi) || 1);
  // A curve of values ≥ 0 (a loss, a norm) keeps its axis from going below 0.
  return { range: [lo >= 0 ? Math.max(0, lo - room) : lo - room, hi + room], clipped };
}
