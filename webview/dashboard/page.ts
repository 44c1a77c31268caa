/**
 * Training dashboard: loss (train and validation), the learning-rate schedule (the planned curve of
 * the whole run drawn ahead, actual points on it), tokens/s and gradient norm. Rows are appended
 * live; each redraw downsamples every series to ~1,500 points and calls Plotly.react with new
 * arrays and a fixed uirevision, so a zoom survives updates. Health-check findings are marked on
 * the loss curve and listed under Problems; hovering a step highlights it here and in the Heads
 * panel.
 */
import { parseHeadId } from '../../src/protocol/attention';
import { metricsCsv, metricsJson } from '../../src/protocol/export';
import type { MetricRow } from '../../src/protocol/metrics';
import { type RunEvent, describeFinding } from '../../src/protocol/telemetry';
import { type DashboardToPage, dashboardPage } from '../../src/protocol/pages/dashboard';
import type { OverlayRun, Schedule, ViewHeader } from '../../src/protocol/webview';
import {
  PLOTLY_CONFIG,
  app,
  frameScheduler,
  h,
  imageButton,
  plotly,
  plotlyText,
  post,
  purgeOnUnload,
  readTheme,
  renderHeader,
  shownHeader,
  start,
  themedLayout,
  watchTheme,
  poster,
} from '../common';
import { column, downsampleMinMax } from '../lib/downsample';
import { lineTrace } from '../lib/lineTrace';
import { assembleLr, peakMarks, xSpan } from '../lib/lr';
import { compareChart, fitLegend, legendRoom } from './compareCharts';
import { overlayTraces } from './overlays';
import { emptyChartLayout } from '../lib/emptyChart';

/** Posts what this page asks of its panel (its protocol's page → panel messages only). */
const ask = poster(dashboardPage);

let rows: MetricRow[] = [];
let schedule: Schedule | null = null;
let header: ViewHeader | null = null;
/** The shared step cursor (a vertical marker on the loss and LR curves). */
let cursor: number | null = null;
/** Health-check findings (events.jsonl). */
let events: RunEvent[] = [];
/** The step hovered here or in the Heads panel. */
let hover: number | null = null;
/** Other runs drawn with this one (Compare Runs). */
let overlays: OverlayRun[] = [];
/** Markers drawn on the loss curve: at most this many, the newest. */
const MAX_MARKERS = 200;
const headerEl = document.getElementById('view-header') ?? h('div');

const charts = {
  loss: { title: 'Loss', el: h('div', { class: 'chart', id: 'chart-loss' }) },
  lr: { title: 'Learning rate', el: h('div', { class: 'chart', id: 'chart-lr' }) },
  tps: { title: 'Tokens / s', el: h('div', { class: 'chart', id: 'chart-tps' }) },
  grad: { title: 'Gradient norm', el: h('div', { class: 'chart', id: 'chart-grad' }) },
};
type ChartName = keyof typeof charts;

const status = h('span', { class: 'muted', id: 'status' });
const problems = h('ol', { class: 'problems', id: 'problems' });
const problemsCard = h(
  'section',
  { class: 'card', id: 'problems-card', hidden: '' },
  h('header', {}, h('h2', {}, 'Problems')),
  problems,
);

/** An image of one chart (the export command asks for the loss chart). */
async function chartImage(name: ChartName, format: 'png' | 'svg'): Promise<{ dataUrl: string; name: string } | string> {
  const el = charts[name].el;
  redraw.flush();
  const dataUrl = await plotly(() =>
    Plotly.toImage(el, { format, width: Math.max(640, el.clientWidth), height: Math.max(360, el.clientHeight) }),
  );
  return dataUrl ? { dataUrl, name: `${name}.${format}` } : `plotly could not draw the ${name} chart`;
}

function exportButtons(name: ChartName): HTMLElement {
  const image = (format: 'png' | 'svg') => chartImage(name, format);
  return h('span', { class: 'actions' }, imageButton('png', image), imageButton('svg', image));
}

