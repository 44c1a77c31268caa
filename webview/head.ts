/**
 * Head inspector: one head large (canvas), the entropy of each query row (how spread its
 * attention is: ln n for uniform, 0 for one key), the top-k keys of each query, and a slider over
 * the probe sentence's snapshots at earlier steps that redraws all three.
 */
import { type Attention, type HeadMap, headMap, type HeadRef } from '../src/protocol/attention';
import { headCsv, headFileName, headJson } from '../src/protocol/export';
import type { ToWebview } from '../src/protocol/webview';
import {
  PLOTLY_CONFIG,
  app,
  h,
  loadState,
  plotly,
  post,
  purgeOnUnload,
  readTheme,
  saveState,
  start,
  themedLayout,
  watchTheme,
} from './common';
import { cellAt, drawHeatmap, fitSize } from './heatmap';
import { rowEntropy, topK } from './lib/attention';

const MAP_SIDE = 480;
const K = 3;

let head: HeadRef | null = loadState()?.head ?? null;
let latest: Attention | null = null;
let snapshots: Attention[] = [];
let wantedStep: number | undefined = loadState()?.snapshotStep;

const title = h('h2', { id: 'head-title' }, 'No head selected: click a thumbnail in the attention view');
const slider = h('input', { type: 'range', id: 'step-slider', min: '0', max: '0', value: '0', step: '1' });
const stepLabel = h('span', { id: 'step-label', class: 'muted' });
const canvas = h('canvas', { id: 'head-map', class: 'big-map' });
const keyLabels = h('div', { class: 'key-labels' });
const queryLabels = h('div', { class: 'query-labels' });
/** Token labels along the map's axes, when there are few enough to read. */
const LABEL_MAX = 64;
const readout = h('div', { class: 'readout', id: 'readout' });
const entropyChart = h('div', { class: 'chart', id: 'entropy' });
const topTable = h('table', { id: 'topk' });

/** The payloads the slider ranges over: snapshots oldest first, then the latest attention. */
function frames(): Attention[] {
  const all = [...snapshots];
  if (latest && !all.some((s) => s.source.step === latest!.source.step)) all.push(latest);
  return all.sort((a, b) => a.source.step - b.source.step);
}

function current(): { map: HeadMap; frame: Attention } | undefined {
  const fs = frames();
  const f = fs[Number(slider.value)];
  const map = f && head ? headMap(f, head) : undefined;
  return map && f ? { map, frame: f } : undefined;
}

function exportHead(format: 'csv' | 'json' | 'png'): void {
  const c = current();
  if (!c || !head) return;
  const name = headFileName(c.frame, head, format);
  if (format === 'png') post({ type: 'export', format, name, dataUrl: canvas.toDataURL('image/png') });
  else
    post({ type: 'export', format, name, text: format === 'csv' ? headCsv(c.frame, head) : headJson(c.frame, head) });
}

function layoutPage(): void {
  const buttons = (['png', 'csv', 'json'] as const).map((f) => {
    const b = h('button', { class: 'small' }, f.toUpperCase());
    b.addEventListener('click', () => exportHead(f));
    return b;
  });
  slider.addEventListener('input', () => {
    wantedStep = frames()[Number(slider.value)]?.source.step;
    if (head) saveState({ panel: 'head', head, ...(wantedStep !== undefined ? { snapshotStep: wantedStep } : {}) });
    draw();
  });
  canvas.addEventListener('mousemove', (e) => {
    const c = current();
    if (!c) return;
    const cell = cellAt(canvas, e, c.map.queries, c.map.keys);
    if (cell)
      readout.textContent = `query ${cell.row} “${c.map.queryTokens[cell.row]}” → key ${cell.col} “${c.map.keyTokens[cell.col]}” = ${c.map.weights[cell.row * c.map.keys + cell.col].toFixed(4)}`;
  });
  app().append(
    h('div', { class: 'toolbar' }, title, h('span', { class: 'spacer' }), ...buttons),
    h('div', { class: 'toolbar' }, h('label', { for: 'step-slider' }, 'Training step '), slider, stepLabel),
    h(
      'div',
      { class: 'head-layout' },
      h(
        'section',
        { class: 'card' },
        h('header', {}, h('h2', {}, 'Weights (query rows × key columns)')),
        h('div', { class: 'labelled-map' }, h('span', {}), keyLabels, queryLabels, canvas),
        readout,
      ),
      h('section', { class: 'card' }, h('header', {}, h('h2', {}, 'Entropy per query (nats)')), entropyChart),
      h('section', { class: 'card' }, h('header', {}, h('h2', {}, `Top ${K} keys per query`)), topTable),
    ),
  );
  purgeOnUnload(entropyChart);
}

