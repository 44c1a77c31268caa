// Every panel: loads under its CSP, follows the theme; the positional view; no console or CSP errors.
import { join } from 'node:path';
import {
  V,
  hexRgb,
  D_MODEL,
  WARMUP,
  lrAt,
  openPanel,
  posted,
  send,
  assert,
  close,
  POST_ATTENTION,
  artifacts,
  problems,
  DARK_THEME,
  LIGHT_THEME,
  test,
} from './harness.mjs';

test('each panel loads under its CSP and posts ready with its name', async () => {
  for (const panel of ['dashboard', 'attention', 'head', 'positional']) {
    const page = await openPanel(panel);
    const ready = await posted(page, 'ready');
    assert(
      ready.length === 1 && ready[0].panel === panel && ready[0].v === V,
      `${panel} posted ${JSON.stringify(ready)}`,
    );
    const hasPlotly = await page.evaluate(
      () => typeof window.Plotly === 'object' && typeof window.Plotly.react === 'function',
    );
    assert(hasPlotly, `${panel}: plotly did not load from node_modules`);
    await page.close();
  }
});

test('the positional view draws the PE matrix as a heatmap', async () => {
  const page = await openPanel('positional');
  await page.evaluate(() => {
    const n = 64;
    const d = 32;
    const v = new Float32Array(n * d);
    for (let p = 0; p < n; p++)
      for (let i = 0; i < d; i += 2) {
        const a = p / 10000 ** (i / d);
        v[p * d + i] = Math.sin(a);
        v[p * d + i + 1] = Math.cos(a);
      }
    window.postMessage({ type: 'positional', v: 3, shape: [n, d], values: v }, '*');
  });
  await page.waitForFunction(() => document.getElementById('pe').data);
  const z = await page.evaluate(() => document.getElementById('pe').data[0].z);
  assert(z.length === 64 && z[0].length === 32, `heatmap is ${z.length}×${z[0].length}`);
  close(z[1][0], Math.sin(1), 1e-6, 'PE(1, 0) = sin 1');
  assert(z[0][1] === 1, 'PE(0, 1) = cos 0');
  await page.screenshot({ path: join(artifacts, 'positional.png') });
  await page.close();
});

test('panels follow the VS Code theme (dark and light): text, background and plotly colours', async () => {
  for (const [theme, vars] of [
    ['dark', DARK_THEME],
    ['light', LIGHT_THEME],
  ]) {
    const page = await openPanel('dashboard', { width: 1400, height: 900 }, theme);
    await send(page, {
      type: 'schedule',
      v: 3,
      totalSteps: 8000,
      warmupSteps: WARMUP,
      dModel: D_MODEL,
      points: [1, 1000, 2000, 4000, 6000, 8000].map((step) => ({ step, lr: lrAt(step) })),
    });
    await send(page, {
      type: 'metrics',
      v: 3,
      rows: Array.from({ length: 3000 }, (_, i) => ({
        step: i + 1,
        loss: 6 * Math.exp(-i / 800) + 1.8,
        lr: lrAt(i + 1),
        tokensPerSec: 1500,
        gradNorm: 1.2,
      })),
    });
    await page.waitForFunction(() => document.getElementById('chart-loss').data?.[0]?.x.length > 0);
    const got = await page.evaluate(() => {
      const gd = document.getElementById('chart-loss');
      const cs = getComputedStyle(document.body);
      return {
        bg: cs.backgroundColor,
        fg: cs.color,
        paper: gd._fullLayout.paper_bgcolor,
        font: gd._fullLayout.font.color,
      };
    });
    const rgb = (hex) => `rgb(${hexRgb(hex).join(', ')})`;
    assert(
      got.bg === rgb(vars['--vscode-editor-background']) && got.fg === rgb(vars['--vscode-editor-foreground']),
      `${theme}: body ${got.fg} on ${got.bg}`,
    );
    assert(
      got.paper === vars['--vscode-editor-background'] && got.font === vars['--vscode-editor-foreground'],
      `${theme}: plotly ${got.font} on ${got.paper}`,
    );
    await page.screenshot({ path: join(artifacts, `dashboard-${theme}.png`) });
    await page.close();
  }
  const page = await openPanel('attention', { width: 1400, height: 900 }, 'light');
  await page.evaluate(POST_ATTENTION, {
    S: 9,
    T: 7,
    L: 2,
    H: 4,
    kinds: ['encoder_self', 'decoder_self', 'cross'],
    fill: 0.05,
    step: 300,
  });
  await page.waitForFunction(() => document.body.dataset.renderDone);
  await page.click('canvas.thumb[data-kind="encoder_self"][data-layer="1"][data-head="1"]');
  await page.waitForFunction(() => document.getElementById('detail').data?.[0]?.type === 'heatmap');
  await page.waitForTimeout(300);
  await page.screenshot({ path: join(artifacts, 'attention-light.png') });
  await page.close();
});

test('no CSP violations, console errors or page errors on any page', async () => {
  assert(problems.length === 0, problems.slice(0, 5).join('\n'));
});
