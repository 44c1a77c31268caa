/**
 * Head inspector: one head large (canvas, with a colour bar), the entropy of each query row (how
 * spread its attention is: ln n for uniform, 0 for one key), the top-k keys of each query, and a
 * slider over the probe pair's snapshots of the selected run. The slider is the shared step cursor:
 * moving it (or playing it) posts `cursor`, and the dashboard marks that step; a `cursor` from the
 * extension moves it. An input the user typed has no history: it is shown at its checkpoint alone.
 * With the attention view's value-weighted toggle on, the map draws ‖α·vW^O‖ where the frame holds
 * it (entropy and top-k stay of the weights); a click on a row splits its scores (scores.ts).
 */
import {
  type Attention,
  describeShownInput,
  headId,
  type HeadMap,
  headMap,
  type HeadRef,
} from '../../src/protocol/attention';
import { headCsv, headFileName, headJson } from '../../src/protocol/export';
import { mergeSnapshots } from '../../src/algorithms/history';
import { type HeadToPage, headPage } from '../../src/protocol/pages/head';
import type { CellRef } from '../../src/protocol/drawnReport';
import type { ViewHeader } from '../../src/protocol/webview';
import {
  type DrawnReport,
  app,
  h,
  imageButton,
  loadState,
  pixelAt,
  post,
  purgeOnUnload,
  frameScheduler,
  renderHeader,
  saveState,
  shownHeader,
  start,
  watchTheme,
  poster,
} from '../common';
import { cellAt, drawColorBar, drawHeatmap, fitSize } from '../heatmap';
import { setKeyLabels } from '../keyLabels';
import { maxOf } from '../lib/attention';
import { VALUE_WEIGHTED_CAPTION } from '../lib/valueWeighted';
import { drawEntropy, drawTopK, K } from './rowCharts';
import { scoresCard } from './scores';
import { compareCard } from './compare';
import { CursorEcho } from '../lib/cursorEcho';

/** Posts what this page asks of its panel (its protocol's page → panel messages only). */
const ask = poster(headPage);

const MAP_SIDE = 480;
/** Token labels along the map's axes, when there are few enough to read. */
const LABEL_MAX = 64;
const PLAY_MS = 400;

let head: HeadRef | null = loadState()?.head ?? null;
let header: ViewHeader | null = null;
let latest: Attention | null = null;
let snapshots: Attention[] = [];
let losses = new Map<number, number>();
/** The attention view's value-weighted toggle (the panel's state says it). */
let valueWeighted = false;
/** The step the user chose (slider or cursor); undefined: the newest. */
let wantedStep: number | undefined = loadState()?.snapshotStep;
let playing: ReturnType<typeof setInterval> | undefined;
/** The extension's answers to the steps this page posted, told from moves made elsewhere. */
const echo = new CursorEcho();

const headerEl = document.getElementById('view-header') ?? h('div');
const title = h('h2', { id: 'head-title' }, 'No head selected: click a thumbnail in the attention view');
const slider = h('input', { type: 'range', id: 'step-slider', min: '0', max: '0', value: '0', step: '1' });
const play = h('button', { class: 'small', id: 'play', title: 'Play the history' }, '▶');
const stepLabel = h('span', { id: 'step-label', class: 'muted' });
const canvas = h('canvas', { id: 'head-map', class: 'big-map' });
const bar = h('canvas', { id: 'colorbar', width: '120', height: '10' });
const barMax = h('span', { id: 'colorbar-max' });
const scaleBox = h('input', { type: 'checkbox', id: 'absolute' });
const keyLabels = h('div', { class: 'key-labels' });
const queryLabels = h('div', { class: 'query-labels' });
const readout = h('div', { class: 'readout', id: 'readout' });
const entropyChart = h('div', { class: 'chart', id: 'entropy' });
const compare = compareCard();
const topTable = h('table', { id: 'topk' });
const mapTitle = h('h2', { id: 'map-title' }, 'Weights (query rows × key columns)');
const scores = scoresCard((m) => ask({ type: 'requestScores', ...m }));
scores.target(() => (head && header ? { ref: head, run: header.run, input: header.input } : null));

