/**
 * The Heads panel: one telemetry statistic (docs/TELEMETRY.md) of every head over training, as a
 * heads × steps heatmap. Rows can be sorted and filtered; hovering a step highlights it here and on
 * the dashboard's curves (and the other way round); clicking a cell opens that head at that step
 * in the inspector. Findings of the health checks are marked on their head's row. Under the map,
 * the heads' roles over training as swimlanes under the loss, with its drops explained (roles.ts).
 */
import { ATTENTION_KINDS, parseHeadId } from '../../src/protocol/attention';
import type { MetricRow } from '../../src/protocol/metrics';
import type { RunEvent, TelemetryRow } from '../../src/protocol/telemetry';
import { type HeadsToPage, headsPage } from '../../src/protocol/pages/heads';
import type { CellRef } from '../../src/protocol/drawnReport';
import type { ViewHeader } from '../../src/protocol/webview';
import {
  type DrawnReport,
  app,
  h,
  imageButton,
  pixelAt,
  renderHeader,
  shownHeader,
  start,
  watchTheme,
  poster,
} from '../common';
import { markFindings, paintHeadsMap } from '../heatmap';
import { headColumns, type HeadsView, sortHeads } from '../lib/heads';
import { drawRoles, drawnLanes, rolesCard, shownDrops, wireRoles } from './roles';
import { counted } from '../lib/counted';

/** Posts what this page asks of its panel (its protocol's page → panel messages only). */
const ask = poster(headsPage);

const CELL_H = 14;
const LABEL_W = 130;

let header: ViewHeader | null = null;
let rows: TelemetryRow[] = [];
/** The logged steps: the loss the roles are drawn under. */
let metrics: MetricRow[] = [];
let events: RunEvent[] = [];
let cursor: number | null = null;
let hover: number | null = null;
let view: HeadsView | null = null;

const headerEl = document.getElementById('view-header') ?? h('div');
const statSel = h('select', { id: 'stat', 'aria-label': 'statistic' });
const sortSel = h(
  'select',
  { id: 'sort', 'aria-label': 'sort' },
  h('option', { value: 'name' }, 'by name'),
  h('option', { value: 'latest' }, 'by latest value'),
  h('option', { value: 'mean' }, 'by mean'),
);
const kindSel = h(
  'select',
  { id: 'kind', 'aria-label': 'kind' },
  h('option', { value: '' }, 'all kinds'),
  ...ATTENTION_KINDS.map((k) => h('option', { value: k }, k.replace('_', ' '))),
);
const filter = h('input', {
  type: 'text',
  id: 'filter',
  placeholder: 'filter heads, e.g. cross:1',
  'aria-label': 'filter',
});
const status = h('span', { class: 'muted', id: 'status' });
const readout = h('div', { class: 'readout', id: 'readout' });
const labels = h('div', { class: 'heads-labels', style: `width:${LABEL_W}px` });
const canvas = h('canvas', { id: 'heads-map', style: 'cursor:pointer' });
const steps = h('div', { class: 'muted', id: 'heads-steps' });

function layoutPage(): void {
  for (const el of [statSel, sortSel, kindSel]) el.addEventListener('change', draw);
  filter.addEventListener('input', draw);
  canvas.addEventListener('mousemove', (e) => {
    const c = cellOf(e);
    if (!c || !view) return;
    const value = view.values[c.row]![c.col];
    readout.textContent = `${view.heads[c.row]} · step ${view.steps[c.col]} · ${statSel.value} ${value === null ? '—' : value.toFixed(4)}`;
    if (hover !== view.steps[c.col]) {
      hover = view.steps[c.col]!;
      ask({ type: 'hoverStep', step: hover });
      draw();
    }
  });
  canvas.addEventListener('mouseleave', () => {
    hover = null;
    ask({ type: 'hoverStep', step: null });
    draw();
  });
  canvas.addEventListener('click', (e) => {
    const c = cellOf(e);
    const ref = c && view ? parseHeadId(view.heads[c.row]!) : undefined;
    if (c && ref) ask({ type: 'openHeadAt', ...ref, step: view!.steps[c.col]! });
  });
  app().append(
    h('div', { class: 'toolbar' }, status, h('span', { class: 'spacer' }), imageButton('html')),
    h('div', { class: 'form' }, h('label', {}, 'statistic ', statSel), sortSel, kindSel, filter),
    readout,
    h('div', { class: 'heads-grid', style: 'display:flex;align-items:flex-start' }, labels, canvas),
    steps,
    rolesCard,
  );
  wireRoles(toStep);
}

const toStep = (step: number): void => ask({ type: 'cursor', step });
const openAt = (id: string, step: number): void => {
  const ref = parseHeadId(id);
  if (ref) ask({ type: 'openHeadAt', ...ref, step });
};

