/**
 * The report's plotly figures: the dashboard's four curves (loss with validation and the findings
 * marked, the learning rate on its planned schedule, tokens/s, gradient norm), each series
 * downsampled as the dashboard does (lib/downsample.ts), and the head report's importance bars and
 * pruning curves (lib/headReport.ts, shared with the Head Importance panel). Hover shows each point's step and value, as in the panels.
 */
import type { HeadReport } from '../../src/protocol/heads';
import type { RunReportData } from '../../src/protocol/report';
import { describeFinding } from '../../src/protocol/telemetry';
import { PLOTLY_CONFIG, type Theme, h, plotly, plotlyText, themedLayout } from '../common';
import { column, downsampleMinMax } from '../lib/downsample';
import { HEAD_METRIC, drawImportanceBars, drawPruningCurves, prunableSentence } from '../lib/headReport';
import { lineTrace } from '../lib/lineTrace';
import { assembleLr } from '../lib/lr';

const line = lineTrace;

/** A card holding one chart; its div has id `chart-<id>`. */
function chartCard(id: string, title: string): { card: HTMLElement; el: HTMLElement } {
  const el = h('div', { class: 'chart', id: `chart-${id}` });
  return { card: h('section', { class: 'card' }, h('h2', {}, title), el), el };
}

/** The four training curves, drawn into a grid of cards. */
export function curvesSection(d: RunReportData, t: Theme): HTMLElement {
  const rows = d.rows;
  const step = (r: (typeof rows)[number]) => r.step;
  const x = { title: { text: 'step' } };
  const loss = column(rows, step, (r) => r.loss);
  const val = column(rows, step, (r) => r.valLoss);
  const lossData = [line(downsampleMinMax(loss.x, loss.y), 'train', t.accent)];
  if (val.x.length) lossData.push(line(val, 'validation', t.accent2, { mode: 'lines+markers', marker: { size: 5 } }));
  const color = (e: RunReportData['events'][number]) => (e.severity === 'breakpoint' ? '#f14c4c' : '#cca700');
  const marks = d.events.slice(-200).map((e) => ({
    type: 'line',
    x0: e.step,
    x1: e.step,
    yref: 'paper',
    y0: 0,
    y1: 1,
    line: { color: color(e), width: 1, dash: 'dash' },
  }));
  const flags = d.events.slice(-200).map((e) => ({
    x: e.step,
    y: 1,
    yref: 'paper',
    yanchor: 'bottom',
    text: '▲',
    showarrow: false,
    font: { color: color(e), size: 10 },
    hovertext: plotlyText(describeFinding(e)),
  }));
  const lr = assembleLr(d.schedule, rows);
  const lrData: Plotly.Data[] = [];
  if (lr.planned.x.length)
    lrData.push(line(lr.planned, 'planned', t.muted, { line: { color: t.muted, width: 1.5, dash: 'dot' } }));
  lrData.push(line(lr.actual, 'actual', t.accent3, { mode: 'lines+markers', marker: { size: 3 } }));
  const tps = column(rows, step, (r) => r.tokensPerSec);
  const grad = column(rows, step, (r) => r.gradNorm);
  const charts: [string, string, Plotly.Data[], Plotly.Layout][] = [
    ['loss', 'Loss', lossData, themedLayout(t, 'loss', { xaxis: x, shapes: marks, annotations: flags })],
    [
      'lr',
      'Learning rate',
      lrData,
      themedLayout(t, 'lr', { xaxis: { ...x, range: lr.xRange }, yaxis: { exponentformat: 'e' } }),
    ],
    [
      'tps',
      'Tokens / s',
      [line(downsampleMinMax(tps.x, tps.y), 'tokens/s', t.accent)],
      themedLayout(t, 'tps', { xaxis: x }),
    ],
    [
      'grad',
      'Gradient norm',
      [line(downsampleMinMax(grad.x, grad.y), 'grad norm', t.accent2)],
      themedLayout(t, 'grad', { xaxis: x }),
    ],
  ];
  const grid = h('div', { class: 'chart-grid', id: 'curves' });
  for (const [id, title, data, layout] of charts) {
    const { card, el } = chartCard(id, title);
    grid.append(card);
    void plotly(() => Plotly.react(el, data, layout, PLOTLY_CONFIG));
  }
  return grid;
}

/** The head report: importance of every head (ascending, the pruning order) and both pruning curves. */
export function headReportSection(r: HeadReport, t: Theme): HTMLElement {
  const imp = chartCard('importance', 'Head importance I_h = E|∂L/∂ξ_h| (Michel et al.)');
  const prune = chartCard('pruning', `Pruning curve: ${HEAD_METRIC[r.metric]} on ${r.sentences} test sentences`);
  void drawImportanceBars(imp.el, r, t);
  void drawPruningCurves(prune.el, r, t);
  const said = h('p', { class: 'muted' }, prunableSentence(r));
  return h('section', { id: 'heads-report' }, h('div', { class: 'chart-grid' }, imp.card, prune.card), said);
}