const runContext = () => (header ? { run: header.runDir } : {});

/** A vertical line across a chart at a step. */
const stepLine = (step: number, color: string, dash = 'solid', width = 1.5): object => ({
  type: 'line',
  x0: step,
  x1: step,
  yref: 'paper',
  y0: 0,
  y1: 1,
  line: { color, width, dash },
});

/** The cursor's vertical line, and the hovered step's, on a step axis. */
function cursorShape(color: string): object[] {
  const shapes = cursor === null ? [] : [stepLine(cursor, color)];
  if (hover !== null && hover !== cursor) shapes.push(stepLine(hover, HOVER_COLOR, 'dot'));
  return shapes;
}
const HOVER_COLOR = '#ff9f1c';
const severityColor = (e: RunEvent): string => (e.severity === 'breakpoint' ? '#f14c4c' : '#cca700');

/** The newest findings as thin lines on the loss curve, each with a hoverable flag at the top. */
function eventMarks(): { shapes: object[]; annotations: object[] } {
  const shown = events.slice(-MAX_MARKERS);
  return {
    shapes: shown.map((e) => stepLine(e.step, severityColor(e), 'dash', 1)),
    annotations: shown.map((e) => ({
      x: e.step,
      y: 1,
      yref: 'paper',
      yanchor: 'bottom',
      text: e.severity === 'breakpoint' ? '■' : '▲',
      showarrow: false,
      font: { color: severityColor(e), size: 10 },
      hovertext: plotlyText(describeFinding(e)),
    })),
  };
}

/** One line per finding, newest first; a click moves the cursor there (and opens the head). */
function listProblems(): void {
  problemsCard.hidden = events.length === 0;
  const newest = events.slice(-MAX_MARKERS).reverse();
  problems.replaceChildren(
    ...newest.map((e) => {
      const item = h(
        'li',
        { class: `problem ${e.severity}`, title: 'Move the step cursor here and open the head' },
        h('span', { class: 'badge', style: `color:${severityColor(e)}` }, e.severity === 'breakpoint' ? '■' : '▲'),
        ` ${describeFinding(e)}`,
      );
      item.addEventListener('click', () => {
        const ref = e.head ? parseHeadId(e.head) : undefined;
        if (ref) ask({ type: 'openHeadAt', ...ref, step: e.step });
        else ask({ type: 'cursor', step: e.step });
      });
      return item;
    }),
  );
}

function layoutPage(): void {
  const csv = h('button', { title: 'Save every logged step as CSV' }, 'Export CSV');
  csv.addEventListener('click', () =>
    post({ type: 'export', format: 'csv', name: 'metrics.csv', text: metricsCsv(rows, runContext()) }),
  );
  const json = h('button', { title: 'Save every logged step as JSON' }, 'Export JSON');
  json.addEventListener('click', () =>
    post({ type: 'export', format: 'json', name: 'metrics.json', text: metricsJson(rows, schedule, runContext()) }),
  );
  const grid = h('div', { class: 'chart-grid' });
  for (const name of Object.keys(charts) as ChartName[]) {
    grid.append(
      h(
        'section',
        { class: 'card' },
        h('header', {}, h('h2', {}, charts[name].title), exportButtons(name)),
        charts[name].el,
      ),
    );
  }
  app().append(
    h('div', { class: 'toolbar' }, status, h('span', { class: 'spacer' }), csv, json, imageButton('html')),
    problemsCard,
    grid,
  );
  purgeOnUnload(...Object.values(charts).map((c) => c.el));
  // A click on a point of the loss or LR curve moves the shared step cursor (the inspector follows).
  for (const name of ['loss', 'lr'] as const) {
    void plotly(() => Plotly.react(charts[name].el, [], themedLayout(readTheme(), name), PLOTLY_CONFIG)).then((gd) => {
      gd?.on('plotly_click', (e) => {
        const step = stepOfPoint(e);
        if (step !== null) ask({ type: 'cursor', step });
      });
      gd?.on('plotly_hover', (e) => hoverAt(stepOfPoint(e)));
      gd?.on('plotly_unhover', () => hoverAt(null));
    });
  }
}

