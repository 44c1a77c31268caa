// The harness of the webview tests in a real browser (index.mjs runs them): builds the panels' bundles, serves each panel's page (the HTML
// the panel classes give VS Code, from src/extension/panels/html.ts; scripts/panel-server.mjs) on
// 127.0.0.1 with a dark VS Code theme and a fake acquireVsCodeApi that records what the page posts, opens it in Debian's
// headless Chromium through playwright-core, posts protocol messages into it and checks what is
// DRAWN: canvas pixels, plotly's SVG paths and trace data, the DOM. Expected values come from
// independent sources (matplotlib's viridis colours, eq. 3 of the paper worked here), never from
// the webview's own code. Screenshots go to test-artifacts/webview/.
//   node test/webview/browser/index.mjs      (run by scripts/run-tests.mjs after the unit tests)
//   WEBVIEW_TEST_GREP=<text>                 runs only tests whose name contains <text>
// Prints `ok`/`FAIL` per test and a last line `N passed, N failed`; exits non-zero on failure.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildWebview } from '../../../scripts/build-webview.mjs';
import { servePanels } from '../../../scripts/panel-server.mjs';
import { CHROMIUM, launchChromium } from '../../../scripts/chromium.mjs';

export { DARK_THEME, LIGHT_THEME } from '../../../scripts/panel-server.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
/** The test harnesses' page hook: asked `reportDrawn`, a page posts `drawn` (not in the product). */
const PAGE_HOOK = join(root, 'test', 'pageHook', 'pageHook.js');
export const artifacts = join(root, 'test-artifacts', 'webview');
const grep = process.env.WEBVIEW_TEST_GREP ?? '';
const started = Date.now();

// ---- independent expectations --------------------------------------------------------------

// matplotlib's viridis at t = 0, 1/8, …, 1 (the published colour values, not the webview's table).
export const VIRIDIS = {
  0: '#440154',
  0.125: '#472c7a',
  0.25: '#3b518b',
  0.375: '#2c718e',
  0.5: '#21908d',
  1: '#fde725',
};
export const hexRgb = (hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
// Eq. (3): lrate = d_model^-0.5 · min(step^-0.5, step · warmup^-1.5), d_model 512, warmup 4000.
export const D_MODEL = 512;
export const WARMUP = 4000;
export const lrAt = (s) => D_MODEL ** -0.5 * Math.min(s ** -0.5, s * WARMUP ** -1.5);

/** The webview protocol version these tests speak (messages below say `v: 3`). */
export const V = 3;
const declared = Number(
  /WEBVIEW_PROTOCOL_VERSION = (\d+)/.exec(readFileSync(join(root, 'src/protocol/webview.ts'), 'utf8'))?.[1],
);
if (declared !== V) throw new Error(`src/protocol/webview.ts declares version ${declared}; these tests speak ${V}`);

// ---- setup ---------------------------------------------------------------------------------

function ensureChromium() {
  if (existsSync(CHROMIUM)) return;
  if (process.getuid?.() === 0) {
    console.log('webview tests: installing Debian chromium');
    spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  }
  if (!existsSync(CHROMIUM))
    throw new Error(`no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);
}

// ---- page helpers --------------------------------------------------------------------------

const FAKE_VSCODE = () => {
  window.__posted = [];
  let state;
  window.acquireVsCodeApi = () => ({
    postMessage: (m) => window.__posted.push(m),
    getState: () => state,
    setState: (s) => {
      state = s;
      window.__state = s;
    },
  });
};

let browser;
let base;
export const problems = []; // console errors, CSP violations and page errors, per page

export async function openPanel(
  panel,
  viewport = { width: 1400, height: 900 },
  theme = 'dark',
  init = undefined,
  initArg = undefined,
) {
  // `viewport` may carry a deviceScaleFactor (2: a high-DPI screen).
  const { deviceScaleFactor, ...size } = viewport;
  const page = await browser.newPage({ viewport: size, ...(deviceScaleFactor ? { deviceScaleFactor } : {}) });
  page.on('console', (m) => {
    if (m.type() === 'error' || /Content Security Policy/i.test(m.text()))
      problems.push(`${panel}: console ${m.type()}: ${m.text()} ${m.location()?.url ?? ''}`);
  });
  page.on('pageerror', (e) => problems.push(`${panel}: page error: ${e.message}`));
  await page.addInitScript(FAKE_VSCODE);
  await page.addInitScript({ path: PAGE_HOOK }); // answers reportDrawn with what the page drew
  if (init) await page.addInitScript(init, initArg);
  await page.goto(`${base}/panel/${panel}.html?theme=${theme}`);
  await page.waitForFunction(() => window.__posted.some((m) => m.type === 'ready'), null, { timeout: 20000 });
  return page;
}

/**
 * A page opened from a file:// URL (the run report) with every other request blocked and counted:
 * returns the page and `blocked`, the URLs refused (a self-contained page makes none).
 */
export async function openFile(url, viewport = { width: 1400, height: 900 }) {
  const page = await browser.newPage({ viewport });
  const blocked = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || /Content Security Policy/i.test(m.text()))
      problems.push(`file: console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`file: page error: ${e.message}`));
  await page.route('**/*', (route) => {
    const u = route.request().url();
    if (u.startsWith('file:') || u.startsWith('data:') || u.startsWith('blob:')) return route.continue();
    blocked.push(u);
    return route.abort();
  });
  page.on('request', (r) => {
    const u = r.url();
    if (!u.startsWith('file:') && !u.startsWith('data:') && !u.startsWith('blob:') && !blocked.includes(u))
      blocked.push(u);
  });
  await page.goto(url);
  return { page, blocked };
}

