/**
 * Head Importance and Pruning as a panel: the newest heads report of the run the panel shows
 * (its header says run, step, metric), a table of the heads sortable by any column (a click on a
 * column's header sorts by it, another reverses it; a click on a row opens that head in the head
 * inspector at the report's step), the importance bars and pruning curves (lib/headReport.ts,
 * drawn as in the run report) and exports. A run without a report says so, with a button that
 * runs Head Importance and Pruning on it.
 */
import { parseHeadId } from '../../src/protocol/attention';
import type { HeadReport } from '../../src/protocol/heads';
import { importancePage, type ImportanceFromPage, type ImportanceToPage } from '../../src/protocol/pages/importance';
import { app, h, imageButton, plotly, poster, purgeOnUnload, readTheme } from '../common';
import { HEAD_METRIC, drawImportanceBars, drawPruningCurves, prunableSentence } from '../lib/headReport';
import {
  drawRunHeader,
  exportButton,
  drawnSummary,
  runName,
  showNothing,
  startReportPage,
  statusTexts,
} from '../lib/reportPage';
import { type Column, drawSortable } from '../lib/sortTable';
import {
  type ImportanceRow,
  type SortKey,
  type SortOrder,
  importanceCsv,
  importanceJson,
  importanceRows,
  sortRows,
} from './table';

const ask = poster<ImportanceFromPage>(importancePage);
let report: HeadReport | null = null;
let runDir: string | null = null;
let order: SortOrder = { key: 'rank', descending: false };

const headerEl = document.getElementById('view-header') ?? h('div');
const status = h('div', { id: 'status' });
const table = h('table', { id: 'importance-table' });
const bars = h('div', { class: 'chart', id: 'chart-importance' });
const curves = h('div', { class: 'chart', id: 'chart-pruning' });
const shown = h('div', { id: 'report' });

function drawHeader(): void {
  const parts = report
    ? [`heads report of step ${report.step}`, `${HEAD_METRIC[report.metric]} on ${report.sentences} test sentences`]
    : ['no heads report'];
  drawRunHeader(headerEl, runDir, parts, report ? report.step : null);
}

function drawTable(r: HeadReport): void {
  const metric = HEAD_METRIC[r.metric];
  const columns: Column<ImportanceRow, SortKey>[] = [
    { key: 'head', label: 'head', cell: (x) => x.head },
    { key: 'importance', label: 'I_h', cell: (x) => x.importance.toExponential(3) },
    { key: 'rank', label: 'rank', cell: (x) => String(x.rank) },
    {
      key: 'whenRemoved',
      label: `${metric} with it and every less important head removed`, // the by-importance pruning curve
      cell: (x) => (x.whenRemoved === null ? '—' : x.whenRemoved.toFixed(2)),
    },
  ];
  const onSort = (o: SortOrder) => {
    order = o;
    drawTable(r);
  };
  drawSortable(table, columns, importanceRows(r), order, onSort, (x) => ({
    attrs: { 'data-head': x.head, title: `Open ${x.head} at step ${r.step} in the head inspector` },
    click: () => {
      const ref = parseHeadId(x.head);
      if (ref) ask({ type: 'openHeadAt', ...ref, step: r.step });
    },
  }));
}

function draw(): void {
  drawHeader();
  if (!report) {
    const none = runDir ? `No head importance for ${runName(runDir)} yet` : 'No run selected';
    const run = h('button', { id: 'compute' }, 'Run Head Importance and Pruning');
    run.addEventListener('click', () => ask({ type: 'computeImportance' }));
    showNothing(status, shown, none, runDir ? [run] : []);
    return;
  }
  status.replaceChildren(h('p', { class: 'muted', id: 'prunable' }, prunableSentence(report)));
  shown.hidden = false;
  drawTable(report);
  const t = readTheme();
  void drawImportanceBars(bars, report, t);
  void drawPruningCurves(curves, report, t);
}

/** An image of one figure (Export View asks for the pruning curve). */
async function figureImage(
  el: HTMLElement,
  name: string,
  format: 'png' | 'svg',
): Promise<{ dataUrl: string; name: string } | string> {
  if (!report) return 'no heads report is shown';
  const size = { width: Math.max(640, el.clientWidth), height: Math.max(360, el.clientHeight) };
  const dataUrl = await plotly(() => Plotly.toImage(el, { format, ...size }));
  return dataUrl ? { dataUrl, name: `${name}-step-${report.step}.${format}` } : `plotly could not draw the ${name}`;
}

function card(title: string, el: HTMLElement, name: string): HTMLElement {
  const image = (format: 'png' | 'svg') => figureImage(el, name, format);
  return h(
    'section',
    { class: 'card' },
    h('h2', {}, title, ' ', imageButton('png', image), ' ', imageButton('svg', image)),
    el,
  );
}

function layoutPage(): void {
  const text = (format: 'csv' | 'json') =>
    exportButton(format, format.toUpperCase(), () => {
      if (!report) return null;
      const rows = sortRows(importanceRows(report), order);
      const body = format === 'csv' ? importanceCsv(rows, report) : importanceJson(rows, report);
      return { name: `head-importance-step-${report.step}.${format}`, text: body };
    });
  const md = h(
    'button',
    { class: 'small', id: 'open-markdown', title: 'The Markdown report saved in the run folder' },
    'Markdown',
  );
  md.addEventListener('click', () => ask({ type: 'openMarkdown' }));
  shown.append(
    h('div', { class: 'toolbar' }, h('span', { class: 'muted' }, 'Table:'), text('csv'), text('json'), md),
    h('section', { class: 'card' }, table),
    h(
      'div',
      { class: 'chart-grid' },
      card('Head importance I_h = E|∂L/∂ξ_h| (Michel et al.)', bars, 'importance'),
      card('Pruning curve (by importance and at random)', curves, 'pruning'),
    ),
  );
  app().append(status, shown);
  purgeOnUnload(bars, curves);
}

layoutPage();
const take = (state: ImportanceToPage['state']): void => {
  report = state.report;
  runDir = state.runDir;
};
startReportPage(
  importancePage,
  'importance',
  take,
  draw,
  (format) => figureImage(curves, 'pruning', format),
  // What it says: how many rows the table has, and its sentence (what can go, or that there is no report).
  () =>
    drawnSummary(headerEl, report ? report.step : null, [
      ...(report ? [`rows ${table.querySelectorAll('tbody tr').length}`] : []),
      ...statusTexts(status),
    ]),
);
