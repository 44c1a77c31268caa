/**
 * The head report's two figures (protocol/heads.ts's HeadReport), drawn the same in the run report
 * (webview/report/charts.ts) and the Head Importance panel (webview/importance/page.ts): the
 * importance of every head as bars (ascending, the pruning order) and the pruning curves, the
 * metric as heads are removed in increasing importance and in a seeded random order.
 */
import { HEAD_METRIC, type HeadReport, type PruningPoint, nothingToLose } from '../../src/protocol/heads';
import { PLOTLY_CONFIG, type Theme, plotly, themedLayout } from '../common';

/** The metric's name on axes and in sentences. */
export { HEAD_METRIC } from '../../src/protocol/heads';

/** Importance bars, one per head in the report's (ascending) order. */
export function drawImportanceBars(el: HTMLElement, r: HeadReport, t: Theme): Promise<unknown> {
  const ids = Object.keys(r.importance);
  return plotly(() =>
    Plotly.react(
      el,
      [
        {
          type: 'bar',
          x: ids,
          y: ids.map((id) => r.importance[id]!),
          marker: { color: t.accent },
          hovertemplate: '%{x}<br>I_h %{y:.3e}<extra></extra>',
        },
      ],
      themedLayout(t, 'importance', { xaxis: { title: { text: 'head (ascending importance)' } } }),
      PLOTLY_CONFIG,
    ),
  );
}

/** The pruning curves: by importance (first trace) and at random (second). */
export function drawPruningCurves(el: HTMLElement, r: HeadReport, t: Theme): Promise<unknown> {
  const metric = HEAD_METRIC[r.metric];
  const curve = (ps: PruningPoint[], name: string, color: string): Plotly.Data => ({
    type: 'scatter',
    mode: 'lines+markers',
    x: ps.map((p) => p.removed),
    y: ps.map((p) => p.metric),
    text: ps.map((p) => p.head ?? 'none removed'),
    name,
    line: { color, width: 1.5 },
    hovertemplate: `%{x} removed (%{text})<br>${metric} %{y:.2f}<extra>${name}</extra>`,
  });
  return plotly(() =>
    Plotly.react(
      el,
      [
        curve(r.byImportance, 'by importance', t.accent),
        curve(r.random.points, `random (seed ${r.random.seed})`, t.accent2),
      ],
      // From 0 (no metric goes below): a flat 0 curve otherwise sat mid-chart on an axis from −0.5.
      themedLayout(t, 'pruning', {
        xaxis: { title: { text: 'heads removed' } },
        yaxis: { title: { text: metric }, rangemode: 'tozero' },
      }),
      PLOTLY_CONFIG,
    ),
  );
}

/** What the report says can go, in a sentence (or, where nothing can be lost, why it cannot say). */
export function prunableSentence(r: HeadReport): string {
  const none = nothingToLose(r);
  if (none) return `Step ${r.step}: ${none}`;
  const total = Object.keys(r.importance).length;
  const metric = HEAD_METRIC[r.metric];
  return `Step ${r.step}: ${r.prunable.byImportance} of ${total} heads can go for ≤ ${r.tolerance} ${metric} lost in importance order; ${r.prunable.random} at random.`;
}
