// Telemetry as drawn: the Heads panel's heads × steps map (viridis of known values, sorting, the
// marks of findings, hover and click), the dashboard's findings (markers, the Problems list) and
// the role labels under the attention view's thumbnails.
import { join } from 'node:path';
import { V, VIRIDIS, artifacts, assert, hexRgb, openPanel, panelHeader, posted, send, test } from './harness.mjs';

const HEADER = panelHeader('/runs/reverse-tiny', [10, 20, 30]);
// entropy_norm of two heads at three steps, spanning 0…1 so each value is its own viridis position.
const ENC = [0, 0.5, 0.25];
const CROSS = [1, 0.125, 0.75];
const TELEMETRY = [10, 20, 30].map((step, i) => ({
  step,
  pairs: 4,
  heads: ['encoder_self:0.0', 'cross:0.0'],
  stats: { entropy_norm: [ENC[i], CROSS[i]], confidence: [0.5, 0.5] },
}));
const WARNING = {
  step: 20,
  check: 'entropy_collapse',
  message: 'its normalised entropy fell to 0.125',
  head: 'cross:0.0',
  value: 0.125,
  severity: 'warning',
};
const BREAK = {
  step: 30,
  check: 'loss_spike',
  message: 'loss 40 is 30× the median',
  value: 40,
  severity: 'breakpoint',
};

/** Asks the page what it drew (the reportDrawn the VS Code tests use) and returns its answer. */
async function drawnOf(page, cells = []) {
  const before = (await posted(page, 'drawn')).length;
  await send(page, { type: 'reportDrawn', v: V, cells });
  await page.waitForFunction((n) => window.__posted.filter((m) => m.type === 'drawn').length > n, before);
  return (await posted(page, 'drawn'))[before];
}

const near = (got, want, what) =>
  assert(got && want.every((c, i) => Math.abs(got[i] - c) <= 3), `${what}: drew ${got}, want ${want}`);

test('the Heads panel draws each head’s statistic per step in viridis, sorts, marks findings and opens a cell', async () => {
  const page = await openPanel('heads');
  await send(page, {
    type: 'state',
    v: V,
    state: { panel: 'heads', header: HEADER, telemetry: TELEMETRY, events: [WARNING], cursor: null },
  });
  await page.waitForFunction(() => document.body.dataset.drawnCols === '3');
  const enc = (k) => ({ kind: 'encoder_self', layer: 0, head: 0, q: 0, k });
  const cross = (k) => ({ kind: 'cross', layer: 0, head: 0, q: 0, k });
  let d = await drawnOf(page, [enc(0), enc(1), cross(0), cross(1), cross(2)]);
  near(d.colors[0], hexRgb(VIRIDIS[0]), 'encoder at step 10 (0)');
  near(d.colors[1], hexRgb(VIRIDIS[0.5]), 'encoder at step 20 (0.5)');
  near(d.colors[2], hexRgb(VIRIDIS[1]), 'cross at step 10 (1)');
  near(d.colors[3], [0xcc, 0xa7, 0], 'the warning’s marker on cross at step 20');
  assert(d.marks.includes('entropy_collapse@20'), `marks ${d.marks}`);
  assert(d.run === 'reverse-tiny' && d.frames === 3, `header ${d.run}, ${d.frames} columns`);
  const labels = () => page.locator('.heads-labels div').allInnerTexts();
  assert((await labels()).join() === 'encoder_self:0.0,cross:0.0', `name order: ${await labels()}`);
  await page.locator('#sort').selectOption('latest'); // cross ends at 0.75, encoder at 0.25
  assert((await labels()).join() === 'cross:0.0,encoder_self:0.0', `by latest value: ${await labels()}`);
  await page.locator('#kind').selectOption('encoder_self');
  assert((await labels()).join() === 'encoder_self:0.0', `encoder only: ${await labels()}`);
  await page.locator('#kind').selectOption('');
  await page.locator('#stat').selectOption('confidence');
  d = await drawnOf(page, [cross(2)]);
  assert(d.maps[0].kind === 'confidence', `statistic drawn: ${d.maps[0].kind}`);
  await page.locator('#stat').selectOption('entropy_norm');
  await page.locator('#sort').selectOption('name');
  // The cell of cross:0.0 (row 1) at step 30 (column 2): hover it, then click it.
  const box = await page.locator('#heads-map').boundingBox();
  const at = { x: (2.5 * box.width) / 3, y: (1.5 * box.height) / 2 };
  await page.mouse.move(box.x + at.x, box.y + at.y);
  await page.waitForFunction(() => window.__posted.some((m) => m.type === 'hoverStep' && m.step === 30));
  assert((await page.locator('#readout').innerText()).includes('cross:0.0 · step 30'), 'readout of the hovered cell');
  await page.screenshot({ path: join(artifacts, 'heads.png') });
  await page.locator('#heads-map').click({ position: at });
  const opened = await posted(page, 'openHeadAt');
  const { kind, layer, head, step } = opened.at(-1) ?? {};
  assert(
    JSON.stringify([kind, layer, head, step]) === JSON.stringify(['cross', 0, 0, 30]),
    `posted ${JSON.stringify(opened)}`,
  );
  // Hovering a step on the dashboard reaches this panel as hoverStep.
  await send(page, { type: 'hoverStep', v: V, step: 10 });
  d = await drawnOf(page);
  assert(d.marks.includes('hover@10'), `marks ${d.marks}`);
  await page.close();
});

