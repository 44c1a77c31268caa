/**
 * The HTML of every panel's webview, in one pure function (no vscode import) so the browser test
 * serves exactly what the panel classes give VS Code. Scripts run only with the page's nonce;
 * plotly is loaded (by every page but PANELS_WITHOUT_PLOTLY's) from the extension's node_modules
 * (no network) beside the panel's bundle, not before it: its 3.5 MB took seconds on a busy
 * machine, and the page drew nothing until it ran (issue 26 item 7). Maps are canvas and draw at once; charts wait for plotly (webview/common.ts).
 * style-src allows inline styles because plotly writes style elements and attributes (with a
 * nonce in the list, 'unsafe-inline' would be ignored, so styles carry no nonce).
 */
import { PLOTLY_SCRIPT_ID, type PanelKind } from '../../protocol/webview';

export interface PanelHtmlOptions {
  panel: PanelKind;
  title: string;
  /** webview.cspSource: the origin that asWebviewUri URIs have. */
  cspSource: string;
  /** Fresh for every page load, from crypto.randomBytes. */
  nonce: string;
  /** URI of plotly.min.js. */
  plotlyUri: string;
  /** URI of dist/webview/<panel>.js. */
  scriptUri: string;
  /** URIs of scripts run before the panel's: none in the product (the test harness's page hook). */
  beforeUris?: readonly string[];
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The page's CSS: VS Code's theme variables throughout, so panels follow the theme. */
export const PANEL_CSS = `
:root { color-scheme: light dark; }
body { margin: 0; padding: 8px 12px; color: var(--vscode-editor-foreground); background: var(--vscode-editor-background);
  font-family: var(--vscode-font-family); font-size: var(--vscode-font-size, 13px); }
h2 { font-size: 1em; font-weight: 600; margin: 0; }
.muted { color: var(--vscode-descriptionForeground); }
.view-header { margin: 0 0 8px; padding-bottom: 4px; border-bottom: 1px solid var(--vscode-editorWidget-border, #454545); }
.view-header .run-name { font-weight: 600; }
/* A header wider than its panel wraps between its parts (run, step, input, …), none cut; only a part
   wider than the whole panel (a long typed input) ends in an ellipsis. */
.view-header > span { display: inline-block; white-space: pre; max-width: 100%; overflow: hidden;
  text-overflow: ellipsis; vertical-align: bottom; }
/* The run and step stay in sight while the page scrolls (issue 26 item 14). */
.view-header { position: sticky; top: 0; z-index: 10; background: var(--vscode-editor-background); margin-top: -8px; padding-top: 8px; }
.form { display: flex; gap: 6px; align-items: center; flex-wrap: wrap; margin-bottom: 8px; }
/* A text box is as wide as its placeholder ("source token ids, e.g. 5 6 7") or the panel: boxes wrap, not cut it. */
.form input[type=text] { flex: 1 1 15em; min-width: min(15em, 100%); color: var(--vscode-input-foreground); background: var(--vscode-input-background);
  border: 1px solid var(--vscode-input-border, transparent); padding: 2px 4px; font: inherit; }
select { color: var(--vscode-dropdown-foreground); background: var(--vscode-dropdown-background); border: 1px solid var(--vscode-dropdown-border, transparent); font: inherit; }
.colorbar { display: flex; align-items: center; gap: 4px; font-size: 0.85em; }
.colorbar canvas { width: 120px; height: 10px; outline: 1px solid var(--vscode-editorWidget-border, #454545); }
#error { margin: 0 0 8px; padding: 6px 10px; border: 1px solid var(--vscode-inputValidation-errorBorder, #be1100);
  background: var(--vscode-inputValidation-errorBackground, #5a1d1d); color: var(--vscode-errorForeground, #f48771); white-space: pre-wrap; }
.toolbar { display: flex; gap: 8px; align-items: center; margin-bottom: 8px; min-height: 1.6em; flex-wrap: wrap; }
.spacer { flex: 1; }
button { color: var(--vscode-button-foreground); background: var(--vscode-button-background); border: none; padding: 3px 10px; cursor: pointer; font: inherit; }
button:hover { background: var(--vscode-button-hoverBackground); }
button.small { padding: 1px 6px; font-size: 0.9em; }
.actions { display: inline-flex; gap: 4px; }
.card { border: 1px solid var(--vscode-editorWidget-border, var(--vscode-panel-border)); border-radius: 4px; padding: 8px; margin-bottom: 10px; min-width: 0; }
.card > header { display: flex; justify-content: space-between; align-items: center; gap: 8px; margin-bottom: 6px; }
.chart-grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 420px), 1fr)); gap: 10px; }
.chart { height: 300px; min-width: 0; }
/* Until plotly.js has loaded (webview/common.ts), a chart not yet drawn says why it is blank. */
html[data-charts='loading'] .chart:empty::before { content: 'Loading the chart library…'; display: block; padding: 2em; text-align: center; color: var(--vscode-descriptionForeground); }
.chart.tall { height: 70vh; }
.chart.detail { height: 560px; }
.attention-layout { display: grid; grid-template-columns: minmax(0, 1fr) minmax(380px, 600px); gap: 10px; align-items: start; }
@media (max-width: 1000px) { .attention-layout { grid-template-columns: 1fr; } }
.detail-card { position: sticky; top: calc(1.4em + 14px); }
/* The cross-attention the README points to comes first, in sight when the view opens (the DOM keeps the paper's order). */
#grids { display: flex; flex-direction: column; }
#grids > .card.kind[data-kind="cross"] { order: -1; }
.thumb-grid { display: grid; gap: 4px; align-items: center; justify-content: start; overflow-x: auto; }
.col-label, .row-label { font-size: 0.85em; color: var(--vscode-descriptionForeground); text-align: center; }
.row-label { padding-right: 4px; }
canvas.thumb, canvas.aggregate { image-rendering: pixelated; cursor: pointer; outline: 1px solid var(--vscode-editorWidget-border, #454545); }
canvas.thumb:hover { outline: 2px solid var(--vscode-focusBorder); }
canvas.thumb.selected { outline: 2px solid var(--vscode-focusBorder, #007fd4); outline-offset: 1px; }
canvas.big-map { image-rendering: pixelated; max-width: 100%; outline: 1px solid var(--vscode-editorWidget-border, #454545); }
.tokens { font-size: 0.85em; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; }
.readout { font-family: var(--vscode-editor-font-family, monospace); min-height: 1.3em; }
.head-layout { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 340px), 1fr)); gap: 10px; align-items: start; }
.labelled-map { display: grid; grid-template-columns: auto auto; justify-content: start; column-gap: 4px; }
.key-labels { display: flex; align-items: flex-end; max-height: 7em; overflow: hidden; }
.key-labels span { writing-mode: vertical-rl; transform: rotate(180deg); display: flex; align-items: center; justify-content: flex-start; font-size: 0.85em; overflow: hidden; white-space: nowrap; }
.key-labels.across span { writing-mode: horizontal-tb; transform: none; justify-content: center; }
.query-labels { display: flex; flex-direction: column; align-items: flex-end; max-width: 10em; }
.query-labels span { font-size: 0.85em; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; max-width: 10em; }
#step-slider { flex: 1; max-width: 480px; }
table { border-collapse: collapse; font-family: var(--vscode-editor-font-family, monospace); font-size: 0.9em; }
table { table-layout: fixed; width: 100%; }
th, td { text-align: left; padding: 1px 8px 1px 0; border-bottom: 1px solid var(--vscode-editorWidget-border, #454545);
  white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.card { overflow: hidden; }
.problems { margin: 0; padding-left: 1.5em; max-height: 9em; overflow-y: auto; font-size: 0.9em; }
/* A finding says why in a sentence (a divergence's medians and levels, a drop's heads): it wraps, never cut. */
.problem { cursor: pointer; overflow-wrap: anywhere; line-height: 1.4; }
.problem:hover { background: var(--vscode-list-hoverBackground); }
.thumb-cell { display: flex; flex-direction: column; position: relative; }
.crosshair { position: absolute; pointer-events: none; background: rgba(255, 255, 255, 0.28); outline: 1px solid rgba(255, 255, 255, 0.7); }
.aggregate-head { margin-top: 10px; display: flex; gap: 6px; align-items: center; }
.role-label, .aggregate-label { font-size: 0.75em; color: var(--vscode-descriptionForeground); white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.heads-labels { font-family: var(--vscode-editor-font-family, monospace); }
.beam-tree { overflow: auto; max-height: 80vh; }
/* The tree takes the panel's whole width when it needs it; the n-best sits beside it only when both fit. */
.beam-layout { display: flex; flex-wrap: wrap; gap: 10px; align-items: flex-start; }
.beam-layout > .tree-card { flex: 1 1 auto; min-width: 0; max-width: 100%; }
.beam-layout > .detail-card { flex: 1 1 380px; max-width: 600px; }
canvas.thumb.ablated { opacity: 0.3; outline: 2px dashed var(--vscode-errorForeground, #f48771); }
#ablation-table td.worse { color: var(--vscode-errorForeground, #f48771); }
#ablation-table td.better { color: var(--vscode-charts-green, #89d185); }
#ablated-heads button { margin-right: 4px; }
#importance-table th, #importance-table tbody tr { cursor: pointer; }
#importance-table th { white-space: normal; vertical-align: bottom; } /* the metric's header is a phrase */
/* Fifteen columns of numbers and the top dimensions: each as wide as its text, scrolled sideways. */
#score-table { table-layout: auto; width: auto; min-width: 100%; }
#importance-table tbody tr:hover { background: var(--vscode-list-hoverBackground); }
#ablations-table th, #findings-table th { cursor: pointer; }
/* Columns as wide as their text; a finding's message and the heads ablated wrap rather than being cut. */
#ablations-table, #findings-table { table-layout: auto; }
#findings-table td, #ablations-table td { white-space: normal; overflow-wrap: anywhere; }
#ablations-table td.worse { color: var(--vscode-errorForeground, #f48771); }
#ablations-table td.better { color: var(--vscode-charts-green, #89d185); }
#findings-table td.severity-error { color: var(--vscode-errorForeground, #f48771); }
#summary.summary-ok { color: var(--vscode-charts-green, #89d185); }
#summary.summary-not-ok { color: var(--vscode-errorForeground, #f48771); }
.beam-node { cursor: pointer; }
#n-best { table-layout: auto; }
.legend { display: flex; gap: 14px; font-size: 0.85em; color: var(--vscode-descriptionForeground); margin-bottom: 6px; }
#beam-node canvas { image-rendering: pixelated; outline: 1px solid var(--vscode-editorWidget-border, #454545); }
`;

/**
 * Runs before the panel's scripts: a script that fails to load (its element's error event) or throws
 * before the panel starts is said at once (a blank panel tells a user nothing); a page that never
 * says ready is replaced by the extension (PanelSlot), which a load failure on a busy machine needs. A script still
 * loading is no failure: on a busy machine (two CPUs training) plotly can take longer than any fixed
 * wait, and a timer's "close and open it again" went away by itself once it ran (issue 26 item 9).
 * So the page looks each second: once every script has run (the document is parsed) and the panel
 * has still not started, or after 60 s of loading, it says so. common.ts's start() sets window.__panelStarted.
 */
const GUARD = `(() => {
  let said = false;
  const show = (text) => { const el = document.getElementById('error'); if (el) { el.textContent = text; el.hidden = false; said = true; } };
  window.addEventListener('error', (e) => {
    if (window.__panelStarted) return;
    const src = e.target && e.target.src;
    show(src ? 'The panel could not load its script (' + src + '). The extension opens it anew by itself within seconds; if this stays, close the panel and open it again.' : 'The panel failed to start: ' + e.message);
  }, true);
  const since = Date.now();
  const look = () => {
    if (window.__panelStarted || said) return;
    // Past 'loading', the parser has run the panel's script (plotly, async, is webview/common.ts's to watch).
    if (document.readyState !== 'loading') show('The panel loaded its scripts but did not start. Close it and open it again from the Attention Debugger commands.');
    else if (Date.now() - since >= 60000) show('The panel is still loading its scripts after 60 s. If it stays blank, close it and open it again.');
    else setTimeout(look, 1000);
  };
  setTimeout(look, 1000);
})();`;

/** The pages that draw no plotly chart, so load no plotly.js (the Global Q/K view draws its own canvas). */
export const PANELS_WITHOUT_PLOTLY: readonly PanelKind[] = ['global'];

export function panelHtml(o: PanelHtmlOptions): string {
  const csp = [
    "default-src 'none'",
    `img-src ${o.cspSource} data: blob:`,
    `style-src ${o.cspSource} 'unsafe-inline'`,
    `font-src ${o.cspSource}`,
    // 'wasm-unsafe-eval': WebAssembly may be compiled (poolMax.wat), JavaScript still only from nonced scripts.
    `script-src 'nonce-${o.nonce}' 'wasm-unsafe-eval'`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>${escapeHtml(o.title)}</title>
<style>${PANEL_CSS}</style>
</head>
<body data-panel="${o.panel}">
<div id="error" role="alert" hidden></div>
<div id="view-header" class="view-header"></div>
<div id="app"></div>
<script nonce="${o.nonce}">${GUARD}</script>
${PANELS_WITHOUT_PLOTLY.includes(o.panel) ? '' : `<script nonce="${o.nonce}" id="${PLOTLY_SCRIPT_ID}" src="${escapeHtml(o.plotlyUri)}" async></script>\n`}${(o.beforeUris ?? []).map((u) => `<script nonce="${o.nonce}" src="${escapeHtml(u)}"></script>\n`).join('')}<script nonce="${o.nonce}" src="${escapeHtml(o.scriptUri)}"></script>
</body>
</html>
`;
}
