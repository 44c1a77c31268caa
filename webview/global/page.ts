/**
 * The Global Q/K view (after AttentionViz, Yeh et al., IEEE VIS 2023): one head's queries and keys
 * over many validation pairs, in one 2-D plane fitted at a basis step (PCA, or seeded UMAP) by the
 * engine (heads/global). Its header says run, head, step, basis and pairs (wrapped between them,
 * never cut); a toolbar chooses the colouring (token, position, query/key) and the projection; a
 * slider over the run's checkpoints moves the points through training on the same basis. Hovering a point names its sentence and
 * token; clicking it opens that pair at that step in the attention view. The scatter is a canvas
 * of the page's own (canvas.ts), hit-tested through a grid (lib/scatter.ts), one pointer move a
 * frame; PNG export only (no SVG: 30,000 points as SVG were what made plotly's scatter slow).
 */
import { headId } from '../../src/protocol/attention';
import type { GlobalView } from '../../src/protocol/globalView';
import type { GlobalState } from '../../src/protocol/panelState';
import { type GlobalFromPage, globalPage } from '../../src/protocol/pages/global';
import { app, h, imageButton, poster, readTheme } from '../common';
import { counted } from '../lib/counted';
import { drawRunHeader, drawnSummary, startReportPage } from '../lib/reportPage';
import { nearest } from '../lib/scatter';
import { HIT_RADIUS, type Painted, paintScatter } from './canvas';
import { COLOUR_BY, type ColourBy, hoverLines, pointsOf } from './plot';

const ask = poster<GlobalFromPage>(globalPage);
let state: GlobalState | null = null;
let colourBy: ColourBy = 'token';
/** What the canvas shows (a state that changes none of it leaves the canvas as it is). */
let drawnOf: { view: GlobalView; by: ColourBy; theme: string; width: number; height: number; dpr: number } | null =
  null;
/** Where the last drawing put the points (for hover and click). */
let painted: Painted | null = null;
/** What the last hover said (for the page hook). */
let hovered = '';

const headerEl = document.getElementById('view-header') ?? h('div');
const status = h('p', { class: 'muted', id: 'status' });
const chart = h('div', { class: 'chart tall', id: 'chart-global' });
const canvas = h('canvas', { id: 'global-canvas', role: 'img' });
const hoverLabel = h('div', { id: 'global-hover', role: 'tooltip' });
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
        headId(v),
        `step ${v.step}`,
        `${v.projection.toUpperCase()} basis of step ${v.basisStep}`,
        counted(v.pairs.length, 'validation pair'),
        `${counted(pointsOf(v, 'q').length, 'query', 'queries')}, ${counted(pointsOf(v, 'k').length, 'key')}`,
      ]
    : [head ?? 'no head chosen'];
  drawRunHeader(headerEl, state?.runDir ?? null, parts, v ? v.step : null);
}

function drawControls(v: GlobalView | null): void {
  colourSelect.value = colourBy;
  if (v) projectionSelect.value = v.projection;
  const steps = v?.steps ?? [];
  slider.max = String(Math.max(0, steps.length - 1));
  slider.disabled = steps.length < 2;
  if (v) slider.value = String(Math.max(0, steps.indexOf(v.step)));
  sliderLabel.textContent = v ? `step ${v.step} · checkpoints ${steps.map(String).join(', ')}` : '';
}

/** Draws the scatter at the chart's size, unless it already shows this view, colouring, theme and size. */
function drawChart(v: GlobalView): void {
  const t = readTheme();
  const theme = `${t.bg} ${t.fg} ${t.grid} ${t.accent} ${t.accent2} ${t.font} ${t.fontSize}`;
  const width = Math.max(1, chart.clientWidth);
  const height = Math.max(1, chart.clientHeight);
  const dpr = window.devicePixelRatio || 1;
  const d = drawnOf;
  if (
    d &&
    d.view === v &&
    d.by === colourBy &&
    d.theme === theme &&
    d.width === width &&
    d.height === height &&
    d.dpr === dpr
  )
    return;
  drawnOf = { view: v, by: colourBy, theme, width, height, dpr };
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  painted = paintScatter(canvas, v, colourBy, t, width, height, dpr);
  canvas.setAttribute('aria-label', `${v.points.x.length} points, coloured by ${colourBy}`);
  const { box, x, y } = painted;
  // Where the plot is and what it spans (for the tests and the bench, which place the pointer on a point).
  canvas.dataset.box = [box.left, box.top, box.width, box.height].join(' ');
  canvas.dataset.domain = [...x.domain, ...y.domain].join(' ');
  canvas.dataset.drawn = `${v.step} ${colourBy} ${v.points.x.length}`;
  canvas.dataset.key = JSON.stringify(painted.key);
  showHover(-1);
}

