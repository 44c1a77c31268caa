/**
 * Attention view: for each kind (encoder self, decoder self, cross) the grid of all layers × heads
 * as canvas thumbnails; hovering reads out the query/key tokens and the weight, clicking opens the
 * head large as a plotly heatmap with token axes and hover values, and asks the extension to open
 * it in the head inspector (`openHead`). The grids themselves (kept between snapshots, only changed
 * maps redrawn: issue 34) are thumbGrid.ts. Under each thumbnail, the head's roles at that step
 * (from telemetry, docs/TELEMETRY.md), when it has any. With the value-weighted toggle
 * (valueWeightedToggle.ts) every one of them draws ‖α·vW^O‖ instead of the weights, and exports it.
 */
import {
  type Attention,
  type AttentionKind,
  describeShownInput,
  headId,
  headMap,
  type HeadRef,
  tokensOf,
} from '../../src/protocol/attention';
import { headCsv, headFileName, headJson } from '../../src/protocol/export';
import { type AttentionToPage, attentionPage } from '../../src/protocol/pages/attention';
import type { CellRef } from '../../src/protocol/drawnReport';
import type { HeadRoles, ViewHeader } from '../../src/protocol/webview';
import {
  type DrawnReport,
  PLOTLY_CONFIG,
  app,
  h,
  imageButton,
  loadState,
  pixelAt,
  plotly,
  post,
  purgeOnUnload,
  readTheme,
  renderHeader,
  saveState,
  shownHeader,
  start,
  themedLayout,
  watchTheme,
  poster,
} from '../common';
import { maxOf, poolMax } from '../lib/attention';
import { poolCaption } from '../../src/algorithms/pool';
import { plotlyColorscale } from '../lib/colormap';
import { inputForm } from './inputForm';
import { ablationCard } from './ablation';
import { zoomCard } from './zoom';
import { detailKey, emptyStatus, KIND_TITLES, label, sameHead, shownOf } from './attentionNames';
import { clearGrid, showGrid, watchGrid } from './thumbGrid';
import { sameValues } from '../heatmap';
import { type Shown, valueWeightedToggle } from './valueWeightedToggle';
import { scaledBy, VALUE_WEIGHTED_CAPTION } from '../lib/valueWeighted';
import { counted } from '../lib/counted';

/** Posts what this page asks of its panel (its protocol's page → panel messages only). */
const ask = poster(attentionPage);

/** plotly heatmaps lag past ~500 × 500 cells; the large view max-pools to this many per side. */
const DETAIL_MAX = 256;

let payload: Attention | null = null;
/** What the views draw of the payload: its weights, or its value-weighted norms. */
let view: Shown | null = null;
let header: ViewHeader | null = null;
/** `kind:layer.head` → its roles at the attention's step. */
let roles = new Map<string, string[]>();
let selected: HeadRef | null = loadState()?.head ?? null;
let generation = 0;
/** What the large head card draws (`detailKey`), or null when it is empty: never another run's or input's map. */
let detailShown: string | null = null;
/** What the large head card was drawn from: a snapshot that leaves its map as it was draws it not again. */
let detailFrom: { p: Attention; ref: HeadRef; absolute: boolean; vw: boolean } | null = null;
/** The run and input of the last attention drawn, to say what was cleared when it no longer fits the header. */
let lastShown: { run: string; input: string } | null = null;

const headerEl = document.getElementById('view-header') ?? h('div');
const form = inputForm();
const status = h('span', { class: 'muted', id: 'status' });
const readout = h('span', { class: 'readout', id: 'readout' });
const scaleBox = h('input', { type: 'checkbox', id: 'absolute' });
const scaleText = h('span', {}, ' absolute scale (0–1)');
const toggle = valueWeightedToggle({
  ask: (on, id) => ask({ type: 'showValueWeighted', id, on }),
  current: () => payload,
  changed: () => {
    remember();
    render();
  },
});

/** The page's saved UI state: the head open and the toggle. */
function remember(): void {
  saveState({ panel: 'attention', ...(selected ? { head: selected } : {}), valueWeighted: toggle.on });
}
const grids = h('div', { id: 'grids' });
const detailTitle = h('h2', { id: 'detail-title' }, 'Click a head to open it');
const detail = h('div', { class: 'chart detail', id: 'detail' });
const ablation = ablationCard(() => markAblated());
const zoom = zoomCard();
const switchButton = h('button', { class: 'small', id: 'switch-head', disabled: '' }, 'Switch Off');
switchButton.title = 'Switch this head off (its output removed before W^O) and see what the input loses';
switchButton.addEventListener('click', () => selected && ablation.toggle(headId(selected)));