/** What the slider ranges over: the probe's snapshots (and the shown attention); a typed input alone. */
function frames(): Attention[] {
  if (latest?.source.input === 'input') return [latest];
  const all = [...snapshots];
  if (latest && !all.some((s) => s.source.step === latest!.source.step)) all.push(latest);
  return all.sort((a, b) => a.source.step - b.source.step);
}

/** The frame at the slider, its head's weights, and what the map draws: the weights or (toggle on, held) the norms. */
function current(): { map: HeadMap; frame: Attention; shown: HeadMap; vw: boolean } | undefined {
  const f = frames()[Number(slider.value)];
  const map = f && head ? headMap(f, head) : undefined;
  if (!map || !f || !head) return undefined;
  const norms = valueWeighted ? f.maps.find((m) => m.kind === head!.kind)?.valueWeighted : undefined;
  if (!norms) return { map, frame: f, shown: map, vw: false };
  const at = (head.layer * f.maps.find((m) => m.kind === head!.kind)!.shape[1] + head.head) * map.queries * map.keys;
  return { map, frame: f, shown: { ...map, weights: norms.subarray(at, at + map.queries * map.keys) }, vw: true };
}

function exportHead(format: 'csv' | 'json' | 'png'): void {
  const c = current();
  if (!c || !head) return;
  const name = headFileName(c.frame, head, format, c.vw);
  if (format === 'png') post({ type: 'export', format, name, dataUrl: canvas.toDataURL('image/png') });
  else {
    const text = format === 'csv' ? headCsv(c.frame, head, c.vw) : headJson(c.frame, head, c.vw);
    post({ type: 'export', format, name, text });
  }
}

function remember(): void {
  if (head) saveState({ panel: 'head', head, ...(wantedStep !== undefined ? { snapshotStep: wantedStep } : {}) });
}

/** The step last posted as the shared cursor. */
let postedStep: number | undefined;
/** Moves the shared cursor to the slider's step once a frame (the newest step wins; none queue up). */
const postCursor = frameScheduler(() => {
  const step = wantedStep;
  if (step === undefined || step === postedStep || latest?.source.input === 'input') return;
  postedStep = step;
  echo.posted(step);
  ask({ type: 'cursor', step });
});

/** The slider moved (by hand or by play): its frame is drawn now, and the shared cursor follows. */
function moved(): void {
  wantedStep = frames()[Number(slider.value)]?.source.step;
  remember();
  draw();
  postCursor();
}

function togglePlay(): void {
  if (playing) {
    clearInterval(playing);
    playing = undefined;
    play.textContent = '▶';
    return;
  }
  if (Number(slider.value) >= Number(slider.max)) slider.value = '0';
  play.textContent = '⏸';
  playing = setInterval(() => {
    if (Number(slider.value) >= Number(slider.max)) return togglePlay();
    slider.value = String(Number(slider.value) + 1);
    moved();
  }, PLAY_MS);
}