function draw(): void {
  const fs = frames();
  slider.max = String(Math.max(0, fs.length - 1));
  slider.disabled = fs.length < 2;
  const c = current();
  if (!head || !c) {
    stepLabel.textContent = !fs.length
      ? 'no data yet'
      : head
        ? `this run has no ${head.kind} layer ${head.layer + 1} head ${head.head + 1}`
        : '';
    return;
  }
  const { map, frame } = c;
  title.textContent = `${head.kind} · layer ${head.layer + 1} · head ${head.head + 1}`;
  stepLabel.textContent = `step ${frame.source.step} (${Number(slider.value) + 1} of ${fs.length})`;
  const size = fitSize(map.queries, map.keys, Math.max(MAP_SIDE, Math.min(1024, Math.max(map.queries, map.keys))));
  drawHeatmap(canvas, map.weights, map.queries, map.keys, size.width, size.height);
  canvas.style.width = `${Math.min(size.width, MAP_SIDE)}px`;
  canvas.style.height = `${Math.round((Math.min(size.width, MAP_SIDE) * size.height) / size.width)}px`;
  canvas.dataset.step = String(frame.source.step);
  const cssW = Math.min(size.width, MAP_SIDE);
  const cssH = Math.round((cssW * size.height) / size.width);
  const few = map.queries <= LABEL_MAX && map.keys <= LABEL_MAX;
  keyLabels.replaceChildren(
    ...(few ? map.keyTokens.map((tok) => h('span', { style: `width:${cssW / map.keys}px` }, tok)) : []),
  );
  queryLabels.replaceChildren(
    ...(few
      ? map.queryTokens.map((tok) =>
          h('span', { style: `height:${cssH / map.queries}px;line-height:${cssH / map.queries}px` }, tok),
        )
      : []),
  );

  const ent = rowEntropy(map.weights, map.queries, map.keys);
  const labels = map.queryTokens.map((tok, i) => `${tok} ‹${i}›`);
  const t = readTheme();
  void plotly(() =>
    Plotly.react(
      entropyChart,
      [
        {
          type: 'bar',
          orientation: 'h',
          x: Array.from(ent),
          y: labels,
          marker: { color: t.accent },
          hovertemplate: '%{y}: %{x:.3f} nats<extra></extra>',
          name: 'entropy',
        },
        {
          type: 'scatter',
          mode: 'lines',
          x: [Math.log(map.keys), Math.log(map.keys)],
          y: [labels[0], labels[labels.length - 1]],
          line: { color: t.muted, dash: 'dot' },
          name: `uniform (ln ${map.keys})`,
          hoverinfo: 'skip',
        },
      ],
      themedLayout(t, 'entropy', {
        yaxis: { type: 'category', autorange: 'reversed' },
        xaxis: { rangemode: 'tozero', title: { text: 'nats' } },
        showlegend: true,
        height: Math.min(1200, Math.max(240, 16 * labels.length + 80)),
      }),
      PLOTLY_CONFIG,
    ),
  );

  const rowsShown = Math.min(map.queries, 128);
  const body: HTMLElement[] = [
    h('tr', {}, h('th', {}, 'query'), ...Array.from({ length: K }, (_, i) => h('th', {}, `#${i + 1}`))),
  ];
  for (let q = 0; q < rowsShown; q++) {
    const best = topK(map.weights, q, map.keys, K);
    body.push(
      h(
        'tr',
        {},
        h('td', {}, `${map.queryTokens[q]} ‹${q}›`),
        ...best.map((b) => h('td', {}, `${map.keyTokens[b.key]} ‹${b.key}› ${b.weight.toFixed(3)}`)),
      ),
    );
  }
  if (rowsShown < map.queries)
    body.push(
      h(
        'tr',
        {},
        h(
          'td',
          { colspan: String(K + 1), class: 'muted' },
          `… ${map.queries - rowsShown} more queries (export CSV for all)`,
        ),
      ),
    );
  topTable.replaceChildren(...body);
  document.body.dataset.drawnStep = String(frame.source.step);
}

/** Keeps the slider on the step the user chose when frames arrive; else follows the newest. */
function placeSlider(): void {
  const fs = frames();
  const i = wantedStep === undefined ? -1 : fs.findIndex((f) => f.source.step === wantedStep);
  slider.max = String(Math.max(0, fs.length - 1));
  slider.value = String(i >= 0 ? i : Math.max(0, fs.length - 1));
}

function handle(m: ToWebview): void {
  switch (m.type) {
    case 'attention':
      latest = { source: m.source, srcTokens: m.srcTokens, tgtTokens: m.tgtTokens, maps: m.maps };
      break;
    case 'snapshots':
      snapshots = m.items;
      break;
    case 'state':
      if (m.state.panel !== 'head') throw new Error(`state for panel ${m.state.panel} sent to the head inspector`);
      head = m.state.head ?? head;
      latest = m.state.attention;
      snapshots = m.state.snapshots;
      if (head) saveState({ panel: 'head', head, ...(wantedStep !== undefined ? { snapshotStep: wantedStep } : {}) });
      break;
    default:
      throw new Error(`the head inspector does not show ${m.type} messages`);
  }
  placeSlider();
  draw();
}

layoutPage();
watchTheme(draw);
start('head', handle, async (format) => {
  const c = current();
  if (!c || !head) return 'no head is shown yet';
  if (format === 'svg') return 'the head inspector draws on a canvas: PNG only';
  return { dataUrl: canvas.toDataURL('image/png'), name: headFileName(c.frame, head, 'png') };
});