/** Thumbnails of heads switched off are marked; the switch says what it would do to the open head. */
function markAblated(): void {
  const off = new Set(ablation.off());
  for (const c of grids.querySelectorAll<HTMLCanvasElement>('canvas.thumb')) {
    const id = headId({
      kind: c.dataset.kind as AttentionKind,
      layer: Number(c.dataset.layer),
      head: Number(c.dataset.head),
    });
    c.classList.toggle('ablated', off.has(id));
  }
  switchButton.textContent = selected && off.has(headId(selected)) ? 'Switch On' : 'Switch Off';
  if (selected && detailShown !== null) switchButton.removeAttribute('disabled');
}

/** The open head as shown: its weights, or its value-weighted norms, named so. */
function exportHead(format: 'csv' | 'json'): void {
  if (!payload || !selected || !headMap(payload, selected)) return;
  const vw = !!view?.vw;
  const text = format === 'csv' ? headCsv(payload, selected, vw) : headJson(payload, selected, vw);
  post({ type: 'export', format, name: headFileName(payload, selected, format, vw), text });
}

/** The head opened large, as an image. */
async function headImage(format: 'png' | 'svg'): Promise<{ dataUrl: string; name: string } | string> {
  if (!selected || detailShown === null) return 'open a head first (click a thumbnail)';
  const dataUrl = await plotly(() => Plotly.toImage(detail, { format, width: 800, height: 800 }));
  const name = `head${detailFrom?.vw ? '-value-weighted' : ''}.${format}`;
  return dataUrl ? { dataUrl, name } : 'plotly could not draw the head';
}

function layoutPage(): void {
  const csv = h('button', { class: 'small' }, 'CSV');
  csv.addEventListener('click', () => exportHead('csv'));
  const json = h('button', { class: 'small' }, 'JSON');
  json.addEventListener('click', () => exportHead('json'));
  const png = imageButton('png', headImage);
  scaleBox.addEventListener('change', () => render());
  app().append(
    form.el,
    h(
      'div',
      { class: 'toolbar' },
      status,
      h('span', { class: 'spacer' }),
      imageButton('html'),
      h(
        'label',
        {
          title:
            'Colour every map on one scale (0 to 1; value-weighted: 0 to the largest in the view) instead of 0 to its own maximum',
        },
        scaleBox,
        scaleText,
      ),
      toggle.el,
    ),
    h('div', { class: 'toolbar' }, toggle.caption),
    h('div', { class: 'toolbar' }, readout),
    h(
      'div',
      { class: 'attention-layout' },
      grids,
      h(
        'div',
        { class: 'detail-card' },
        h(
          'section',
          { class: 'card' },
          h('header', {}, detailTitle, h('span', { class: 'actions' }, switchButton, png, csv, json)),
          detail,
        ),
        zoom.el,
        ablation.el,
      ),
    ),
  );
  purgeOnUnload(detail);
  watchGrid(grids, openHead, (text) => (readout.textContent = text));
}

/** Empties the large head card (its map belonged to an input no longer shown) and says why. */
function clearDetail(why: string): void {
  if (detailShown !== null) void plotly(() => Plotly.purge(detail));
  detailShown = null;
  detailFrom = null;
  detail.dataset.shown = '';
  detailTitle.textContent = why;
  switchButton.setAttribute('disabled', '');
  zoom.hide();
}

