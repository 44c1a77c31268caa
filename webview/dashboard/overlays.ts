/**
 * Other runs on the dashboard (Compare Runs): each one's curves on the loss, learning-rate,
 * tokens/s and gradient-norm charts, named by run in the legend, each from its own first logged
 * step (a fork's begin where it left its parent).
 */
import type { MetricRow } from '../../src/protocol/metrics';
import type { OverlayRun } from '../../src/protocol/webview';
import { column, downsampleMinMax } from '../lib/downsample';

/** Colours of overlaid runs (Tableau 10 after the theme's own accents), in order. */
const PALETTE = ['#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];

export type OverlayChart = 'loss' | 'lr' | 'tps' | 'grad';

const series = (rows: MetricRow[], value: (r: MetricRow) => number | undefined) => column(rows, (r) => r.step, value);

/** The traces of every overlaid run, per chart. */
export function overlayTraces(runs: OverlayRun[]): Record<OverlayChart, Plotly.Data[]> {
  const out: Record<OverlayChart, Plotly.Data[]> = { loss: [], lr: [], tps: [], grad: [] };
  runs.forEach((run, i) => {
    const color = PALETTE[i % PALETTE.length]!;
    const trace = (s: { x: number[]; y: number[] }, name: string, extra: Plotly.Data = {}): Plotly.Data => ({
      type: 'scatter',
      mode: 'lines',
      ...downsampleMinMax(s.x, s.y),
      name: `${run.run}: ${name}`,
      legendgroup: run.runDir, // one run: its curves toggle together (compareCharts.ts)
      line: { color, width: 1.2, dash: 'dash' },
      hovertemplate: `${run.run}<br>step %{x}<br>${name} %{y:.4g}<extra></extra>`,
      ...extra,
    });
    out.loss.push(
      trace(
        series(run.rows, (r) => r.loss),
        'train',
      ),
    );
    const val = series(run.rows, (r) => r.valLoss);
    if (val.x.length) out.loss.push(trace(val, 'validation', { mode: 'lines+markers', marker: { size: 4, color } }));
    out.lr.push(
      trace(
        series(run.rows, (r) => r.lr),
        'lr',
      ),
    );
    out.tps.push(
      trace(
        series(run.rows, (r) => r.tokensPerSec),
        'tokens/s',
      ),
    );
    out.grad.push(
      trace(
        series(run.rows, (r) => r.gradNorm),
        'grad norm',
      ),
    );
  });
  return out;
}