/** Labels point `i` (-1: none) beside it; the text goes in as text, never as markup. */
function showHover(i: number): void {
  const v = state?.view;
  if (i < 0 || !v || !painted) {
    hoverLabel.hidden = true;
    return;
  }
  const [first, second] = hoverLines(v, i);
  hoverLabel.replaceChildren(h('div', {}, first), h('div', { class: 'muted' }, second));
  hoverLabel.dataset.point = String(i);
  hoverLabel.hidden = false;
  const px = painted.x(v.points.x[i]!);
  const py = painted.y(v.points.y[i]!);
  const w = hoverLabel.offsetWidth;
  const left = px + 12 + w > chart.clientWidth ? Math.max(0, px - 12 - w) : px + 12;
  Object.assign(hoverLabel.style, { left: `${left}px`, top: `${Math.max(0, py - 10)}px` });
  hovered = `sentence ${v.points.sentence[i]} ${v.points.role[i]} ${v.points.token[i]}`;
}

/** The point under a mouse event (-1: none). */
function pointAt(e: MouseEvent): number {
  if (!painted) return -1;
  const r = canvas.getBoundingClientRect();
  return nearest(painted.grid, e.clientX - r.left, e.clientY - r.top, HIT_RADIUS);
}

/** Pointer moves: only the last of each animation frame is looked up. */
function watchPointer(): void {
  let last: MouseEvent | null = null;
  canvas.addEventListener('mousemove', (e) => {
    if (!last)
      requestAnimationFrame(() => {
        const i = last ? pointAt(last) : -1;
        last = null;
        if (Number(hoverLabel.dataset.point ?? -1) !== i || hoverLabel.hidden !== i < 0) showHover(i);
        canvas.style.cursor = i < 0 ? '' : 'pointer';
      });
    last = e;
  });
  canvas.addEventListener('mouseleave', () => {
    last = null;
    showHover(-1);
  });
  canvas.addEventListener('click', (e) => {
    const i = pointAt(e);
    const v = state?.view;
    if (i >= 0 && v) ask({ type: 'openPair', sentence: v.points.sentence[i]!, step: v.step });
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
  Object.assign(chart.style, { position: 'relative', overflow: 'hidden' });
  Object.assign(hoverLabel.style, {
    position: 'absolute',
    pointerEvents: 'none',
    whiteSpace: 'nowrap',
    padding: '3px 6px',
    color: 'var(--vscode-editorHoverWidget-foreground, var(--vscode-editor-foreground))',
    background: 'var(--vscode-editorHoverWidget-background, var(--vscode-editor-background))',
    border: '1px solid var(--vscode-editorHoverWidget-border, var(--vscode-editorWidget-border, #454545))',
  });
  hoverLabel.hidden = true;
  chart.append(canvas, hoverLabel);
  watchPointer();
  // A new size (the panel resized, or shown after being hidden) is drawn at the next frame.
  let resizing = false;
  new ResizeObserver(() => {
    if (resizing) return;
    resizing = true;
    requestAnimationFrame(() => {
      resizing = false;
      if (state?.view && !chart.hidden) drawChart(state.view);
    });
  }).observe(chart);
  app().append(
    h(
      'div',
      { class: 'toolbar' },
      h('label', {}, 'Colour by ', colourSelect),
      h('label', {}, 'Projection ', projectionSelect),
      h('label', {}, 'Step ', slider),
      sliderLabel,
      imageButton('png', image),
    ),
    status,
    h('section', { class: 'card' }, chart),
  );
}

/** The view as a PNG, drawn afresh at 1200 × 900 (not the panel's size) in the current theme. */
async function image(format: 'png' | 'svg') {
  const v = state?.view;
  if (!v) return 'no global view is shown';
  if (format !== 'png') return 'the global view saves PNG only';
  const c = document.createElement('canvas');
  paintScatter(c, v, colourBy, readTheme(), 1200, 900, 1);
  return { dataUrl: c.toDataURL('image/png'), name: `global-${headId(v)}-step-${v.step}.png` };
}

layoutPage();
startReportPage(
  globalPage,
  'global',
  (s) => {
    state = s;
  },
  draw,
  image,
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
