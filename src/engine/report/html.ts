/**
 * The run report as one self-contained HTML file: plotly.js, the report page's bundle
 * (dist/webview/report.js, built by scripts/build-webview.mjs from webview/report/page.ts) and the
 * report's data (protocol/report.ts) inlined, under a Content Security Policy that lets the page
 * load nothing (no network, no file): it opens from file:// in any browser, offline. The assets are
 * found beside the running bundle (dist/cli.js → dist/webview/, node_modules/ beside dist/, as the
 * VSIX ships them), and the file is written whole or not at all (io/atomicFile.ts).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { REPORT_DATA_ID, type RunReportData } from '../../protocol/report';
import { PLOTLY_SCRIPT_ID } from '../../protocol/webview';
import { writeFileAtomic } from '../io/atomicFile';

export interface ReportAssets {
  plotly: string;
  page: string;
}

/** dist/webview/report.js and plotly.min.js, found from the running bundle (dist/, out/test/…) upwards. */
export function reportAssets(from = __dirname): ReportAssets {
  let page: string | undefined;
  let plotly: string | undefined;
  for (let dir = from, i = 0; i < 6 && !(page && plotly); dir = dirname(dir), i++) {
    page ??= [join(dir, 'webview', 'report.js'), join(dir, 'dist', 'webview', 'report.js')].find(existsSync);
    plotly ??= [join(dir, 'node_modules', 'plotly.js-dist-min', 'plotly.min.js')].find(existsSync);
  }
  if (!page)
    throw new Error(
      `the report page (dist/webview/report.js) is missing beside ${from}: rebuild (node scripts/build.mjs)`,
    );
  if (!plotly) throw new Error(`plotly.js (node_modules/plotly.js-dist-min/plotly.min.js) is missing above ${from}`);
  return { page: readFileSync(page, 'utf8'), plotly: readFileSync(plotly, 'utf8') };
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
/**
 * Script text made safe inside <script>: no `</script` (nor `<!--`) can end or bend the element. Both
 * escapes read the same in a JS string, template or regular expression (`\/` and `\x21` are `/` and `!`).
 */
const inScript = (js: string) => js.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\x21--');

/** The report's CSS: a dark page in the panels' colours (VS Code's Dark Modern), light where the browser asks. */
const REPORT_CSS = `
:root { color-scheme: dark; --vscode-editor-foreground: #cccccc; --vscode-editor-background: #1f1f1f;
  --vscode-descriptionForeground: #9d9d9d; --vscode-editorWidget-border: #454545; --vscode-charts-blue: #3794ff;
  --vscode-charts-orange: #d18616; --vscode-charts-green: #89d185; --vscode-font-family: system-ui, -apple-system, 'Segoe UI', sans-serif;
  --vscode-font-size: 13px; }
body { margin: 0; padding: 12px 18px; color: var(--vscode-editor-foreground); background: var(--vscode-editor-background);
  font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); }
h1 { font-size: 1.3em; margin: 0 0 4px; } h2 { font-size: 1em; font-weight: 600; margin: 0 0 6px; }
.muted { color: var(--vscode-descriptionForeground); }
.card { border: 1px solid var(--vscode-editorWidget-border); border-radius: 4px; padding: 8px; margin-bottom: 12px; min-width: 0; overflow: hidden; }
.chart-grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 420px), 1fr)); gap: 10px; }
.chart { height: 300px; min-width: 0; }
table { border-collapse: collapse; font-family: ui-monospace, monospace; font-size: 0.9em; }
th, td { text-align: left; padding: 1px 10px 1px 0; border-bottom: 1px solid var(--vscode-editorWidget-border); }
.config { display: grid; grid-template-columns: repeat(auto-fill, minmax(220px, 1fr)); gap: 0 16px; font-family: ui-monospace, monospace; font-size: 0.9em; }
.toolbar { display: flex; gap: 10px; align-items: center; flex-wrap: wrap; margin-bottom: 8px; }
#step-slider { flex: 1; max-width: 520px; }
.thumb-grid { display: grid; gap: 4px; align-items: center; justify-content: start; overflow-x: auto; }
.col-label, .row-label { font-size: 0.85em; color: var(--vscode-descriptionForeground); text-align: center; }
canvas.thumb { image-rendering: pixelated; outline: 1px solid var(--vscode-editorWidget-border); }
canvas.heads-map { image-rendering: pixelated; }
.readout { font-family: ui-monospace, monospace; min-height: 1.3em; }
.notes { margin: 4px 0 0; padding-left: 1.4em; }
.beam-tree { overflow: auto; max-height: 80vh; margin: 6px 0 10px; }
.legend { display: flex; gap: 14px; flex-wrap: wrap; font-size: 0.85em; color: var(--vscode-descriptionForeground); margin: 6px 0; }
#error { margin: 0 0 8px; padding: 6px 10px; border: 1px solid #be1100; background: #5a1d1d; color: #f48771; white-space: pre-wrap; }
`;

/** The whole report page: data, plotly and the page's bundle inlined; nothing else may load. */
export function reportHtml(
  data: RunReportData,
  assets: ReportAssets,
  nonce = randomBytes(16).toString('base64'),
): string {
  const csp = [
    "default-src 'none'",
    'img-src data: blob:',
    "style-src 'unsafe-inline'",
    `script-src 'nonce-${nonce}' 'wasm-unsafe-eval'`, // WebAssembly: webview/lib/poolMax.wat
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  // JSON inside <script type="application/json">: `<` written as \u003c, so no tag can close it.
  const json = JSON.stringify(data).replace(/</g, '\\u003c');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<meta name="generator" content="Attention Debugger">
<title>${escapeHtml(`${data.header.run}: run report`)}</title>
<style>${REPORT_CSS}</style>
</head>
<body class="vscode-dark" data-panel="report">
<div id="error" role="alert" hidden></div>
<div id="view-header"></div>
<div id="app"></div>
<script type="application/json" id="${REPORT_DATA_ID}">${json}</script>
<script nonce="${nonce}" id="${PLOTLY_SCRIPT_ID}">${inScript(assets.plotly)}</script>
<script nonce="${nonce}">${inScript(assets.page)}</script>
</body>
</html>
`;
}

/** Writes the report to `out` whole (temp file, fsync, rename); returns its size in bytes. */
export function writeReportFile(out: string, html: string): number {
  const bytes = Buffer.from(html, 'utf8');
  writeFileAtomic(out, [bytes]);
  return bytes.length;
}
