/**
 * The learning-rate chart's data (pure; no DOM): the planned curve of the whole run (eq. 3 sampled
 * by the engine, sent as a `schedule` message) drawn ahead, and the actual lr of each logged step
 * drawn on it. The webview never recomputes the schedule: training and UI share the engine's one
 * definition; this file only assembles and downsamples what arrived.
 */
import type { MetricRow, SchedulePoint } from '../../src/protocol/metrics';
import { type Series, DISPLAY_POINTS, downsampleMinMax } from './downsample';

export interface LrTraces {
  /** The planned curve over the whole run, sorted by step, duplicates dropped. */
  planned: Series;
  /** The actual lr of logged steps, downsampled. */
  actual: Series;
  /** Where the planned curve peaks (the end of warmup), or undefined without a plan. */
  peak: { step: number; lr: number } | undefined;
  /** The x range to show: the whole planned run, so the curve is drawn ahead of training. */
  xRange: [number, number] | undefined;
}

export function assembleLr(
  points: readonly SchedulePoint[],
  rows: readonly MetricRow[],
  maxPoints = DISPLAY_POINTS,
): LrTraces {
  const sorted = [...points]
    .filter((p) => Number.isFinite(p.step) && Number.isFinite(p.lr))
    .sort((a, b) => a.step - b.step);
  const px: number[] = [];
  const py: number[] = [];
  for (const p of sorted) {
    if (px.length && px[px.length - 1] === p.step) continue;
    px.push(p.step);
    py.push(p.lr);
  }
  const planned = downsampleMinMax(px, py, maxPoints);
  let peak: LrTraces['peak'];
  for (let i = 0; i < py.length; i++) if (!peak || py[i] > peak.lr) peak = { step: px[i], lr: py[i] };
  const actual = downsampleMinMax(
    rows.map((r) => r.step),
    rows.map((r) => r.lr),
    maxPoints,
  );
  const lastActual = rows.length ? rows[rows.length - 1].step : undefined;
  const xMax = Math.max(px.length ? px[px.length - 1] : -Infinity, lastActual ?? -Infinity);
  const xMin = Math.min(px.length ? px[0] : Infinity, rows.length ? rows[0].step : Infinity);
  return { planned, actual, peak, xRange: Number.isFinite(xMin) && Number.isFinite(xMax) ? [xMin, xMax] : undefined };
}
