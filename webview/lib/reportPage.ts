/**
 * What the three report panels' pages (Ablation Results, Head Importance and Pruning, Run Check)
 * share: the header that says the run and what is shown of it, the status line when there is
 * nothing to show (with the button that makes it), the toolbar's buttons that save a table as
 * text, what the page says it drew (its run and step from the header, its rows and sentences), and
 * its start (a state drawn as it comes, and again on a theme change).
 */
import type { DrawnReport } from '../../src/protocol/drawnReport';
import type { PageProtocol, PanelKind, PanelState, SaveFormat, StateMsg } from '../../src/protocol/webview';
import {
  h,
  type ImageExporter,
  NOTHING_DRAWN,
  type Part,
  post,
  runName,
  separated,
  start,
  watchTheme,
} from '../common';

/** A run folder's name (common.ts), for the three pages beside the rest of what they share. */
export { runName } from '../common';

/**
 * The page's header: the run's name then `parts` (what is shown of it), " · " ending each part
 * that another follows as renderHeader's do, or "No run selected" without a run. Its title is
 * the run's folder; `data-run` and `data-step` say the run and `step`.
 */
export function drawRunHeader(el: HTMLElement, runDir: string | null, parts: string[], step: number | null): void {
  const all: Part[] = runDir
    ? [['run-name', runName(runDir)], ...parts.map((p): Part => ['', p])]
    : [['', 'No run selected']];
  el.replaceChildren(...separated(all).map(([cls, text]) => h('span', cls ? { class: cls } : {}, text)));
  el.title = runDir ?? '';
  el.dataset.run = runDir ? runName(runDir) : '';
  el.dataset.step = step === null ? '' : String(step);
}

/** Nothing to show: `status` says `text` (muted, id `none`) beside `buttons`, and `shown` is hidden. */
export function showNothing(status: HTMLElement, shown: HTMLElement, text: string, buttons: HTMLElement[]): void {
  status.replaceChildren(h('p', { class: 'muted', id: 'none' }, text), ...buttons);
  shown.hidden = true;
}

/**
 * A toolbar button (id `export-FORMAT`, labelled `label`) that saves the text `make` gives under
 * its name; `make` answers null when nothing is shown, and nothing is saved.
 */
export function exportButton(
  format: Extract<SaveFormat, 'csv' | 'json' | 'md'>,
  label: string,
  make: () => { name: string; text: string } | null,
): HTMLButtonElement {
  const b = h('button', { class: 'small', id: `export-${format}` }, label);
  b.addEventListener('click', () => {
    const made = make();
    if (made) post({ type: 'export', format, ...made });
  });
  return b;
}

/** Each row of `table`'s body as its cells' text joined by ` | `. */
export const rowTexts = (table: HTMLElement): string[] =>
  [...table.querySelectorAll('tbody tr')].map((tr) => [...tr.children].map((td) => td.textContent).join(' | '));

/** The sentences `status` says. */
export const statusTexts = (status: HTMLElement): string[] =>
  [...status.querySelectorAll('p')].map((p) => p.textContent ?? '');

/**
 * What a report page drew, for the page hook `start` is given: the run its header says, `step`,
 * and `marks` (what it says).
 */
export function drawnSummary(headerEl: HTMLElement, step: number | null, marks: string[]): DrawnReport {
  return { ...NOTHING_DRAWN, run: headerEl.dataset.run ?? '', step, marks };
}

/**
 * Starts a report page whose only message is its `state`: drawn now and on each theme change; each
 * state is given to `take`, then drawn (another message is an error naming the `view`).
 */
export function startReportPage<S extends PanelState>(
  page: PageProtocol<PanelKind, StateMsg<S>, { type: string }>,
  view: string,
  take: (state: S) => void,
  draw: () => void,
  exportImage: ImageExporter | undefined,
  drawn: () => DrawnReport,
): void {
  draw();
  watchTheme(draw);
  const handle = (m: StateMsg<S>): void => {
    if (m.type !== 'state') throw new Error(`the ${view} view does not show ${(m as { type: string }).type} messages`);
    take(m.state);
    draw();
  };
  start(page, handle, exportImage, drawn);
}
