/**
 * Ablation Results as a panel: every ablation tried on the run the panel shows (its header says
 * the run, the step of the newest ablation and the metric), as a table sortable by any column
 * (lib/sortTable.ts) and a bar of Δ = ablated − intact per ablation (plotly), with exports (CSV,
 * JSON and Markdown of the table; PNG and SVG of the chart; the view as HTML). A run without
 * ablations says so, with a button that runs Ablate Heads… on it.
 */
import type { AblationRecord } from '../../src/protocol/ablation';
import { HEAD_METRIC } from '../../src/protocol/heads';
import { ablationsPage, type AblationsFromPage, type AblationsToPage } from '../../src/protocol/pages/ablations';
import { PLOTLY_CONFIG, app, h, imageButton, plotly, poster, purgeOnUnload, readTheme, themedLayout } from '../common';
import {
  drawRunHeader,
  exportButton,
  drawnSummary,
  rowTexts,
  runName,
  showNothing,
  startReportPage,
  statusTexts,
} from '../lib/reportPage';
import { sortRows, type SortOrder } from '../lib/sortRows';
import { type Column, drawSortable } from '../lib/sortTable';
import { counted } from '../lib/counted';
import {
  type AblationKey,
  type AblationRow,
  ablationRows,
  ablationsCsv,
  ablationsJson,
  ablationsMarkdown,
  signed,
} from './table';

const ask = poster<AblationsFromPage>(ablationsPage);
let records: AblationRecord[] = [];
let runDir: string | null = null;
let order: SortOrder<AblationKey> = { key: 'n', descending: false };

const headerEl = document.getElementById('view-header') ?? h('div');
const status = h('div', { id: 'status' });
const table = h('table', { id: 'ablations-table' });
const bars = h('div', { class: 'chart', id: 'chart-delta' });
const shown = h('div', { id: 'ablations' });

/** A row's name on the chart's axis: `#2 cross:0.1 (zero)`. */
const label = (x: AblationRow) => `#${x.n} ${x.heads} (${x.mode})`;

const COLUMNS: Column<AblationRow, AblationKey>[] = [
  { key: 'n', label: '#', cell: (x) => String(x.n) },
  { key: 'heads', label: 'heads', cell: (x) => x.heads },
  { key: 'mode', label: 'mode', cell: (x) => x.mode },
  { key: 'step', label: 'step', cell: (x) => String(x.step) },
  { key: 'metric', label: 'metric', cell: (x) => HEAD_METRIC[x.metric] },
  { key: 'intact', label: 'intact', cell: (x) => x.intact.toFixed(1) },
  { key: 'ablated', label: 'ablated', cell: (x) => x.ablated.toFixed(1) },
  {
    key: 'delta',
    label: 'Δ',
    cell: (x) => signed(x.delta),
    cls: (x) => (x.delta < 0 ? 'worse' : x.delta > 0 ? 'better' : ''),
  },
  { key: 'sentences', label: 'test sentences', cell: (x) => String(x.sentences) },
];

function drawHeader(): void {
  const newest = records.at(-1);
  const metrics = [...new Set(records.map((r) => HEAD_METRIC[r.metric]))].join(', ');
  const parts = newest
    ? [`${counted(records.length, 'ablation')}, the newest at step ${newest.step}`, `${metrics}, decoded greedily`]
    : ['no ablations'];
  drawRunHeader(headerEl, runDir, parts, newest ? newest.step : null);
}

function drawTable(rows: AblationRow[]): void {
  const onSort = (o: SortOrder<AblationKey>) => {
    order = o;
    drawTable(rows);
    void drawDeltas(rows); // the bars in the table's order
  };
  drawSortable(table, COLUMNS, rows, order, onSort, (x) => ({ attrs: { 'data-n': String(x.n) } }));
}

