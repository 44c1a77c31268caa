// Serves each panel's page as VS Code would give it to a webview (the HTML of
// src/extension/panels/html.ts, under its CSP, with a VS Code theme's variables on <html>) on
// 127.0.0.1, for the webview tests and the drawing benchmark:
//   /panel/<one of WEBVIEW_PANELS>.html[?theme=light][&script=missing]
// plus the panels' bundles (dist/webview/, run the build first) and plotly.
import * as esbuild from 'esbuild';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, extname, join, normalize, sep } from 'node:path';
import { fileURLToPath, pathToFileURL, URL } from 'node:url';
import { WEBVIEW_PANELS } from './build-webview.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

// A dark VS Code theme (Dark Modern's colours), as VS Code sets them on <html style>.
export const DARK_THEME = {
  '--vscode-editor-background': '#1f1f1f',
  '--vscode-editor-foreground': '#cccccc',
  '--vscode-descriptionForeground': '#9d9d9d',
  '--vscode-editorWidget-border': '#454545',
  '--vscode-panel-border': '#2b2b2b',
  '--vscode-focusBorder': '#0078d4',
  '--vscode-button-background': '#0078d4',
  '--vscode-button-foreground': '#ffffff',
  '--vscode-button-hoverBackground': '#026ec1',
  '--vscode-errorForeground': '#f85149',
  '--vscode-inputValidation-errorBackground': '#5a1d1d',
  '--vscode-inputValidation-errorBorder': '#be1100',
  '--vscode-charts-blue': '#3794ff',
  '--vscode-charts-orange': '#d18616',
  '--vscode-charts-green': '#89d185',
  '--vscode-font-family': 'system-ui, "Ubuntu", "Droid Sans", sans-serif',
  '--vscode-font-size': '13px',
  '--vscode-editor-font-family': '"Droid Sans Mono", monospace',
};

// Light+ colours, to check the panels follow the theme.
export const LIGHT_THEME = {
  ...DARK_THEME,
  '--vscode-editor-background': '#ffffff',
  '--vscode-editor-foreground': '#3b3b3b',
  '--vscode-descriptionForeground': '#717171',
  '--vscode-editorWidget-border': '#c8c8c8',
  '--vscode-panel-border': '#e5e5e5',
  '--vscode-charts-blue': '#1a85ff',
  '--vscode-charts-green': '#388a34',
};

async function loadHtmlBuilder() {
  const outfile = join(root, 'out', 'webview-harness', 'html.mjs');
  await esbuild.build({
    entryPoints: [join(root, 'src/extension/panels/html.ts')],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    logLevel: 'warning',
  });
  return import(pathToFileURL(outfile).href + `?t=${Date.now()}`);
}

const TYPES = { '.js': 'text/javascript', '.map': 'application/json', '.html': 'text/html' };

function serve(panelHtml) {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/favicon.ico') {
      res.writeHead(204).end(); // Chromium asks for one; a webview never does
      return;
    }
    const port = server.address().port;
    const page = /^\/panel\/(\w+)\.html$/.exec(url.pathname);
    if (page && WEBVIEW_PANELS.includes(page[1])) {
      const light = url.searchParams.get('theme') === 'light';
      const style = Object.entries(light ? LIGHT_THEME : DARK_THEME)
        .map(([k, v]) => `${k}: ${v}`)
        .join('; ');
      const html = panelHtml({
        panel: page[1],
        title: `Test ${page[1]}`,
        cspSource: `http://127.0.0.1:${port}`,
        nonce: randomBytes(16).toString('base64'),
        plotlyUri: `http://127.0.0.1:${port}/node_modules/plotly.js-dist-min/plotly.min.js`,
        // ?script=missing: a page whose bundle fails to load (the tests of the page's own guard).
        scriptUri: `http://127.0.0.1:${port}/dist/webview/${url.searchParams.get('script') === 'missing' ? 'missing' : page[1]}.js`,
      })
        .replace('<html lang="en">', `<html lang="en" style='${style}'>`)
        .replace(
          '<body ',
          light
            ? '<body class="vscode-light" data-vscode-theme-kind="vscode-light" '
            : '<body class="vscode-dark" data-vscode-theme-kind="vscode-dark" ',
        );
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
      return;
    }
    const allowed = ['/dist/webview/', '/node_modules/plotly.js-dist-min/'];
    const rel = normalize(decodeURIComponent(url.pathname));
    if (!allowed.some((a) => rel.startsWith(a)) || rel.includes(`..${sep}`)) {
      res.writeHead(404).end();
      return;
    }
    const file = join(root, rel);
    if (!existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(readFileSync(file));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** Starts the server on a free port; resolves with it and its base URL. */
export async function servePanels() {
  const { panelHtml } = await loadHtmlBuilder();
  const server = await serve(panelHtml);
  return { server, base: `http://127.0.0.1:${server.address().port}` };
}