const stepOfPoint = (e: unknown): number | null => {
  const step = Number((e as { points?: { x?: unknown }[] }).points?.[0]?.x);
  return Number.isInteger(step) && step >= 0 ? step : null;
};

function hoverAt(step: number | null): void {
  if (step === hover) return;
  hover = step;
  ask({ type: 'hoverStep', step });
  redraw();
}

function draw(): void {
  const t = readTheme();
  const step = (r: MetricRow) => r.step;
  const line = lineTrace;
  const train = column(rows, step, (r) => r.loss);
  const val = column(rows, step, (r) => r.valLoss);
  const lossData = [line(downsampleMinMax(train.x, train.y), 'train', t.accent)];
  if (val.x.length)
    lossData.push(
      line(downsampleMinMax(val.x, val.y), 'validation', t.accent2, { mode: 'lines+markers', marker: { size: 5 } }),
    );

  const lr = assembleLr(schedule?.points ?? [], rows);
  const lrData: Plotly.Data[] = [];
  if (lr.planned.x.length) {
    lrData.push(
      line(lr.planned, 'planned', t.muted, { line: { color: t.muted, width: 1.5, dash: 'dot' }, uid: 'planned' }),
    );
  }
  lrData.push(line(lr.actual, 'actual', t.accent3, { mode: 'lines+markers', marker: { size: 3 }, uid: 'actual' }));
  const others = overlayTraces(overlays);
  const legend = overlays.length > 0;
  // The span the lr axis shows: this run's planned steps, or with other runs every run's (autorange).
  const peak = peakMarks(lr.peak, legend ? xSpan([...lrData, ...others.lr]) : lr.xRange, t);

  const tps = column(rows, step, (r) => r.tokensPerSec);
  const grad = column(rows, step, (r) => r.gradNorm);
  const xTitle = { title: { text: 'step' } };
  const marks = eventMarks();
  const parent = header?.fork?.parent;
  const shown = {
    loss: compareChart(lossData, others.loss, parent, true),
    lr: compareChart(lrData, others.lr, parent, false),
    tps: compareChart([line(downsampleMinMax(tps.x, tps.y), 'tokens/s', t.accent)], others.tps, parent, false),
    grad: compareChart([line(downsampleMinMax(grad.x, grad.y), 'grad norm', t.accent2)], others.grad, parent, true),
  };
  const draws: [ChartName, Plotly.Data[], Plotly.Layout][] = [
    [
      'loss',
      shown.loss.data,
      themedLayout(t, 'loss', {
        ...shown.loss.layout,
        xaxis: xTitle,
        shapes: [...marks.shapes, ...cursorShape(t.accent2)],
        annotations: marks.annotations,
      }),
    ],
    [
      'lr',
      shown.lr.data,
      themedLayout(t, 'lr', {
        ...shown.lr.layout,
        // Other runs: every run's steps (autorange said outright: the same uirevision keeps the range a
        // draw without them set, which left other runs' steps outside the axis).
        xaxis: { ...xTitle, ...(legend ? { autorange: true } : { range: lr.xRange }) },
        // From 0 (a learning rate never goes below): a constant one would otherwise sit on the 0
        // line of plotly's value ± 1.
        yaxis: { exponentformat: 'e', rangemode: 'tozero' },
        shapes: [...peak.shapes, ...cursorShape(t.accent2)],
        annotations: peak.annotations,
      }),
    ],
    ['tps', shown.tps.data, themedLayout(t, 'tps', { ...shown.tps.layout, xaxis: xTitle, showlegend: legend })],
    ['grad', shown.grad.data, themedLayout(t, 'grad', { ...shown.grad.layout, xaxis: xTitle, showlegend: legend })],
  ];
  const nothing = header ? 'No steps logged yet' : 'No run selected';
  for (const [name, data, layout] of draws) {
    const el = charts[name].el;
    const room = legendRoom(el, data, legend);
    const shownLayout = emptyChartLayout(data, { ...layout, ...room }, nothing, t.muted);
    void plotly(async () => {
      await Plotly.react(el, data, shownLayout, PLOTLY_CONFIG);
      await fitLegend(el, legend);
    });
  }
  const last = rows[rows.length - 1];
  let lastVal: MetricRow | undefined;
  for (let i = rows.length - 1; i >= 0 && !lastVal; i--)
    if (rows[i].valLoss !== undefined || rows[i].valBleu !== undefined) lastVal = rows[i];
  const valText = lastVal
    ? ` · at step ${lastVal.step}: validation${lastVal.valLoss !== undefined ? ` loss ${lastVal.valLoss.toFixed(4)}` : ''}${lastVal.valBleu !== undefined ? ` BLEU ${lastVal.valBleu.toFixed(2)}` : ''}`
    : '';
  renderHeader(headerEl, header, { step: cursor ?? header?.step ?? null });
  listProblems();
  document.body.dataset.cursor = cursor === null ? '' : String(cursor);
  status.textContent = last
    ? `step ${last.step}${schedule ? ` of ${schedule.totalSteps}` : ''} · loss ${last.loss.toFixed(4)} · lr ${last.lr.toExponential(3)} · ${Math.round(last.tokensPerSec)} tokens/s${valText}`
    : schedule
      ? `Planned: ${schedule.totalSteps} steps, warmup ${schedule.warmupSteps}, d_model ${schedule.dModel}`
      : header
        ? `No steps logged in ${header.run} yet.`
        : 'No run selected: train one (Attention Debugger: Train) or open a run folder (Open Run).';
  void plotly(() => {
    document.body.dataset.drawn = String(Number(document.body.dataset.drawn ?? '0') + 1);
  });
}

