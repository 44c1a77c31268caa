/**
 * Run Check as a panel: the run folder the panel shows checked against its format (the engine's
 * run/check, what `check-run` prints). Its header says the run and what was checked; a summary line
 * says how many files were read and whether the folder is valid; the findings are a table sortable
 * by any column (lib/sortTable.ts), exported as Markdown or JSON. "Check again" reads the folder anew.
 */
import type { RunCheck } from '../../src/protocol/runCheck';
import { runCheckPage, type RunCheckFromPage, type RunCheckToPage } from '../../src/protocol/pages/runCheck';
import { app, h, poster } from '../common';
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
import { counted } from '../lib/counted';
import { sortRows, type SortOrder } from '../lib/sortRows';
import { type Column, drawSortable } from '../lib/sortTable';
import { type FindingKey, type FindingRow, findingRows, findingsMarkdown, summaryLine } from './table';

const ask = poster<RunCheckFromPage>(runCheckPage);
let check: RunCheck | null = null;
let error: string | null = null;
let runDir: string | null = null;
let order: SortOrder<FindingKey> = { key: 'n', descending: false };

const headerEl = document.getElementById('view-header') ?? h('div');
const status = h('div', { id: 'status' });
const table = h('table', { id: 'findings-table' });
const shown = h('div', { id: 'findings' });

const COLUMNS: Column<FindingRow, FindingKey>[] = [
  { key: 'n', label: '#', cell: (x) => String(x.n) },
  { key: 'file', label: 'file', cell: (x) => x.file },
  { key: 'line', label: 'line', cell: (x) => (x.line === null ? '' : String(x.line)) },
  { key: 'field', label: 'field', cell: (x) => x.field ?? '' },
  { key: 'message', label: 'message', cell: (x) => x.message },
  { key: 'severity', label: 'severity', cell: (x) => x.severity, cls: (x) => `severity-${x.severity}` },
];

function drawHeader(): void {
  const parts = [
    'the whole folder, every step',
    check ? `${counted(check.files.length, 'file')} checked against its format` : error ? 'not checked' : 'checking…',
  ];
  drawRunHeader(headerEl, runDir, parts, null);
}

function drawTable(rows: FindingRow[]): void {
  const onSort = (o: SortOrder<FindingKey>) => {
    order = o;
    drawTable(rows);
  };
  drawSortable(table, COLUMNS, rows, order, onSort, (x) => ({ attrs: { 'data-file': x.file } }));
}

function draw(): void {
  drawHeader();
  const again = h('button', { class: 'small', id: 'recheck' }, 'Check again');
  again.addEventListener('click', () => ask({ type: 'recheck' }));
  if (!runDir || !check) {
    const said = !runDir ? 'No run selected' : error ? `Could not check ${runName(runDir)}: ${error}` : 'Checking…';
    showNothing(status, shown, said, runDir && error ? [again] : []);
    return;
  }
  const ok = check.ok ? 'ok' : 'not-ok';
  status.replaceChildren(h('p', { id: 'summary', class: `summary-${ok}` }, summaryLine(check, runName(runDir))), again);
  shown.hidden = check.findings.length === 0;
  drawTable(findingRows(check));
}

function layoutPage(): void {
  const text = (format: 'md' | 'json') =>
    exportButton(format, format === 'md' ? 'Markdown' : 'JSON', () => {
      if (!check || !runDir) return null;
      const rows = sortRows(findingRows(check), order);
      const body =
        format === 'md'
          ? findingsMarkdown(rows, check, runName(runDir))
          : `${JSON.stringify({ ...check, findings: rows }, null, 2)}\n`;
      return { name: `${runName(runDir)}-check.${format}`, text: body };
    });
  shown.append(
    h('div', { class: 'toolbar' }, h('span', { class: 'muted' }, 'Findings:'), text('md'), text('json')),
    h('section', { class: 'card' }, table),
  );
  app().append(status, shown);
}

layoutPage();
const take = (state: RunCheckToPage['state']): void => {
  runDir = state.runDir;
  check = state.check;
  error = state.error;
};
// What it says: its summary (or why there is none) and each finding's row.
startReportPage(runCheckPage, 'run check', take, draw, undefined, () =>
  drawnSummary(headerEl, null, [...statusTexts(status), ...(check ? rowTexts(table) : [])]),
);
