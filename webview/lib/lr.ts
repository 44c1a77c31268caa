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

/** The smallest and largest x of `traces` (what plotly's autorange spans), or undefined without points. */
export function xSpan(traces: readonly { x?: ArrayLike<unknown> }[]): [number, number] | undefined {
  let [lo, hi] = [Infinity, -Infinity];
  for (const d of traces)
    for (const v of Array.from(d.x ?? [])) {
      if (typeof v !== 'number' || !Number.isFinite(v)) continue;
      lo = Math.min(lo, v);
      hi = Math.max(hi, v);
    }
  return lo <= hi ? [lo, hi] : undefined;
}

/**
 * The end of warmup on the lr chart: a dashed line at the planned curve's peak and a note beside it,
 * right of the line unless the line is in the right half of `span` (the x range the axis shows), as
 * with warmup as long as the run, where a note on the right would be cut at the chart's edge.
 */
export function peakMarks(
  peak: LrTraces['peak'],
  span: [number, number] | undefined,
  t: { grid: string; muted: string },
): { shapes: object[]; annotations: object[] } {
  if (!peak) return { shapes: [], annotations: [] };
  const onRight = !!span && peak.step > (span[0] + span[1]) / 2;
  const line = { color: t.grid, width: 1, dash: 'dash' };
  return {
    shapes: [{ type: 'line', x0: peak.step, x1: peak.step, yref: 'paper', y0: 0, y1: 1, line }],
    annotations: [
      {
        x: peak.step,
        y: 0.5,
        yref: 'paper',
        text: `warmup ends<br>step ${peak.step}`,
        showarrow: false,
        ...(onRight ? { xanchor: 'right', xshift: -4, align: 'right' } : { xanchor: 'left', xshift: 4, align: 'left' }),
        font: { color: t.muted },
      },
    ],
  };
}
