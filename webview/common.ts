/**
 * What every panel's browser code shares: the VS Code API handle, the validated message loop,
 * the error banner, the exports (images, and the view as one HTML file: viewHtml.ts), theme colours
 * (theme.ts, re-exported), and the one promise queue through which every plotly call goes (calls
 * on one graph div must not overlap).
 */
import { type CellRef, DRAWN_HOOK, type DrawnOfPage, type DrawnReport } from '../src/protocol/drawnReport';
import {
  type CommonFromPage,
  type CommonToPage,
  type MessageBody,
  type PageProtocol,
  type PageExportFormat,
  type PanelKind,
  type PersistedState,
  type ViewHeader,
  PLOTLY_SCRIPT_ID,
  WEBVIEW_PROTOCOL_VERSION,
  checkToPage,
} from '../src/protocol/webview';
import { type ChartSvg, viewHtml } from './viewHtml';

interface VsCodeApi {
  postMessage(msg: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const api: VsCodeApi =
  typeof acquireVsCodeApi === 'function'
    ? acquireVsCodeApi()
    : { postMessage: (m) => console.log('postMessage', m), getState: () => undefined, setState: () => undefined };

function postAny(body: object): void {
  api.postMessage({ ...body, v: WEBVIEW_PROTOCOL_VERSION });
}

/** Posts a message every page may post (an error, an export) to the extension, stamped with the protocol version. */
export function post(body: MessageBody<CommonFromPage>): void {
  postAny(body);
}

/** The poster of one page's own requests: typed with that page's protocol (src/protocol/pages/<panel>.ts). */
export function poster<F extends { type: string }>(
  page: PageProtocol<PanelKind, { type: string }, F>,
): (body: MessageBody<F>) => void {
  void page;
  return postAny;
}

export function saveState(state: Omit<PersistedState, 'v'>): void {
  api.setState({ ...state, v: WEBVIEW_PROTOCOL_VERSION });
}

export function loadState(): Partial<PersistedState> | undefined {
  const s = api.getState();
  return typeof s === 'object' && s !== null ? (s as Partial<PersistedState>) : undefined;
}

/** Shows `text` in the panel's error banner and tells the extension; drawing goes on. */
export function showError(text: string): void {
  const el = document.getElementById('error');
  if (el) {
    el.textContent = text;
    el.hidden = false;
  }
  document.body.dataset.errors = String(Number(document.body.dataset.errors ?? '0') + 1);
  post({ type: 'error', message: text });
}

export function clearError(): void {
  const el = document.getElementById('error');
  if (el) el.hidden = true;
}

/** Makes an image of what a panel shows, as a data: URL and a file name, or the reason it cannot. */
export type ImageExporter = (format: 'png' | 'svg') => Promise<{ dataUrl: string; name: string } | string>;

/** The plotly chart `el` as SVG markup, as shown (at its size), for the HTML export. */
const chartSvg: ChartSvg = async (el) => {
  const size = el.clientWidth > 0 ? { width: el.clientWidth, height: el.clientHeight } : {};
  const url = await plotly(() => Plotly.toImage(el, { format: 'svg', ...size }));
  return url === undefined ? undefined : decodeURIComponent(url.slice(url.indexOf(',') + 1));
};

/** Makes the image (or the view as one HTML file) and sends it to the extension to save, or says why not. */
function postImage(exportImage: ImageExporter, format: PageExportFormat): void {
  const fail = (why: string): void => post({ type: 'error', message: `export ${format}: ${why}` });
  const panel = document.body.dataset.panel ?? 'view';
  if (format === 'html')
    return void viewHtml(chartSvg).then(
      (text) => post({ type: 'export', format, name: `${panel}.html`, text }),
      (err: Error) => fail(err.message),
    );
  void exportImage(format).then(
    (r) => (typeof r === 'string' ? fail(r) : post({ type: 'export', format, name: r.name, dataUrl: r.dataUrl })),
    (err: Error) => fail(err.message),
  );
}

/** A toolbar button that saves the panel's image, or with `html` its view as one file (as Export View does). */
export function imageButton(
  format: PageExportFormat,
  exportImage: ImageExporter = async () => 'no image',
): HTMLButtonElement {
  const what = format === 'html' ? 'the view as one self-contained HTML file' : format.toUpperCase();
  const b = h('button', { class: 'small', title: `Save ${what}` }, format.toUpperCase());
  b.addEventListener('click', () => postImage(exportImage, format));
  return b;
}

export type { CellRef, DrawnReport } from '../src/protocol/drawnReport';

/** What a page that reports nothing drawn says (a panel without a `report`). */
export const NOTHING_DRAWN: DrawnReport = {
  run: '',
  step: null,
  input: '',
  activity: '',
  maps: [],
  head: null,
  frames: 0,
  marks: [],
  colors: [],
};

/**
 * Listens for messages from the extension: each is validated; a malformed one shows an error
 * naming the field and is dropped. A handler that throws is reported the same way. Then says
 * `ready` (the extension answers with a full `state`). `exportImage` answers Export View.
 * `report` says what the page drew: left on the page (DRAWN_HOOK) for the test harnesses' page
 * hook; the product never calls it.
 */
export function start<ToPage extends { type: string }>(
  page: PageProtocol<PanelKind, ToPage, { type: string }>,
  handle: (m: ToPage) => void,
  exportImage?: ImageExporter,
  report?: (cells: CellRef[]) => DrawnReport,
): void {
  const panel = page.panel;
  window.addEventListener('message', (event: MessageEvent) => {
    const why = checkToPage(page, event.data);
    if (why) {
      showError(`Malformed message ignored: ${why}`);
      return;
    }
    const m = event.data as CommonToPage;
    if (m.type === 'exportImage') {
      postImage(exportImage ?? (async () => `the ${panel} panel has no image export`), m.format);
      return;
    }
    if (m.type === 'ping') {
      post({ type: 'ready', panel });
      return;
    }
    try {
      clearError();
      handle(event.data as ToPage);
    } catch (err) {
      showError(`Could not show ${(event.data as { type: string }).type}: ${(err as Error).message}`);
    }
  });
  window.addEventListener('error', (e) => showError(`Panel error: ${e.message}`));
  const drawn: DrawnOfPage = (cells) => ({ panel, ...(report?.(cells) ?? NOTHING_DRAWN) });
  (window as unknown as Record<typeof DRAWN_HOOK, DrawnOfPage>)[DRAWN_HOOK] = drawn;
  (window as { __panelStarted?: boolean }).__panelStarted = true; // html.ts's guard stands down
  post({ type: 'ready', panel });
}

// ---- theme (theme.ts) ------------------------------------------------------------------------

export { type Theme, PLOTLY_CONFIG, readTheme, themedLayout, watchTheme } from './theme';

// ---- the plotly queue ----------------------------------------------------------------------

/**
 * Resolves once plotly.js has run: the page loads it async (panels/html.ts), so maps are drawn
 * while it loads. If it does not load, the charts say so (the maps still work).
 */
function plotlyLoaded(): Promise<void> {
  if (typeof Plotly !== 'undefined') return Promise.resolve();
  const script = document.getElementById(PLOTLY_SCRIPT_ID);
  if (!script) return Promise.reject(new Error('the page has no plotly.js script'));
  return new Promise((resolve, reject) => {
    script.addEventListener('load', () => resolve(), { once: true });
    script.addEventListener(
      'error',
      () =>
        reject(
          new Error(
            `plotly.js did not load (${script.getAttribute('src')}): charts cannot be drawn. Close the panel and open it again.`,
          ),
        ),
      { once: true },
    );
  });
}

// A page served without plotly.js (src/extension/panels/html.ts PANELS_WITHOUT_PLOTLY) waits for none
// and says nothing at load; a plotly call there would fail and be shown like any chart error.
// While plotly loads, <html data-charts="loading"> has each chart not yet drawn say so (panels/html.ts).
let queue: Promise<unknown> =
  typeof Plotly === 'undefined' && !document.getElementById(PLOTLY_SCRIPT_ID)
    ? Promise.resolve()
    : chartsLoading(plotlyLoaded()).catch((err: unknown) => showError((err as Error).message));

/** Marks the page's charts as loading until `loaded` settles. */
function chartsLoading(loaded: Promise<void>): Promise<void> {
  const root = document.documentElement;
  if (typeof Plotly === 'undefined') root.dataset.charts = 'loading';
  return loaded.finally(() => delete root.dataset.charts);
}

/** Runs plotly calls one after another; a failure is shown, and the queue goes on. */
export function plotly<T>(fn: () => Promise<T> | T): Promise<T | undefined> {
  const next = queue.then(fn).catch((err: unknown) => {
    showError(`Chart error: ${(err as Error).message ?? String(err)}`);
    return undefined;
  });
  queue = next;
  return next;
}

/** Purges every graph when the page goes away (plotly keeps listeners and resize handlers). */
export function purgeOnUnload(...roots: HTMLElement[]): void {
  window.addEventListener('pagehide', () => {
    for (const r of roots) void plotly(() => Plotly.purge(r));
  });
}

/** A redraw request coalesced into one per animation frame; `flush` draws now if one is pending. */
export interface FrameScheduler {
  (): void;
  flush(): void;
}

/** Coalesces redraw requests into one per animation frame. */
export function frameScheduler(draw: () => void): FrameScheduler {
  let pending = false;
  const run = (): void => {
    if (!pending) return;
    pending = false;
    draw();
  };
  const request = (): void => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(run);
  };
  // An export asked for right after new data must not race the frame that would draw it.
  return Object.assign(request, { flush: run });
}

// ---- what a panel shows ------------------------------------------------------------------

/**
 * plotly reads `<…>` in its text as markup, so a token such as `<s>` vanished from labels: every
 * token label goes through this before it reaches a plotly string (DOM text uses textContent).
 */
export function plotlyText(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * The header every panel shows: the run, the step and the input, so no view shows data without
 * saying whose it is. `step` and `input` override the selection's (a view showing a snapshot says
 * that snapshot's step).
 */
export function renderHeader(
  el: HTMLElement,
  header: ViewHeader | null,
  shown: { step?: number | null; input?: string; note?: string } = {},
): void {
  if (!header) {
    el.replaceChildren(h('span', { class: 'muted' }, 'No run selected'));
    el.title = '';
    el.dataset.run = '';
    return;
  }
  const step = shown.step !== undefined ? shown.step : header.step;
  const input = shown.input ?? header.input;
  const activity = header.live ? 'training' : (header.activity ?? '');
  // Each span's class and text: a header that differs from the one shown only in its texts (a live
  // run's next step) is updated in place, so a view redrawn every snapshot makes no elements for it.
  const parts = separated([
    ['run-name', header.run],
    [`muted activity-${activity}`, activity ? ` (${ACTIVITY_LABELS[activity]})` : '', 'joined'],
    ['', step === null ? 'newest step' : `step ${step}`],
    ['', input === 'probe' ? 'probe pair' : `input “${input}”`],
    ...(shown.note ? [['muted', shown.note] as Part] : []),
    ...(header.fork ? [['fork-edits', forkNote(header.fork)] as Part] : []),
  ]);
  const kids = [...el.children];
  if (kids.length === parts.length && parts.every(([cls], i) => kids[i]!.className === cls))
    parts.forEach(([, text], i) => kids[i]!.textContent !== text && (kids[i]!.textContent = text));
  else el.replaceChildren(...parts.map(([cls, text]) => h('span', cls ? { class: cls } : {}, text)));
  el.title = header.runDir;
  el.dataset.run = header.run;
  el.dataset.step = step === null ? '' : String(step);
  el.dataset.input = input;
  el.dataset.activity = activity;
}

/** A run folder's name: the last part of its path (a trailing separator ignored). */
export const runName = (dir: string): string => dir.split(/[\\/]/).filter(Boolean).pop() ?? dir;

/** A header part: its class, its text, and whether it follows the part before with no separator. */
export type Part = [cls: string, text: string, joined?: 'joined'];

/**
 * The parts' classes and texts, " · " ending each part that another follows: a header that wraps
 * (between parts, html.ts) ends a line with its separator rather than starting the next with one.
 */
export function separated(parts: Part[]): [cls: string, text: string][] {
  const out = parts.map(([cls, text]): [string, string] => [cls, text]);
  let last = -1; // the last part with a text
  parts.forEach(([, text, joined], i) => {
    if (text === '') return;
    if (last >= 0 && !joined) out[last]![1] += ' · ';
    last = i;
  });
  return out;
}

/** `fork of base at step 40: frozen cross:1.0; lr × 0.5`: what a fork changed, from which run. */
function forkNote(f: NonNullable<ViewHeader['fork']>): string {
  const parent = runName(f.parent);
  return `fork of ${parent} at step ${f.step}: ${f.edits}`;
}

/** The header's note on who writes the run. */
const ACTIVITY_LABELS: Record<string, string> = {
  training: 'training',
  live: 'written live by another process',
  stalled: 'stalled: nothing written for a minute',
  paused: 'paused at a breakpoint',
  diverged: 'diverged: see its problems',
  finished: 'finished',
};

/** The header as shown (renderHeader's data attributes), for `drawn` reports. */
export function shownHeader(el: HTMLElement): { run: string; step: number | null; input: string; activity: string } {
  return {
    activity: el.dataset.activity ?? '',
    run: el.dataset.run ?? '',
    step: el.dataset.step ? Number(el.dataset.step) : null,
    input: el.dataset.input ?? '',
  };
}

/** The colour drawn at (x, y) of a canvas, [r, g, b, a]. */
export function pixelAt(canvas: HTMLCanvasElement, x: number, y: number): [number, number, number, number] {
  const d = canvas.getContext('2d')!.getImageData(Math.floor(x), Math.floor(y), 1, 1).data;
  return [d[0], d[1], d[2], d[3]];
}

/** Small DOM helper: an element with attributes and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') el.className = v;
    else el.setAttribute(k, v);
  }
  el.append(...children);
  return el;
}

export function app(): HTMLElement {
  const el = document.getElementById('app');
  if (!el) throw new Error('#app missing from the panel HTML');
  return el;
}