/** Shows the attention: the grids (built anew only when their shape changed), the large head, the switches. */
function render(): void {
  const gen = ++generation;
  // An attention of another run than the header names is never drawn under that name.
  if (payload && header && payload.source.runDir !== header.runDir) payload = null;
  readout.textContent = ''; // a readout of the previous input would be stale
  document.body.dataset.thumbsDrawn = '0';
  delete document.body.dataset.renderDone;
  form.update(header);
  const src = payload?.source;
  renderHeader(headerEl, header, src ? { step: src.step, input: describeShownInput(payload!) } : {});
  if (!payload) {
    clearGrid(grids);
    const gone = lastShown;
    const cleared = gone
      ? `Cleared the attention of ${gone.run}, ${gone.input}: it is not what the header names. `
      : '';
    status.textContent = cleared + emptyStatus(header);
    status.dataset.cleared = gone ? `${gone.run} ${gone.input}` : '';
    clearDetail(gone ? `Cleared: the head shown was of ${gone.run}, ${gone.input}` : 'Click a head to open it');
    return;
  }
  lastShown = shownOf(payload);
  status.dataset.cleared = '';
  const absolute = scaleBox.checked;
  view = toggle.shown(payload, absolute);
  const p = view.a;
  document.body.dataset.valueWeighted = String(view.vw);
  scaleText.textContent = view.vw ? ' one scale for the view' : ' absolute scale (0–1)';
  const text = `source ${counted(p.srcTokens.length, 'token')} · target ${counted(p.tgtTokens.length, 'token')}`;
  if (status.textContent !== text) status.textContent = text;
  const headView = view.vw && view.top > 0 ? { a: scaledBy(p, view.top), note: headViewNote(view.top) } : undefined;
  const grid = { header, roles, selected, absolute, vmax: view.top, weights: payload, headView };
  showGrid(grids, p, grid, () => {
    if (gen === generation) document.body.dataset.renderDone = String(gen);
  });
  if (selected && headMap(p, selected)) {
    if (detailUnchanged(p, selected, absolute)) detail.dataset.shown = detailShown = detailKey(p, selected);
    else showDetail(selected);
  } else if (detailShown !== null) clearDetail('Click a head to open it: the head shown before is not in this input');
  markAblated();
}

/** The head view's caption with the norms: its lines' opacity. */
const headViewNote = (top: number) => `${VALUE_WEIGHTED_CAPTION} over the view's largest, ${top.toPrecision(3)}`;

/** Whether the large head already shows `ref` of `p`: the same head, run, input, measure and scale, and its map's values. */
function detailUnchanged(p: Attention, ref: HeadRef, absolute: boolean): boolean {
  const was = detailFrom;
  if (!was || detailShown === null || !sameHead(was.ref, ref) || was.absolute !== absolute) return false;
  if (was.vw !== !!view?.vw) return false;
  if (JSON.stringify(shownOf(was.p)) !== JSON.stringify(shownOf(p))) return false;
  const a = headMap(was.p, ref);
  const b = headMap(p, ref);
  return !!a && !!b && a.queries === b.queries && a.keys === b.keys && sameValues(a.weights, b.weights);
}

/** Opens a head large: a plotly heatmap with token axes (max-pooled past DETAIL_MAX a side). */
function showDetail(ref: HeadRef): void {
  if (!payload || !view) return;
  const { a: shownA, vw, top } = view;
  const m = headMap(shownA, ref);
  if (!m) return;
  detailShown = detailKey(payload, ref);
  detailFrom = { p: shownA, ref, absolute: scaleBox.checked, vw };
  detail.dataset.shown = detailShown;
  const rows = Math.min(m.queries, DETAIL_MAX);
  const cols = Math.min(m.keys, DETAIL_MAX);
  const pooled = rows === m.queries && cols === m.keys ? m.weights : poolMax(m.weights, m.queries, m.keys, rows, cols);
  const z: number[][] = [];
  for (let r = 0; r < rows; r++) z.push(Array.from(pooled.subarray(r * cols, (r + 1) * cols)));
  const axisLabels = (tokens: string[], n: number, total: number) =>
    Array.from({ length: n }, (_, i) =>
      label(
        tokens,
        Math.floor((i * total) / n),
        Math.max(Math.floor((i * total) / n) + 1, Math.floor(((i + 1) * total) / n)),
      ),
    );
  const t = readTheme();
  const pooledNote = m.pool ? ` (${poolCaption(m.pool)})` : rows < m.queries || cols < m.keys ? ' (max-pooled)' : '';
  if (m.pool)
    zoom.open(ref, tokensOf(payload, ref.kind).queryTokens.length, tokensOf(payload, ref.kind).keyTokens.length);
  else zoom.hide();
  const measure = vw ? ` · ${VALUE_WEIGHTED_CAPTION}` : '';
  detailTitle.textContent = `${headId(ref)} · ${KIND_TITLES[ref.kind]}${pooledNote}${measure}`;
  const data: Plotly.Data[] = [
    {
      type: 'heatmap',
      z,
      x: axisLabels(m.keyTokens, cols, m.keys),
      y: axisLabels(m.queryTokens, rows, m.queries),
      colorscale: plotlyColorscale(),
      zmin: 0,
      zmax: scaleBox.checked ? top : maxOf(m.weights),
      hovertemplate: `query %{y}<br>key %{x}<br>${vw ? '‖α·vW^O‖' : 'weight'} %{z:.4f}<extra></extra>`,
      colorbar: { tickfont: { color: t.fg }, outlinecolor: t.grid },
    },
  ];
  const layout = themedLayout(t, `detail-${ref.kind}-${ref.layer}-${ref.head}`, {
    xaxis: { type: 'category', title: { text: 'key' }, tickangle: -60, side: 'bottom' },
    yaxis: { type: 'category', title: { text: 'query' }, autorange: 'reversed' },
    margin: { l: 80, r: 16, t: 16, b: 80 },
  });
  void plotly(() => Plotly.react(detail, data, layout, PLOTLY_CONFIG));
}