/** Δ per ablation as bars, in the table's order: below zero what removing the heads cost. */
function drawDeltas(rows: AblationRow[]): Promise<unknown> {
  const t = readTheme();
  const sorted = sortRows(rows, order);
  const metrics = [...new Set(rows.map((x) => HEAD_METRIC[x.metric]))].join(' / ');
  return plotly(() =>
    Plotly.react(
      bars,
      [
        {
          type: 'bar',
          x: sorted.map(label),
          y: sorted.map((x) => x.delta),
          marker: { color: sorted.map((x) => (x.delta < 0 ? t.accent2 : t.accent)) },
          hovertemplate: '%{x}<br>Δ %{y:.2f}<extra></extra>',
        },
      ],
      themedLayout(t, 'ablations', {
        xaxis: { title: { text: 'ablation (heads, mode)' }, type: 'category' },
        yaxis: { title: { text: `Δ ${metrics} (ablated − intact)` } },
      }),
      PLOTLY_CONFIG,
    ),
  );
}

function draw(): void {
  drawHeader();
  if (!records.length) {
    const none = runDir ? `No ablations of ${runName(runDir)} yet` : 'No run selected';
    const run = h('button', { id: 'ablate' }, 'Ablate Heads…');
    run.addEventListener('click', () => ask({ type: 'ablate' }));
    showNothing(status, shown, none, runDir ? [run] : []);
    return;
  }
  const worst = records.reduce((a, b) => (b.ablated - b.intact < a.ablated - a.intact ? b : a));
  const said = `The costliest: ${worst.ablation.heads.join(', ')} ${worst.ablation.mode}-ablated, ${signed(worst.ablated - worst.intact)} ${HEAD_METRIC[worst.metric]}.`;
  status.replaceChildren(h('p', { class: 'muted', id: 'summary' }, said));
  shown.hidden = false;
  const rows = ablationRows(records);
  drawTable(rows);
  void drawDeltas(rows);
}

async function chartImage(format: 'png' | 'svg'): Promise<{ dataUrl: string; name: string } | string> {
  if (!records.length || !runDir) return 'no ablations are shown';
  const size = { width: Math.max(640, bars.clientWidth), height: Math.max(360, bars.clientHeight) };
  const dataUrl = await plotly(() => Plotly.toImage(bars, { format, ...size }));
  return dataUrl ? { dataUrl, name: `${runName(runDir)}-ablations.${format}` } : 'plotly could not draw the chart';
}

function layoutPage(): void {
  const text = (format: 'csv' | 'json' | 'md') =>
    exportButton(format, format === 'md' ? 'Markdown' : format.toUpperCase(), () => {
      if (!records.length || !runDir) return null;
      const rows = sortRows(ablationRows(records), order);
      const make = { csv: ablationsCsv, json: ablationsJson, md: ablationsMarkdown }[format];
      return { name: `${runName(runDir)}-ablations.${format}`, text: make(rows, runDir) };
    });
  const more = h('button', { class: 'small', id: 'ablate-more' }, 'Ablate Heads…');
  more.addEventListener('click', () => ask({ type: 'ablate' }));
  shown.append(
    h(
      'div',
      { class: 'toolbar' },
      h('span', { class: 'muted' }, 'Table:'),
      text('csv'),
      text('json'),
      text('md'),
      more,
    ),
    h('section', { class: 'card' }, table),
    h(
      'section',
      { class: 'card' },
      h(
        'h2',
        {},
        'Δ = ablated − intact, per ablation',
        ' ',
        imageButton('png', chartImage),
        ' ',
        imageButton('svg', chartImage),
      ),
      bars,
    ),
  );
  app().append(status, shown);
  purgeOnUnload(bars);
}

layoutPage();
const take = (state: AblationsToPage['state']): void => {
  records = state.rows;
  runDir = state.runDir;
};
// What it says: how many rows the table has, each row's cells, and its sentence.
startReportPage(ablationsPage, 'ablations', take, draw, chartImage, () =>
  drawnSummary(headerEl, records.at(-1)?.step ?? null, [
    ...(records.length ? [`rows ${table.querySelectorAll('tbody tr').length}`] : []),
    ...rowTexts(table),
    ...statusTexts(status),
  ]),
);