test('the Heads panel without telemetry says when rows arrive', async () => {
  const page = await openPanel('heads');
  await send(page, {
    type: 'state',
    v: V,
    state: { panel: 'heads', header: HEADER, telemetry: [], events: [], cursor: null },
  });
  await page.waitForFunction(() => document.getElementById('status').textContent.includes('telemetry_every'));
  await page.close();
});

test('the dashboard marks findings on the loss curve and lists them; a problem opens its head at its step', async () => {
  const page = await openPanel('dashboard');
  const rows = Array.from({ length: 40 }, (_, i) => ({
    step: i + 1,
    loss: 5 - i * 0.1,
    lr: 1e-4,
    tokensPerSec: 1000,
    gradNorm: 1,
  }));
  await send(page, {
    type: 'state',
    v: V,
    state: { panel: 'dashboard', header: HEADER, rows, schedule: null, cursor: null, events: [WARNING] },
  });
  await send(page, { type: 'events', v: V, events: [BREAK] });
  await page.waitForFunction(() => document.querySelectorAll('#problems li').length === 2);
  const items = await page.locator('#problems li').allInnerTexts();
  assert(items[0].includes('step 30 · loss_spike'), `newest first: ${items}`);
  assert(items[1].includes('step 20 · entropy_collapse · cross:0.0'), `with its head: ${items}`);
  // The loss chart carries one dashed line and one flag per finding, coloured by severity.
  await page.waitForFunction(() => document.querySelectorAll('#chart-loss .annotation').length === 2);
  const flags = await page.locator('#chart-loss .annotation-text').allTextContents();
  assert(flags.sort().join() === '■,▲', `flags ${flags}`);
  const d = await drawnOf(page);
  assert(d.marks.join() === 'entropy_collapse@20,loss_spike@30', `marks ${d.marks}`);
  // A constant learning rate of 1e-4 reads as 1e-4: its axis runs from 0 to just above it, where
  // plotly's own range for a constant (value ± 1) drew it on the 0 line.
  const lrRange = await page.evaluate(() => document.getElementById('chart-lr')._fullLayout.yaxis.range);
  assert(lrRange[0] === 0 && lrRange[1] > 1e-4 && lrRange[1] < 2e-4, `lr axis ${lrRange}`);
  await page.screenshot({ path: join(artifacts, 'dashboard-problems.png') });
  await page.locator('#problems li').nth(1).click();
  await page.locator('#problems li').nth(0).click();
  const heads = await posted(page, 'openHeadAt');
  assert(
    heads.length === 1 && heads[0].kind === 'cross' && heads[0].step === 20,
    `openHeadAt ${JSON.stringify(heads)}`,
  );
  const cursors = await posted(page, 'cursor');
  assert(cursors.at(-1)?.step === 30, `a finding without a head moves the cursor: ${JSON.stringify(cursors)}`);
  await send(page, { type: 'hoverStep', v: V, step: 12 });
  await page.waitForFunction(() =>
    document.getElementById('chart-loss').layout.shapes.some((s) => s.x0 === 12 && s.line.dash === 'dot'),
  );
  // A divergence says why in a long sentence: in a narrow panel it wraps and every word is on screen.
  const why =
    'the loss diverged: its median over the last 20 steps (125573.574) is 50190.4× its early level ' +
    '(2.502, the lowest of the first 10 steps). Lower the learning rate or resume from step 10.';
  await send(page, {
    type: 'events',
    v: V,
    events: [{ step: 35, check: 'divergence', message: why, severity: 'warning' }],
  });
  await page.setViewportSize({ width: 480, height: 800 });
  await page.waitForFunction(() => document.querySelectorAll('#problems li').length === 3);
  const long = await page.evaluate(() => {
    const li = document.querySelector('#problems li');
    const r = li.getBoundingClientRect();
    return { text: li.innerText, scroll: li.scrollWidth, client: li.clientWidth, lines: r.height / 16 };
  });
  assert(long.text.includes(why), `the finding says all of it: ${long.text}`);
  assert(long.scroll <= long.client && long.lines > 2, `it wraps: ${JSON.stringify(long)}`);
  await page.screenshot({ path: join(artifacts, 'dashboard-problem-wraps.png') });
  await page.close();
});

test('the attention view names each head’s roles under its thumbnail', async () => {
  const page = await openPanel('attention');
  await page.evaluate((v) => {
    const eye = new Float32Array(16);
    for (let i = 0; i < 4; i++) eye[i * 5] = 1;
    window.postMessage(
      {
        type: 'attention',
        v,
        source: { runDir: '/runs/reverse-tiny', step: 30, input: 'probe' },
        srcTokens: ['a', 'b', 'c', 'd'],
        tgtTokens: ['<s>'],
        maps: [{ kind: 'encoder_self', shape: [1, 2, 4, 4], weights: new Float32Array([...eye, ...eye]) }],
        roles: [{ head: 'encoder_self:0.1', roles: ['diagonal', 'local'] }],
      },
      '*',
    );
  }, V);
  await page.waitForFunction(() => document.body.dataset.renderDone);
  const labels = await page.locator('.role-label').allInnerTexts();
  assert(labels.join('|') === '|diagonal · local', `role labels ${JSON.stringify(labels)}`);
  const title = await page.locator('canvas.thumb[data-head="1"]').getAttribute('title');
  assert(title.endsWith('· diagonal, local'), `tooltip ${title}`);
  const d = await drawnOf(page);
  assert(d.marks.join() === 'encoder_self:0.1 diagonal,encoder_self:0.1 local', `marks ${d.marks}`);
  await page.close();
});
