// Bundles the webview panels' browser code: one IIFE per panel in dist/webview/<panel>.js.
// plotly is not bundled: the page loads node_modules/plotly.js-dist-min/plotly.min.js itself.
//   node scripts/build-webview.mjs            → dist/webview/<page>.js, one per WEBVIEW_PAGES (the panels and the report)
// scripts/build.mjs can call it: `await import('./build-webview.mjs')` or `buildWebview()`;
// scripts/package.mjs builds the VSIX's copy elsewhere, without source maps (`outdir`, `sourcemap`).
import * as esbuild from 'esbuild';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const WEBVIEW_PANELS = [
  'dashboard',
  'attention',
  'head',
  'positional',
  'heads',
  'beam',
  'importance',
  'ablations',
  'runCheck',
  'global',
];
/** Pages that are no panel: the run report (webview/report/), which the engine inlines into one HTML file. */
export const WEBVIEW_PAGES = [...WEBVIEW_PANELS, 'report'];

export async function buildWebview({ minify = false, outdir = join(root, 'dist', 'webview'), sourcemap = true } = {}) {
  await esbuild.build({
    entryPoints: Object.fromEntries(WEBVIEW_PAGES.map((p) => [p, join(root, 'webview', p, 'page.ts')])),
    outdir,
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'chrome120',
    sourcemap,
    minify,
    logLevel: 'warning',
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await buildWebview({ minify: process.argv.includes('--minify') });
}