function layoutPage(): void {
  const buttons = (['png', 'csv', 'json'] as const).map((f) => {
    const b = h('button', { class: 'small' }, f.toUpperCase());
    b.addEventListener('click', () => exportHead(f));
    return b;
  });
  slider.addEventListener('input', moved);
  play.addEventListener('click', togglePlay);
  scaleBox.addEventListener('change', draw);
  canvas.addEventListener('mousemove', (e) => {
    const c = current();
    if (!c) return;
    const cell = cellAt(canvas, e, c.map.queries, c.map.keys);
    if (!cell) return;
    const w = c.shown.weights[cell.row * c.map.keys + cell.col];
    readout.textContent =
      `query ${cell.row} “${c.map.queryTokens[cell.row]}” → key ${cell.col} “${c.map.keyTokens[cell.col]}” ` +
      `= ${w.toFixed(4)}${c.vw ? ' ‖α·vW^O‖' : ''} · click to split its scores`;
  });
  canvas.addEventListener('click', (e) => {
    const c = current();
    const cell = c && cellAt(canvas, e, c.map.queries, c.map.keys);
    if (cell && head && header) scores.request(cell.row, { ref: head, run: header.run, input: header.input });
  });
  const colorBar = h(
    'span',
    { class: 'colorbar', title: 'The colour scale of the map' },
    h('span', {}, '0'),
    bar,
    barMax,
    h('label', { title: 'Colour from 0 to 1 instead of 0 to this map’s maximum' }, scaleBox, ' absolute (0–1)'),
  );
  app().append(
    h('div', { class: 'toolbar' }, title, h('span', { class: 'spacer' }), ...buttons, imageButton('html')),
    h('div', { class: 'toolbar' }, h('label', { for: 'step-slider' }, 'Training step '), play, slider, stepLabel),
    h(
      'div',
      { class: 'head-layout' },
      h(
        'section',
        { class: 'card' },
        h('header', {}, mapTitle, colorBar),
        h('div', { class: 'labelled-map' }, h('span', {}), keyLabels, queryLabels, canvas),
        readout,
      ),
      h('section', { class: 'card' }, h('header', {}, h('h2', {}, 'Entropy per query (nats)')), entropyChart),
      h('section', { class: 'card' }, h('header', {}, h('h2', {}, `Top ${K} keys per query`)), topTable),
      scores.el,
      compare.el,
    ),
  );
  purgeOnUnload(entropyChart);
}

function stepText(frame: Attention, i: number, n: number): string {
  if (frame.source.input === 'input')
    return `step ${frame.source.step}: your input at this checkpoint (only the probe pair has a history)`;
  const loss = losses.get(frame.source.step);
  return `step ${frame.source.step} (${i + 1} of ${n})${loss !== undefined ? ` · loss ${loss.toFixed(4)}` : ''}`;
}

function draw(): void {
  const fs = frames();
  slider.max = String(Math.max(0, fs.length - 1));
  slider.disabled = fs.length < 2;
  play.disabled = fs.length < 2;
  const c = current();
  if (!head || !c) {
    renderHeader(headerEl, header);
    stepLabel.textContent = !fs.length
      ? header
        ? `no snapshots of ${header.run} yet`
        : 'no run selected'
      : head
        ? `this run has no head ${headId(head)}`
        : '';
    return;
  }
  const { map, frame } = c;
  const input = describeShownInput(frame);
  renderHeader(headerEl, header, { step: frame.source.step, input });
  title.textContent = headId(head);
  stepLabel.textContent = stepText(frame, Number(slider.value), fs.length);
  const vmax = scaleBox.checked && !c.vw ? 1 : maxOf(c.shown.weights);
  const size = fitSize(map.queries, map.keys, Math.max(MAP_SIDE, Math.min(1024, Math.max(map.queries, map.keys))));
  drawHeatmap(canvas, c.shown.weights, map.queries, map.keys, size.width, size.height, vmax);
  mapTitle.textContent = c.vw
    ? `${VALUE_WEIGHTED_CAPTION} (query rows × key columns) · colour 0 to this map's largest`
    : `Weights (query rows × key columns)${valueWeighted ? ` · ${VALUE_WEIGHTED_CAPTION} not computed for this step` : ''}`;
  drawColorBar(bar);
  barMax.textContent = vmax.toFixed(vmax < 0.1 ? 3 : 2);
  const cssW = Math.min(size.width, MAP_SIDE);
  const cssH = Math.round((cssW * size.height) / size.width);
  canvas.style.width = `${cssW}px`;
  canvas.style.height = `${cssH}px`;
  canvas.dataset.step = String(frame.source.step);
  canvas.dataset.vmax = String(vmax);
  const few = map.queries <= LABEL_MAX && map.keys <= LABEL_MAX;
  setKeyLabels(keyLabels, few ? map.keyTokens : [], cssW / map.keys);
  queryLabels.replaceChildren(
    ...(few
      ? map.queryTokens.map((tok) =>
          h('span', { style: `height:${cssH / map.queries}px;line-height:${cssH / map.queries}px` }, tok),
        )
      : []),
  );
  drawDetails();
  document.body.dataset.drawnStep = String(frame.source.step);
}

