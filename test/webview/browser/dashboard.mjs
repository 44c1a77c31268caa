// The training dashboard: the planned LR curve of eq. 3, downsampled losses, exports, an export asked for at load.
import { join } from 'node:path';
import { D_MODEL, WARMUP, lrAt, openPanel, posted, send, assert, close, artifacts, test } from './harness.mjs';

test('the dashboard plots the planned LR curve with the shape of eq. 3, actual points on it, downsampled losses', async () => {
  const page = await openPanel('dashboard');
  const total = 20000;
  const steps = [1];
  for (let s = 100; s <= total; s += 100) steps.push(s);
  const points = steps.map((step) => ({ step, lr: lrAt(step) }));
  await send(page, { type: 'schedule', v: 3, totalSteps: total, warmupSteps: WARMUP, dModel: D_MODEL, points });
  // 6000 logged steps with one loss spike at step 3333 that downsampling must keep.
  const rows = [];
  for (let s = 1; s <= 6000; s++) {
    const row = {
      step: s,
      loss: 8 * Math.exp(-s / 1500) + 1.5 + 0.05 * Math.sin(s),
      lr: lrAt(s),
      tokensPerSec: 2000 + 100 * Math.sin(s / 50),
      gradNorm: 1 + 0.5 * Math.cos(s / 80),
    };
    if (s === 3333) row.loss = 42;
    if (s % 500 === 0) row.valLoss = row.loss + 0.2;
    rows.push(row);
  }
  // Sent in batches, as training streams them.
  for (let i = 0; i < rows.length; i += 1000)
    await send(page, { type: 'metrics', v: 3, rows: rows.slice(i, i + 1000) });
  await page.waitForFunction(
    () => {
      const d = document.getElementById('chart-loss').data;
      return d && d[0].x[d[0].x.length - 1] === 6000 && document.getElementById('chart-lr').data?.length === 2;
    },
    null,
    { timeout: 20000 },
  );
  const got = await page.evaluate(() => {
    const lr = document.getElementById('chart-lr');
    const loss = document.getElementById('chart-loss').data;
    const xa = lr._fullLayout.xaxis;
    const ya = lr._fullLayout.yaxis;
    // The drawn SVG path of the planned trace: its highest point must sit at step 4000.
    const path = lr.querySelectorAll('.scatterlayer .trace')[0].querySelector('path.js-line').getAttribute('d');
    return {
      planned: { x: Array.from(lr.data[0].x), y: Array.from(lr.data[0].y), name: lr.data[0].name },
      actual: { x: Array.from(lr.data[1].x), y: Array.from(lr.data[1].y) },
      xRange: xa.range,
      path,
      px4000: xa.d2p(4000),
      pxPeakY: ya.d2p(lr.data[0].y.reduce((a, b) => Math.max(a, b))),
      lossTraces: loss.length,
      lossN: loss[0].x.length,
      lossMax: Math.max(...loss[0].y),
      valN: loss[1]?.x.length,
    };
  });
  // The planned curve: eq. 3 worked by hand at three steps (0.0441941738 · …).
  const plannedAt = (s) => got.planned.y[got.planned.x.indexOf(s)];
  close(plannedAt(1), 1.74693e-7, 1e-5, 'planned lr at step 1');
  close(plannedAt(4000), 6.98771e-4, 1e-5, 'planned lr at step 4000 (peak)');
  close(plannedAt(16000), 3.49386e-4, 1e-5, 'planned lr at step 16000 (half the peak)');
  assert(
    got.planned.x.length === points.length,
    `planned trace has ${got.planned.x.length} points, sent ${points.length}`,
  );
  // Shape: linear warmup (y ∝ x) then ∝ x^-0.5 through the whole run, drawn ahead of training.
  for (let i = 1; i < got.planned.x.length; i++) {
    const [x0, x1, y0, y1] = [got.planned.x[i - 1], got.planned.x[i], got.planned.y[i - 1], got.planned.y[i]];
    if (x1 <= WARMUP) close(y1 / y0, x1 / x0, 1e-6, `warmup is linear between ${x0} and ${x1}`);
    if (x0 >= WARMUP) close(y1 / y0, Math.sqrt(x0 / x1), 1e-6, `decay is ∝ step^-0.5 between ${x0} and ${x1}`);
  }
  assert(
    got.planned.x[got.planned.x.length - 1] === total && got.xRange[1] >= total * 0.99,
    `x axis ends at ${got.xRange[1]}, the run at ${total}`,
  );
  // The SVG path: the topmost vertex is at x = step 4000.
  const verts = [...got.path.matchAll(/[ML]([\d.eE+-]+),([\d.eE+-]+)/g)].map((m) => [Number(m[1]), Number(m[2])]);
  const top = verts.reduce((a, b) => (b[1] < a[1] ? b : a));
  assert(verts.length >= 10, `planned path has ${verts.length} vertices`);
  assert(
    Math.abs(top[0] - got.px4000) <= 1.5 && Math.abs(top[1] - got.pxPeakY) <= 1.5,
    `path peaks at (${top}), step 4000 is at x=${got.px4000}`,
  );
  // Actual points lie on the plan (the engine logs the lr it used).
  for (let i = 0; i < got.actual.x.length; i += 97)
    close(got.actual.y[i], lrAt(got.actual.x[i]), 1e-9, `actual lr at step ${got.actual.x[i]}`);
  assert(got.actual.x.length <= 1500, `actual lr trace has ${got.actual.x.length} points`);
  // Loss: train and validation traces; 6000 points cut to ≤ 1500 and the spike kept.
  assert(got.lossTraces === 2 && got.valN === 12, `loss traces ${got.lossTraces}, validation points ${got.valN}`);
  assert(got.lossN <= 1500 && got.lossN >= 1000, `train loss shows ${got.lossN} points`);
  assert(got.lossMax === 42, `the loss spike was lost: max shown ${got.lossMax}`);
  // The page uses SVG traces only (scattergl needs unsafe-eval).
  assert((await page.locator('.gl-container canvas').count()) === 0, 'a WebGL trace was drawn');
  // Exports: CSV of every logged row.
  await page.click('button:has-text("Export CSV")');
  const csv = (await posted(page, 'export')).find((m) => m.format === 'csv');
  assert(
    csv &&
      csv.text.split('\n')[0] === 'step,loss,lr,tokensPerSec,gradNorm,valLoss,valBleu' &&
      csv.text.trim().split('\n').length === 6001,
    'CSV export',
  );
  // The Export View command's image request: the loss chart comes back as PNG and as SVG data: URLs.
  for (const format of ['png', 'svg']) {
    await send(page, { type: 'exportImage', v: 3, format });
    await page.waitForFunction(
      (f) => window.__posted.some((m) => m.type === 'export' && m.format === f && m.dataUrl),
      format,
      { timeout: 20000 },
    );
  }
  const images = (await posted(page, 'export')).filter((m) => m.dataUrl);
  assert(
    images.find((m) => m.format === 'png').dataUrl.startsWith('data:image/png;base64,iVBORw0KGgo'),
    'PNG export is a PNG',
  );
  assert(
    /^data:image\/svg\+xml,.*%3Csvg|^data:image\/svg\+xml,.*<svg/.test(
      images.find((m) => m.format === 'svg').dataUrl.slice(0, 400),
    ),
    'SVG export is SVG',
  );
  await page.screenshot({ path: join(artifacts, 'dashboard.png'), fullPage: true });
  // Zoom survives a live update (fixed uirevision).
  await page.evaluate(() => Plotly.relayout(document.getElementById('chart-loss'), { 'xaxis.range': [1000, 2000] }));
  await send(page, {
    type: 'metrics',
    v: 3,
    rows: [{ step: 6001, loss: 1.5, lr: lrAt(6001), tokensPerSec: 2000, gradNorm: 1 }],
  });
  await page.waitForFunction(() => document.getElementById('chart-loss').data[0].x.at(-1) === 6001);
  const range = await page.evaluate(() => document.getElementById('chart-loss')._fullLayout.xaxis.range);
  assert(range[0] === 1000 && range[1] === 2000, `zoom lost after an update: x range ${range}`);
  await page.close();
});