/**
 * A panel whose plotly.js the server holds back until `release()` (a busy machine: the 3.5 MB
 * script took seconds): resolves once the page says ready, or rejects if it never does.
 */
export async function openPanelPlotlyHeld(panel, viewport = { width: 1200, height: 900 }) {
  const page = await browser.newPage({ viewport });
  page.on('pageerror', (e) => problems.push(`${panel}: page error: ${e.message}`));
  let release;
  const held = new Promise((r) => (release = r));
  await page.route('**/plotly.min.js', async (route) => {
    await held;
    await route.continue();
  });
  await page.addInitScript(FAKE_VSCODE);
  await page.goto(`${base}/panel/${panel}.html`, { waitUntil: 'commit' });
  const ready = await page
    .waitForFunction(() => window.__posted.some((m) => m.type === 'ready'), null, { timeout: 15000 })
    .then(
      () => true,
      () => false,
    );
  return { page, ready, release };
}

/** A panel whose bundle fails to load (?script=missing): what the page's guard is for. */
export async function openBrokenPanel(panel) {
  const page = await browser.newPage({ viewport: { width: 1000, height: 700 } });
  await page.addInitScript(FAKE_VSCODE);
  await page.goto(`${base}/panel/${panel}.html?script=missing`);
  return page;
}

/**
 * A panel whose bundle the server answers `delayMs` late, as a busy machine does (two CPUs training):
 * the page is returned as soon as its HTML arrives, before its scripts have loaded.
 */
export async function openSlowPanel(panel, delayMs) {
  const page = await browser.newPage({ viewport: { width: 1000, height: 700 } });
  await page.addInitScript(FAKE_VSCODE);
  await page.route(`**/dist/webview/${panel}.js`, async (route) => {
    await new Promise((r) => setTimeout(r, delayMs));
    await route.continue();
  });
  await page.goto(`${base}/panel/${panel}.html`, { waitUntil: 'commit' });
  return page;
}

/**
 * A panel's run header (protocol RunHeader) of the run in `runDir` with those checkpoints, on the
 * probe input, not live, at the newest step unless `more` says otherwise.
 */
export const panelHeader = (runDir, checkpoints, more = {}) => ({
  runDir,
  run: basename(runDir),
  step: null,
  input: 'probe',
  live: false,
  checkpoints,
  vocab: true,
  ...more,
});

