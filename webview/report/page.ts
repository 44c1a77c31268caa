/**
 * The run report's page (issue 33): what src/engine/report/html.ts inlines into one HTML file with
 * plotly and the report's data (protocol/report.ts, a JSON script element). No VS Code, no messages:
 * it reads the data once and draws the header, the training curves, the attention grid with its
 * step slider and the head view of the step it shows, the Heads map and findings, and the head
 * report when the run has one, and the beam tree the Beam Tree panel showed (webview/report/beam.ts),
 * with the panels' own drawing helpers (heatmap.ts, lib/, common.ts's plotly queue and theme).
 */
import { REPORT_DATA_ID, type RunReportData } from '../../src/protocol/report';
import { app, h, readTheme, showError } from '../common';
import { beamSection } from './beam';
import { curvesSection, headReportSection } from './charts';
import { attentionSection } from './grid';
import { headsSection } from './headsMap';
import { headViewSection } from './headView';

function header(d: RunReportData): HTMLElement {
  const r = d.header;
  const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : '—');
  const facts = [
    `${r.data}`,
    `step ${r.step} of ${r.totalSteps}`,
    r.state ? `status ${r.state}` : 'no status',
    `backend ${r.backend ?? '— (the run folder does not record it)'}`,
    `started ${when(r.started)}`,
    `last written ${when(r.lastWrite)}`,
  ];
  const config = h(
    'div',
    { class: 'config', id: 'config' },
    ...Object.entries(r.config).map(([k, v]) => h('div', {}, h('span', { class: 'muted' }, `${k} `), String(v))),
  );
  return h(
    'header',
    { class: 'card', id: 'report-header' },
    h('h1', { id: 'run-name' }, r.run),
    h('div', { id: 'run-facts' }, facts.join(' · ')),
    h('div', { class: 'muted' }, `${r.runDir} · report written ${when(r.written)} by Attention Debugger`),
    h('details', {}, h('summary', {}, 'Configuration'), config),
    d.notes.length ? h('ul', { class: 'notes muted', id: 'notes' }, ...d.notes.map((n) => h('li', {}, n))) : '',
  );
}

function main(): void {
  const el = document.getElementById(REPORT_DATA_ID);
  if (!el?.textContent) throw new Error('the report holds no data');
  const d = JSON.parse(el.textContent) as RunReportData;
  const t = readTheme();
  const headView = headViewSection();
  app().append(
    header(d),
    curvesSection(d, t),
    attentionSection(d, headView.show),
    headView.el,
    headsSection(d),
    d.heads
      ? headReportSection(d.heads, t)
      : h(
          'p',
          { class: 'muted', id: 'heads-report' },
          'No head report: run Head Importance and Pruning, then export again.',
        ),
    beamSection(d.beam ?? null),
  );
  document.body.dataset.ready = 'true';
}

try {
  main();
} catch (err) {
  showError(`The report could not be drawn: ${(err as Error).message}`);
}