/** The cell under a mouse event. */
function cellOf(e: MouseEvent): { row: number; col: number } | undefined {
  if (!view) return undefined;
  const r = canvas.getBoundingClientRect();
  const col = Math.floor(((e.clientX - r.left) / r.width) * view.steps.length);
  const row = Math.floor(((e.clientY - r.top) / r.height) * view.heads.length);
  return row >= 0 && row < view.heads.length && col >= 0 && col < view.steps.length ? { row, col } : undefined;
}

function fillStats(): void {
  const names = [...new Set(rows.flatMap((r) => Object.keys(r.stats)))];
  const keep = statSel.value || 'entropy_norm';
  statSel.replaceChildren(...names.map((n) => h('option', { value: n }, n)));
  if (names.includes(keep)) statSel.value = keep;
}

function draw(): void {
  renderHeader(headerEl, header, { step: cursor ?? header?.step ?? null, note: 'heads × steps' });
  if (!rows.length) {
    status.textContent = header
      ? `No telemetry of ${header.run} yet: rows arrive every telemetry_every steps while it trains.`
      : 'No run selected: train one or open a run folder.';
    canvas.width = 0;
    labels.replaceChildren();
    view = null;
    rolesCard.hidden = true;
    return;
  }
  const stat = statSel.value || 'entropy_norm';
  view = sortHeads(headColumns(rows, stat), sortSel.value as 'name' | 'latest' | 'mean', kindSel.value, filter.value);
  const cols = view.steps.length;
  const cellW = Math.max(2, Math.min(24, Math.floor((app().clientWidth - LABEL_W - 40) / Math.max(1, cols))));
  paintHeadsMap(canvas, view, cellW, CELL_H);
  const ctx = canvas.getContext('2d')!;
  const mark = (step: number | null, color: string): void => {
    const c = step === null ? -1 : view!.steps.indexOf(step);
    if (c < 0) return;
    ctx.strokeStyle = color;
    ctx.lineWidth = 2;
    ctx.strokeRect(c * cellW + 1, 1, cellW - 2, canvas.height - 2);
  };
  mark(cursor, '#ffffff');
  mark(hover, '#ff9f1c');
  markFindings(canvas, view, events, cellW, CELL_H);
  labels.replaceChildren(
    ...view.heads.map((id) => h('div', { style: `height:${CELL_H}px;line-height:${CELL_H}px;font-size:11px` }, id)),
  );
  steps.textContent = `steps ${view.steps[0]} … ${view.steps[cols - 1]} (${counted(cols, 'telemetry row')}) · ${stat} from ${view.min.toFixed(3)} (dark) to ${view.max.toFixed(3)} (bright)`;
  status.textContent = `${counted(view.heads.length, 'head')} · click a cell to open that head at that step`;
  document.body.dataset.drawnCols = String(cols);
  rolesCard.hidden = false;
  const roles = { telemetry: rows, metrics, heads: view.heads, run: header?.run ?? '', cursor, hover };
  drawRoles(roles, toStep, openAt);
}

function handle(m: HeadsToPage): void {
  switch (m.type) {
    case 'telemetry':
      for (const r of m.rows) {
        while (rows.length && rows[rows.length - 1]!.step >= r.step) rows.pop();
        rows.push(r);
      }
      fillStats();
      break;
    case 'metrics':
      if (m.reset) metrics = [];
      for (const r of m.rows) {
        while (metrics.length && metrics[metrics.length - 1]!.step >= r.step) metrics.pop();
        metrics.push(r);
      }
      break;
    case 'events':
      events = [...events, ...m.events];
      break;
    case 'cursor':
      cursor = m.step;
      break;
    case 'hoverStep':
      hover = m.step;
      break;
    case 'state':
      header = m.state.header;
      rows = [...m.state.telemetry];
      metrics = [...(m.state.metrics ?? [])];
      events = [...m.state.events];
      cursor = m.state.cursor;
      fillStats();
      break;
    default:
      throw new Error(`the Heads panel does not show ${(m as { type: string }).type} messages`);
  }
  draw();
}

/** What is on screen: the heads × steps map, and the colour of cells (kind/layer/head, k = column). */
function report(cells: CellRef[]): DrawnReport {
  const colors = cells.map((c) => {
    const id = `${c.kind}:${c.layer}.${c.head}`;
    const r = view ? view.heads.indexOf(id) : -1;
    if (!view || r < 0 || c.k >= view.steps.length) return null;
    return pixelAt(canvas, ((c.k + 0.5) * canvas.width) / view.steps.length, (r + 0.5) * CELL_H);
  });
  const maps = view ? [{ kind: statSel.value, shape: [view.heads.length, view.steps.length] }] : [];
  const marks = [
    ...events.map((e) => `${e.check}@${e.step}`),
    ...(hover === null ? [] : [`hover@${hover}`]),
    ...shownDrops.map(({ drop }) => `drop@${drop.from}-${drop.to}`),
    ...(drawnLanes ? [`lanes@${drawnLanes}`] : []),
  ];
  return { ...shownHeader(headerEl), maps, head: null, frames: view?.steps.length ?? 0, colors, marks };
}

layoutPage();
watchTheme(draw);
start(headsPage, handle, undefined, report);
