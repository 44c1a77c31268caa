/**
 * The report's Heads section: one telemetry statistic of every head over training as the Heads
 * panel draws it (lib/heads.ts's columns, viridis from the statistic's smallest to its largest
 * value, findings marked on their head's row), a statistic picker, a hover readout, and the health
 * checks' findings listed.
 */
import type { RunReportData } from '../../src/protocol/report';
import { describeFinding } from '../../src/protocol/telemetry';
import { h } from '../common';
import { markFindings, paintHeadsMap } from '../heatmap';
import { headColumns, type HeadsView } from '../lib/heads';
import { counted } from '../lib/counted';

const CELL_H = 14;

export function headsSection(d: RunReportData): HTMLElement {
  const stats = [...new Set(d.telemetry.flatMap((r) => Object.keys(r.stats)))];
  const statSel = h(
    'select',
    { id: 'stat', 'aria-label': 'statistic' },
    ...stats.map((s) => h('option', { value: s }, s)),
  );
  if (stats.includes('entropy_norm')) statSel.value = 'entropy_norm';
  const canvas = h('canvas', { id: 'heads-map', class: 'heads-map' });
  const labels = h('div', { style: 'font-family:ui-monospace,monospace' });
  const readout = h('div', { class: 'readout', id: 'heads-readout' });
  const caption = h('div', { class: 'muted', id: 'heads-steps' });
  let view: HeadsView | null = null;
  let cellW = 4;
  const draw = (): void => {
    if (!d.telemetry.length) return;
    view = headColumns(d.telemetry, statSel.value);
    const cols = view.steps.length;
    cellW = Math.max(2, Math.min(24, Math.floor(900 / Math.max(1, cols))));
    paintHeadsMap(canvas, view, cellW, CELL_H);
    markFindings(canvas, view, d.events, cellW, CELL_H);
    labels.replaceChildren(
      ...view.heads.map((id) =>
        h('div', { style: `height:${CELL_H}px;line-height:${CELL_H}px;font-size:11px;padding-right:6px` }, id),
      ),
    );
    caption.textContent = `steps ${view.steps[0]} … ${view.steps[cols - 1]} (${cols} telemetry rows) · ${statSel.value} from ${view.min.toFixed(3)} (dark) to ${view.max.toFixed(3)} (bright)`;
  };
  canvas.addEventListener('mousemove', (e) => {
    if (!view) return;
    const b = canvas.getBoundingClientRect();
    const col = Math.floor(((e.clientX - b.left) / b.width) * view.steps.length);
    const row = Math.floor(((e.clientY - b.top) / b.height) * view.heads.length);
    const v = view.values[row]?.[col];
    if (v !== undefined)
      readout.textContent = `${view.heads[row]} · step ${view.steps[col]} · ${statSel.value} ${v === null ? '—' : v.toFixed(4)}`;
  });
  statSel.addEventListener('change', draw);
  draw();
  const findings = h(
    'ol',
    { id: 'events', class: 'notes' },
    ...d.events.map((e) =>
      h('li', { style: `color:${e.severity === 'breakpoint' ? '#f14c4c' : '#cca700'}` }, describeFinding(e)),
    ),
  );
  return h(
    'section',
    { class: 'card', id: 'heads' },
    h('h2', {}, 'Heads: telemetry of every head over training'),
    d.telemetry.length
      ? h(
          'div',
          {},
          h('div', { class: 'toolbar' }, h('label', {}, 'statistic ', statSel)),
          readout,
          h('div', { style: 'display:flex;align-items:flex-start;overflow-x:auto' }, labels, canvas),
          caption,
        )
      : h('p', { class: 'muted' }, 'The run has no telemetry rows.'),
    h('h2', { style: 'margin-top:10px' }, `Health checks: ${counted(d.events.length, 'finding')}`),
    d.events.length ? findings : h('p', { class: 'muted', id: 'events' }, 'No findings.'),
  );
}