/** The comparison, the entropy chart and the top-k table: once a frame, for the step shown then. */
const drawDetails = frameScheduler(() => {
  const c = current();
  if (!c || !head) return;
  compare.update(frames(), c.frame, head);
  drawEntropy(entropyChart, c.map);
  drawTopK(topTable, c.map);
});

/** Puts the slider on the step the user chose; without a choice, on the newest frame. */
function placeSlider(): void {
  const fs = frames();
  const i = wantedStep === undefined ? -1 : fs.findIndex((f) => f.source.step === wantedStep);
  slider.max = String(Math.max(0, fs.length - 1));
  slider.value = String(i >= 0 ? i : Math.max(0, fs.length - 1));
}

function handle(m: HeadToPage): void {
  switch (m.type) {
    case 'attention':
      latest = { source: m.source, srcTokens: m.srcTokens, tgtTokens: m.tgtTokens, maps: m.maps };
      break;
    case 'headScores':
      scores.show(m);
      return;
    case 'snapshots':
      snapshots = mergeSnapshots(snapshots, m.items);
      break;
    case 'cursor':
      if (m.loss !== undefined) losses.set(m.step, m.loss);
      if (!echo.accept(m.step)) return; // the answer to a step the user has already left
      if (m.step === wantedStep && m.step === current()?.frame.source.step) {
        if (m.loss !== undefined) draw(); // the step shown, with its loss now
        return;
      }
      wantedStep = m.step;
      break;
    case 'state':
      head = m.state.head ?? head;
      header = m.state.header;
      latest = m.state.attention;
      snapshots = m.state.snapshots;
      losses = new Map(m.state.losses.map((l) => [l.step, l.loss]));
      if (echo.accept(m.state.cursor)) wantedStep = m.state.cursor ?? m.state.header?.step ?? undefined;
      valueWeighted = m.state.valueWeighted ?? false;
      remember();
      break;
    default:
      throw new Error(`the head inspector does not show ${(m as { type: string }).type} messages`);
  }
  placeSlider();
  draw();
}

/** What is on screen: the header, the head and its map, the slider's frames, colours of cells of this head. */
function report(cells: CellRef[]): DrawnReport {
  const c = current();
  const colors = cells.map((cell) => {
    const ok = c && head && cell.kind === head.kind && cell.layer === head.layer && cell.head === head.head;
    if (!ok || cell.q >= c.map.queries || cell.k >= c.map.keys) return null;
    return pixelAt(
      canvas,
      ((cell.k + 0.5) * canvas.width) / c.map.keys,
      ((cell.q + 0.5) * canvas.height) / c.map.queries,
    );
  });
  const maps = c ? [{ kind: head!.kind, shape: [1, 1, c.map.queries, c.map.keys] }] : [];
  // The head as the title names it, and what the map draws while it draws the norms.
  const marks = head ? [`title ${title.textContent}`, ...(c?.vw ? [`map ${mapTitle.textContent}`] : [])] : [];
  return { ...shownHeader(headerEl), maps, head, frames: frames().length, colors, marks };
}

layoutPage();
watchTheme(draw);
start(
  headPage,
  handle,
  async (format) => {
    const c = current();
    if (!c || !head) return 'no head is shown yet';
    if (format === 'svg') return 'the head inspector draws on a canvas: PNG only';
    return { dataUrl: canvas.toDataURL('image/png'), name: headFileName(c.frame, head, 'png') };
  },
  report,
);
