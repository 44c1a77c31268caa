/**
 * Downsampling of curves for display (pure; no DOM). A run logs one row a step; plotting 10⁵
 * points per trace makes SVG traces crawl, so each series is cut to ~1,500 points, as TensorBoard
 * and W&B do, keeping what the eye needs: the first and last point and, in every bucket, the
 * smallest and the largest value (a loss spike never disappears). The full series stays on disk.
 */

export interface Series {
  x: number[];
  y: number[];
}

/** The display budget of one series (docs/ARCHITECTURE.md, "The webviews"). */
export const DISPLAY_POINTS = 1500;

/**
 * Min/max-preserving downsampling: at most `maxPoints` points (≥ 4), x order kept, the first and
 * last points kept, and in each of ⌊(maxPoints − 2)/2⌋ equal-count buckets of the interior the
 * point with the smallest and the one with the largest y. So the global minimum and maximum always
 * survive. Series no longer than `maxPoints` are returned as copies.
 */
export function downsampleMinMax(x: ArrayLike<number>, y: ArrayLike<number>, maxPoints = DISPLAY_POINTS): Series {
  const n = Math.min(x.length, y.length);
  if (!(maxPoints >= 4)) throw new RangeError(`maxPoints must be at least 4, got ${maxPoints}`);
  if (n <= maxPoints) return { x: Array.from(x).slice(0, n), y: Array.from(y).slice(0, n) };
  const outX: number[] = [x[0]];
  const outY: number[] = [y[0]];
  const buckets = Math.floor((maxPoints - 2) / 2);
  const interior = n - 2;
  for (let b = 0; b < buckets; b++) {
    const start = 1 + Math.floor((b * interior) / buckets);
    const end = 1 + Math.floor(((b + 1) * interior) / buckets); // exclusive
    if (end <= start) continue;
    let iMin = start;
    let iMax = start;
    for (let i = start + 1; i < end; i++) {
      if (y[i] < y[iMin]) iMin = i;
      if (y[i] > y[iMax]) iMax = i;
    }
    const first = Math.min(iMin, iMax);
    const second = Math.max(iMin, iMax);
    outX.push(x[first]);
    outY.push(y[first]);
    if (second !== first) {
      outX.push(x[second]);
      outY.push(y[second]);
    }
  }
  outX.push(x[n - 1]);
  outY.push(y[n - 1]);
  return { x: outX, y: outY };
}

/** Picks the points of rows where `get` yields a finite number (optional columns like valLoss). */
export function column<R>(rows: readonly R[], getX: (r: R) => number, getY: (r: R) => number | undefined): Series {
  const x: number[] = [];
  const y: number[] = [];
  for (const r of rows) {
    const v = getY(r);
    if (v !== undefined && Number.isFinite(v)) {
      x.push(getX(r));
      y.push(v);
    }
  }
  return { x, y };
}