function openHead(ref: HeadRef): void {
  selected = ref;
  remember();
  for (const c of grids.querySelectorAll<HTMLCanvasElement>('canvas.thumb')) {
    c.classList.toggle(
      'selected',
      c.dataset.kind === ref.kind && Number(c.dataset.layer) === ref.layer && Number(c.dataset.head) === ref.head,
    );
  }
  showDetail(ref);
  markAblated();
  ask({ type: 'openHead', ...ref });
}

const roleMap = (list: HeadRoles[]) => new Map(list.map((r) => [r.head, r.roles]));

function handle(m: AttentionToPage): void {
  switch (m.type) {
    case 'attentionBlock':
      if (payload) zoom.show(m, tokensOf(payload, m.kind).queryTokens, tokensOf(payload, m.kind).keyTokens);
      return;
    case 'valueWeighted':
      payload = toggle.answer(m, payload);
      break;
    case 'attention':
      payload = { source: m.source, srcTokens: m.srcTokens, tgtTokens: m.tgtTokens, maps: m.maps };
      roles = roleMap(m.roles ?? []);
      break;
    case 'state':
      payload = m.state.attention;
      header = m.state.header;
      selected = m.state.selected ?? selected;
      roles = roleMap(m.state.roles);
      ablation.show(m.state.ablation ?? null);
      if (m.state.valueWeighted !== undefined) toggle.on = m.state.valueWeighted;
      break;
    default:
      throw new Error(`the attention view does not show ${(m as { type: string }).type} messages`);
  }
  render();
}

/** What is on screen: the header, every thumbnail's map, and the drawn colour of cells asked for. */
function report(cells: CellRef[]): DrawnReport {
  const colors = cells.map((c) => {
    const canvas = grids.querySelector<HTMLCanvasElement>(
      `canvas.thumb[data-kind="${c.kind}"][data-layer="${c.layer}"][data-head="${c.head}"]`,
    );
    const map = payload && headMap(payload, c);
    if (!canvas || !map || canvas.dataset.drawn !== '1' || c.q >= map.queries || c.k >= map.keys) return null;
    return pixelAt(canvas, ((c.k + 0.5) * canvas.width) / map.keys, ((c.q + 0.5) * canvas.height) / map.queries);
  });
  const maps = payload?.maps.map((m) => ({ kind: m.kind, shape: [...m.shape] })) ?? [];
  const marks = payload ? [...roles].flatMap(([head, rs]) => rs.map((r) => `${head} ${r}`)) : [];
  const off = [...grids.querySelectorAll<HTMLCanvasElement>('canvas.thumb.ablated')].map(
    (c) => `off ${c.dataset.kind}:${c.dataset.layer}.${c.dataset.head}`,
  );
  const deltas = [...document.querySelectorAll<HTMLElement>('#ablation-table tr[data-delta]')].map(
    (r) => `delta ${r.dataset.delta}`,
  );
  marks.push(...off, ...deltas);
  if (detailShown !== null) marks.push(`detail ${detailShown}`, `title ${detailTitle.textContent}`);
  if (toggle.on) marks.push(`measure ${toggle.caption.textContent}`); // what the toggle draws
  return { ...shownHeader(headerEl), maps, head: selected, frames: payload ? 1 : 0, colors, marks };
}

layoutPage();
watchTheme(() => selected && showDetail(selected));
start(attentionPage, handle, headImage, report);