const redraw = frameScheduler(draw);

function handle(m: DashboardToPage): void {
  switch (m.type) {
    case 'metrics':
      if (m.reset) rows = [];
      // Rows arrive in step order; a resumed run may resend steps, which replace the old ones.
      for (const r of m.rows) {
        while (rows.length && rows[rows.length - 1].step >= r.step) rows.pop();
        rows.push(r);
      }
      break;
    case 'schedule':
      schedule = { totalSteps: m.totalSteps, warmupSteps: m.warmupSteps, dModel: m.dModel, points: m.points };
      break;
    case 'cursor':
      cursor = m.step;
      break;
    case 'events':
      events = [...events, ...m.events];
      break;
    case 'hoverStep':
      hover = m.step;
      break;
    case 'overlay':
      overlays = [...m.runs];
      break;
    case 'state':
      rows = [...m.state.rows];
      schedule = m.state.schedule;
      header = m.state.header;
      cursor = m.state.cursor;
      events = [...m.state.events];
      overlays = [...(m.state.overlays ?? [])];
      break;
    default:
      throw new Error(`the dashboard does not show ${(m as { type: string }).type} messages`);
  }
  redraw();
}

layoutPage();
watchTheme(redraw);
start(
  dashboardPage,
  handle,
  (format) => chartImage('loss', format),
  () => ({
    ...shownHeader(headerEl),
    maps: [],
    head: null,
    frames: rows.length,
    colors: [],
    marks: [
      ...events.slice(-MAX_MARKERS).map((e) => `${e.check}@${e.step}`),
      ...(hover === null ? [] : [`hover@${hover}`]),
      ...overlays.map((o) => `overlay ${o.run}@${o.rows[0]?.step ?? '-'}`),
    ],
  }),
);
redraw();