export const posted = (page, type) => page.evaluate((t) => window.__posted.filter((m) => m.type === t), type);
/** Metric rows of steps from…to, the loss given by `loss(step)`. */
export const metricRows = (from, to, loss) =>
  Array.from({ length: to - from + 1 }, (_, i) => ({
    step: from + i,
    loss: loss(from + i),
    lr: 1e-3,
    tokensPerSec: 1000,
    gradNorm: 1,
  }));
export const send = (page, msg) => page.evaluate((m) => window.postMessage(m, '*'), msg);

export function assert(cond, what) {
  if (!cond) throw new Error(what);
}
export function close(a, b, rel, what) {
  assert(Math.abs(a - b) <= rel * Math.abs(b), `${what}: ${a} ≉ ${b}`);
}

// The payload builder runs in the page: Float32Arrays are made there (a 512-token message is
// 150 MB, which would not pass through CDP as JSON).
export const POST_ATTENTION = ({ S, T, L, H, kinds, fill, step }) => {
  const tok = (p, n) => Array.from({ length: n }, (_, i) => `${p}${i}`);
  const maps = kinds.map((kind) => {
    const q = kind === 'encoder_self' ? S : T;
    const k = kind === 'decoder_self' ? T : S;
    const w = new Float32Array(L * H * q * k);
    for (let m = 0; m < L * H; m++) {
      for (let r = 0; r < q; r++) {
        // A diagonal band plus noise, normalised per row; `fill` seeds differences between heads.
        let sum = 0;
        const o = (m * q + r) * k;
        for (let c = 0; c < k; c++) {
          const d = c - Math.round((r * k) / q) - (m % 5) + 2;
          const v = Math.exp(-(d * d) / (2 + (m % 3) * 4)) + fill * Math.random();
          w[o + c] = v;
          sum += v;
        }
        for (let c = 0; c < k; c++) w[o + c] /= sum;
      }
    }
    return { kind, shape: [L, H, q, k], weights: w };
  });
  window.postMessage(
    {
      type: 'attention',
      v: 3,
      source: { runDir: '/runs/test', step, input: 'probe' },
      srcTokens: tok('s', S),
      tgtTokens: tok('t', T),
      maps,
    },
    '*',
  );
};

// ---- tests and run -----------------------------------------------------------------------

const tests = [];
/** Registers a browser test (files under test/webview/browser/ call it at import). */
export const test = (name, fn) => tests.push({ name, fn });

/** Runs every registered test; prints `ok`/`FAIL` per test and `N passed, N failed`; exits non-zero on failure. */
export async function runAll() {
  let passed = 0;
  let failed = 0;
  let server;
  try {
    ensureChromium();
    mkdirSync(artifacts, { recursive: true });
    await buildWebview();
    ({ server, base } = await servePanels());
    const home = mkdtempSync(join(tmpdir(), 'webview-test-'));
    browser = await launchChromium(home);
    process.on('exit', () => rmSync(home, { recursive: true, force: true }));
    for (const t of tests) {
      if (grep && !t.name.includes(grep)) continue;
      const t0 = Date.now();
      try {
        await t.fn();
        passed++;
        console.log(`ok ${t.name} (${Date.now() - t0} ms)`);
      } catch (err) {
        failed++;
        console.log(
          `FAIL ${t.name}\n    ${String(err?.stack ?? err)
            .split('\n')
            .slice(0, 4)
            .join('\n    ')}`,
        );
      }
    }
  } catch (err) {
    failed++;
    console.log(`FAIL webview test setup: ${err?.stack ?? err}`);
  } finally {
    await browser?.close().catch(() => {});
    server?.close();
  }
  console.log(`webview tests: ${((Date.now() - started) / 1000).toFixed(1)} s, screenshots in ${artifacts}`);
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

/** Posts a head state whose snapshot weights are made Float32Arrays in the page. */
export async function headState(page, state) {
  await page.evaluate(
    ({ state, v }) => {
      const f32 = (a) => ({ ...a, maps: a.maps.map((m) => ({ ...m, weights: new Float32Array(m.weights) })) });
      window.postMessage(
        {
          type: 'state',
          v,
          state: { ...state, attention: state.attention && f32(state.attention), snapshots: state.snapshots.map(f32) },
        },
        '*',
      );
    },
    { state, v: V },
  );
}
