/**
 * The Global Q/K view (after AttentionViz, Yeh et al., IEEE VIS 2023): one head's queries and keys
 * over many validation pairs, in one 2-D plane fitted at a basis step (PCA, or seeded UMAP) by the
 * engine (heads/global). Its header says run, head, step, basis and pairs; a toolbar chooses the
 * colouring (token, position, query/key) and the projection; a slider over the run's checkpoints
 * moves the points through training on the same basis. Hovering a point names its sentence and
 * token; clicking it opens that pair at that step in the attention view.
 */
import { headId } from '../../src/protocol/attention';
import type { GlobalView } from '../../src/protocol/globalView';
import type { GlobalState } from '../../src/protocol/panelState';
import { type GlobalFromPage, globalPage } from '../../src/protocol/pages/global';
import { PLOTLY_CONFIG, app, h, imageButton, plotly, poster, purgeOnUnload, readTheme, themedLayout } from '../common';
import { drawRunHeader, drawnSummary, startReportPage } from '../lib/reportPage';
import { COLOUR_BY, type ColourBy, traces } from './plot';

const ask = poster<GlobalFromPage>(globalPage);
let state: GlobalState | null = null;
let colourBy: ColourBy = 'token';
/** The view drawn last, and with which colouring (a state that changes neither leaves the chart as it is). */
let drawnOf: { view: GlobalView; by: ColourBy; dark: boolean } | null = null;
/** What the last hover said (for the page hook). */
let hovered = '';

const headerEl = document.getElementById('view-header') ?? h('div');
const status = h('p', { class: 'muted', id: 'status' });
const chart = h('div', { class: 'chart tall', id: 'chart-global' });
const colourSelect = h(
  'select',
  { id: 'colour-by', title: 'What a point’s colour says' },
  ...COLOUR_BY.map((c) => h('option', { value: c }, c === 'role' ? 'query / key' : c)),
);
const projectionSelect = h(
  'select',
  { id: 'projection', title: 'PCA: the basis step’s two main axes; UMAP: seeded, fitted at the basis step' },
  h('option', { value: 'pca' }, 'PCA'),
  h('option', { value: 'umap' }, 'UMAP'),
);
const slider = h('input', { id: 'step-slider', type: 'range', min: '0', max: '0', step: '1', value: '0' });
const sliderLabel = h('span', { id: 'step-label', class: 'muted' }, '');

function drawHeader(): void {
  const v = state?.view;
  const head = state?.head ? headId(state.head) : null;
  const parts = v
    ? [
        ` · ${headId(v)}`,
        ` · step ${v.step}`,
        ` · ${v.projection.toUpperCase()} basis of step ${v.basisStep}`,
        ` · ${v.pairs.length} validation pairs`,
        ` · ${v.points.role.filter((r) => r === 'q').length} queries, ${v.points.role.filter((r) => r === 'k').length} keys`,
      ]
    : [head ? ` · ${head}` : ' · no head chosen'];
  drawRunHeader(headerEl, state?.runDir ?? null, parts, v ? v.step : null);
}

function drawControls(v: GlobalView | null): void {
  colourSelect.value = colourBy;
  if (v) projectionSelect.value = v.projection;
  const steps = v?.steps ?? [];
  slider.max = String(Math.max(0, steps.length - 1));
  slider.disabled = steps.length < 2;
  if (v) slider.value = String(Math.max(0, steps.indexOf(v.step)));
  sliderLabel.textContent = v ? `step ${v.step} of ${steps.map(String).join(', ')}` : '';
}

function drawChart(v: GlobalView): void {
  const t = readTheme();
  if (drawnOf && drawnOf.view === v && drawnOf.by === colourBy && drawnOf.dark === t.dark) return;
  drawnOf = { view: v, by: colourBy, dark: t.dark };
  const axis = (n: number) =>
    v.projection === 'pca'
      ? `PC${n + 1}${v.explained ? ` (${(100 * v.explained[n]!).toFixed(1)}% of the variance)` : ''}`
      : `UMAP ${n + 1}`;
  const layout = themedLayout(t, `global:${headId(v)}:${v.projection}`, {
    xaxis: { title: { text: axis(0) } },
    yaxis: { title: { text: axis(1) } },
    hovermode: 'closest',
  });
  void plotly(() => Plotly.react(chart, traces(v, colourBy, t), layout, PLOTLY_CONFIG)).then((gd) => {
    if (gd && !wired) wire(gd);
  });
}

/** plotly's events exist once the chart is first drawn: wired then, once. */
let wired = false;
function wire(gd: Plotly.PlotlyHTMLElement): void {
  wired = true;
  const pointOf = (e: unknown): number | undefined =>
    (e as { points?: { customdata?: number }[] }).points?.[0]?.customdata;
  gd.on('plotly_hover', (e) => {
    const i = pointOf(e);
    const v = state?.view;
    if (i !== undefined && v) hovered = `sentence ${v.points.sentence[i]} ${v.points.role[i]} ${v.points.token[i]}`;
  });
  gd.on('plotly_click', (e) => {
    const i = pointOf(e);
    const v = state?.view;
    if (i !== undefined && v) ask({ type: 'openPair', sentence: v.points.sentence[i]!, step: v.step });
  });
}

function draw(): void {
  drawHeader();
  const v = state?.view ?? null;
  drawControls(v);
  const line = state?.error ?? state?.busy ?? v?.note ?? (state?.runDir ? 'Choose a head' : 'No run selected');
  status.textContent = line;
  status.className = state?.error ? 'error' : 'muted';
  chart.hidden = !v;
  if (v) drawChart(v);
}

function layoutPage(): void {
  colourSelect.addEventListener('change', () => {
    colourBy = colourSelect.value as ColourBy;
    draw();
  });
  projectionSelect.addEventListener('change', () =>
    ask({ type: 'globalProjection', projection: projectionSelect.value as 'pca' | 'umap' }),
  );
  slider.addEventListener('change', () => {
    const step = state?.view?.steps[Number(slider.value)];
    if (step !== undefined) ask({ type: 'globalStep', step });
  });
  const image = async (format: 'png' | 'svg') => {
    const v = state?.view;
    if (!v) return 'no global view is shown';
    const dataUrl = await plotly(() => Plotly.toImage(chart, { format, width: 1200, height: 900 }));
    return dataUrl ? { dataUrl, name: `global-${headId(v)}-step-${v.step}.${format}` } : 'plotly could not draw it';
  };
  app().append(
    h(
      'div',
      { class: 'toolbar' },
      h('label', {}, 'Colour by ', colourSelect),
      h('label', {}, 'Projection ', projectionSelect),
      h('label', {}, 'Step ', slider),
      sliderLabel,
      imageButton('png', image),
      imageButton('svg', image),
    ),
    status,
    h('section', { class: 'card' }, chart),
  );
  purgeOnUnload(chart);
}

layoutPage();
startReportPage(
  globalPage,
  'global',
  (s) => {
    state = s;
  },
  draw,
  undefined,
  () => {
    const v = state?.view;
    return {
      ...drawnSummary(headerEl, v ? v.step : null, [
        status.textContent ?? '',
        ...(v ? [`points ${v.points.x.length}`, `colour ${colourBy}`, `projection ${v.projection}`] : []),
        ...(hovered ? [`hover ${hovered}`] : []),
      ]),
      head: state?.head ?? null,
      frames: v?.steps.length ?? 0,
    };
  },
);