test('an image asked for as the page loads (a webview shown again) has the data sent before it', async () => {
  // A hidden webview is torn down and reloads when shown; VS Code then delivers the messages it
  // queued (state, exportImage) right after the page says ready, before it has painted a frame.
  const rows = [1, 2, 3, 4].map((step) => ({ step, loss: 10 - step, lr: lrAt(step), tokensPerSec: 1000, gradNorm: 1 }));
  const queued = [
    {
      type: 'state',
      v: 3,
      state: { panel: 'dashboard', header: null, rows, schedule: null, cursor: null, events: [] },
    },
    { type: 'exportImage', v: 3, format: 'svg' },
  ];
  const page = await openPanel(
    'dashboard',
    undefined,
    'dark',
    (messages) => {
      const api = window.acquireVsCodeApi;
      window.acquireVsCodeApi = () => {
        const vscode = api();
        const postMessage = vscode.postMessage;
        vscode.postMessage = (m) => {
          postMessage(m);
          if (m.type === 'ready') for (const q of messages) window.postMessage(q, '*');
        };
        return vscode;
      };
    },
    queued,
  );
  await page.waitForFunction(
    () => window.__posted.some((m) => (m.type === 'export' && m.dataUrl) || m.type === 'error'),
    null,
    { timeout: 20000 },
  );
  const [reply] = await page.evaluate(() => window.__posted.filter((m) => m.type === 'export' || m.type === 'error'));
  assert(reply.type === 'export', `the panel answered ${JSON.stringify(reply)}`);
  const svg = decodeURIComponent(reply.dataUrl.slice(reply.dataUrl.indexOf(',') + 1));
  const traces = svg.match(/class="trace scatter/g) ?? [];
  assert(traces.length === 1, `one train-loss trace in the exported SVG, found ${traces.length}`);
  // A page that survived being hidden is pinged by the extension and must say ready again.
  await send(page, { type: 'ping', v: 3 });
  await page.waitForFunction(() => window.__posted.filter((m) => m.type === 'ready').length === 2, null, {
    timeout: 10000,
  });
  await page.close();
});

test('before its first step each chart says so, with no made-up axes; the LR chart shows the plan', async () => {
  const page = await openPanel('dashboard', { width: 1200, height: 900 }, 'light');
  const header = {
    runDir: '/runs/new',
    run: 'new',
    step: null,
    input: 'probe',
    live: true,
    checkpoints: [],
    vocab: true,
  };
  const state = (rows) => ({
    type: 'state',
    v: 3,
    state: { panel: 'dashboard', header, rows, schedule: null, cursor: null, events: [] },
  });
  const charts = () =>
    page.evaluate(() =>
      ['loss', 'lr', 'tps', 'grad'].map((name) => {
        const gd = document.getElementById(`chart-${name}`);
        const l = gd._fullLayout;
        const notes = (l.annotations ?? []).map((a) => a.text);
        return { name, x: l.xaxis.visible, y: l.yaxis.visible, notes, ticks: gd.querySelectorAll('.xtick').length };
      }),
    );
  await send(page, state([]));
  const points = [1, 100, 400].map((step) => ({ step, lr: lrAt(step) }));
  await send(page, { type: 'schedule', v: 3, totalSteps: 400, warmupSteps: WARMUP, dModel: D_MODEL, points });
  await page.waitForFunction(() => document.getElementById('chart-lr').data?.[0]?.x.length === 3);
  let got = await charts();
  for (const c of got.filter((c) => c.name !== 'lr'))
    assert(
      !c.x && !c.y && c.ticks === 0 && c.notes.join() === 'No steps logged yet',
      `${c.name} before the first step: ${JSON.stringify(c)}`,
    );
  const lr = got.find((c) => c.name === 'lr');
  assert(lr.x && lr.y && lr.ticks > 0 && !lr.notes.includes('No steps logged yet'), `lr: ${JSON.stringify(lr)}`);
  // Warmup (4,000) past the planned 400 steps: the peak is the last step, and its note is drawn left
  // of the line, inside the chart, not cut at its right edge.
  const note = await page.evaluate(() => {
    const gd = document.getElementById('chart-lr');
    const a = [...gd.querySelectorAll('.annotation')].find((e) => e.textContent.includes('warmup ends'));
    const r = a.getBoundingClientRect();
    const line = gd._fullLayout.xaxis.d2p(400) + gd._fullLayout._size.l + gd.getBoundingClientRect().left;
    const chart = gd.getBoundingClientRect();
    return { left: r.left, right: r.right, chartLeft: chart.left, chartRight: chart.right, line };
  });
  assert(
    note.right <= note.line && note.left >= note.chartLeft && note.right <= note.chartRight,
    `the warmup note left of its line, inside the chart: ${JSON.stringify(note)}`,
  );
  await page.screenshot({ path: join(artifacts, 'dashboard-before-first-step.png') });

  // The first step: every chart draws its axes, and the note is gone.
  await send(page, {
    type: 'metrics',
    v: 3,
    rows: [{ step: 1, loss: 7.1, lr: lrAt(1), tokensPerSec: 900, gradNorm: 2 }],
  });
  await page.waitForFunction(() => document.getElementById('chart-grad').data?.[0]?.x.length === 1);
  got = await charts();
  for (const c of got)
    assert(c.x && c.y && c.ticks > 0 && !c.notes.includes('No steps logged yet'), `${c.name}: ${JSON.stringify(c)}`);
  await page.close();
});
