// The head inspector: entropy, top-k and the snapshot slider.
import { join } from 'node:path';
import { openPanel, assert, close, artifacts, test } from './harness.mjs';

test('the head inspector shows entropy, top-k and a snapshot slider that redraws the map', async () => {
  const page = await openPanel('head', { width: 1400, height: 1000 });
  const made = await page.evaluate(() => {
    const S = 4;
    const mk = (step, rows) => ({
      source: { runDir: '/runs/test', step, input: 'probe' },
      srcTokens: ['the', 'cat', 'sat', '.'],
      tgtTokens: ['die', 'Katze'],
      maps: [{ kind: 'encoder_self', shape: [1, 1, S, S], weights: new Float32Array(rows.flat()) }],
    });
    const uniform = Array.from({ length: S }, () => Array(S).fill(0.25));
    const sharp = [
      [0, 1, 0, 0],
      [0, 0, 1, 0],
      [0.1, 0.2, 0.3, 0.4],
      [0.5, 0.25, 0.25, 0],
    ];
    window.postMessage(
      {
        type: 'state',
        v: 3,
        state: {
          panel: 'head',
          header: null,
          head: { kind: 'encoder_self', layer: 0, head: 0 },
          attention: mk(200, sharp),
          snapshots: [mk(100, uniform)],
          losses: [],
          cursor: null,
        },
      },
      '*',
    );
    return true;
  });
  assert(made, 'posting state');
  await page.waitForFunction(
    () => document.body.dataset.drawnStep === '200' && document.getElementById('entropy').data,
  );
  const latest = await page.evaluate(() => ({
    ent: Array.from(document.getElementById('entropy').data[0].x),
    top: [...document.querySelectorAll('#topk tr')].map((tr) => [...tr.children].map((c) => c.textContent)),
    slider: [document.getElementById('step-slider').value, document.getElementById('step-slider').max],
  }));
  // Row entropies worked by hand: one-hot → 0; [.1,.2,.3,.4] → 1.27985; [.5,.25,.25,0] → 1.03972.
  const want = [
    0,
    0,
    -(0.1 * Math.log(0.1) + 0.2 * Math.log(0.2) + 0.3 * Math.log(0.3) + 0.4 * Math.log(0.4)),
    1.5 * Math.log(2),
  ];
  want.forEach((w, i) =>
    assert(Math.abs(latest.ent[i] - w) < 1e-6, `entropy of row ${i}: ${latest.ent[i]}, want ${w}`),
  );
  close(want[2], 1.27985, 1e-5, 'hand value');
  assert(
    latest.slider[0] === '1' && latest.slider[1] === '1',
    `slider at ${latest.slider} (want the newest of 2 frames)`,
  );
  // Top-3 of row 2 ([.1,.2,.3,.4] over the cat sat .): ., sat, cat.
  assert(
    latest.top[3][1].startsWith('. ‹3› 0.400') &&
      latest.top[3][2].startsWith('sat ‹2›') &&
      latest.top[3][3].startsWith('cat ‹1›'),
    `top-k row: ${latest.top[3]}`,
  );
  await page.screenshot({ path: join(artifacts, 'head-inspector.png'), fullPage: true });
  const before = await page.evaluate(() => document.getElementById('head-map').toDataURL());
  await page.locator('#step-slider').fill('0');
  await page.waitForFunction(() => document.body.dataset.drawnStep === '100');
  // The map is drawn at once; the entropy chart goes through plotly's queue, a moment later.
  await page
    .waitForFunction(
      () => document.getElementById('entropy').data?.[0]?.x?.every((e) => Math.abs(e - Math.log(4)) < 1e-6),
      null,
      { timeout: 10_000 },
    )
    .catch(() => undefined);
  const earlier = await page.evaluate(() => ({
    url: document.getElementById('head-map').toDataURL(),
    ent: Array.from(document.getElementById('entropy').data[0].x),
    state: window.__state,
  }));
  assert(earlier.url !== before, 'the map did not change with the slider');
  earlier.ent.forEach((e, i) => assert(Math.abs(e - Math.log(4)) < 1e-6, `uniform row ${i} entropy ${e}, want ln 4`));
  assert(earlier.state?.snapshotStep === 100, `setState got ${JSON.stringify(earlier.state)}`);
  // Every pixel of the uniform map has one colour.
  const flat = await page.evaluate(() => {
    const c = document.getElementById('head-map');
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    for (let i = 4; i < d.length; i += 4) if (d[i] !== d[0] || d[i + 1] !== d[1] || d[i + 2] !== d[2]) return false;
    return true;
  });
  assert(flat, 'a uniform map is not one colour');
  await page.close();
});

test('the head inspector writes key tokens across when each fits its column, else upwards', async () => {
  const page = await openPanel('head', { width: 1000, height: 800 });
  const show = (srcTokens) =>
    page.evaluate((src) => {
      const S = src.length;
      const weights = new Float32Array(S * S).fill(1 / S);
      const attention = {
        source: { runDir: '/runs/test', step: src.length, input: 'probe' },
        srcTokens: src,
        tgtTokens: ['a'],
        maps: [{ kind: 'encoder_self', shape: [1, 1, S, S], weights }],
      };
      const head = { kind: 'encoder_self', layer: 0, head: 0 };
      const state = { panel: 'head', header: null, head, attention, snapshots: [], losses: [], cursor: null };
      window.postMessage({ type: 'state', v: 3, state }, '*');
    }, srcTokens);
  // Each label's box, and whether its text is cut (wider than the box it is written in).
  const labels = () =>
    page.evaluate(() => {
      const row = document.querySelector('.key-labels');
      return {
        across: row.classList.contains('across'),
        spans: [...row.children].map((s) => {
          const across = getComputedStyle(s).writingMode === 'horizontal-tb';
          return { text: s.textContent, across, cut: s.scrollWidth > s.clientWidth + 1 };
        }),
      };
    });
  await show(['5', '6', '</s>', '7']);
  await page.waitForFunction(() => document.body.dataset.drawnStep === '4');
  let got = await labels();
  assert(got.across && got.spans.length === 4, `short tokens: ${JSON.stringify(got)}`);
  assert(
    got.spans.every((s) => s.across && !s.cut),
    `short tokens written across, none cut: ${JSON.stringify(got)}`,
  );
  // Four rows make a short entropy chart: its legend stays above the bars, none covered.
  await page.waitForFunction(() => document.getElementById('entropy').data?.[0]?.x?.length === 4);
  const entropy = await page.evaluate(() => {
    const gd = document.getElementById('entropy');
    const box = gd.getBoundingClientRect();
    const lg = gd.querySelector('.legend').getBoundingClientRect();
    return { plotTop: box.top + gd._fullLayout._size.t, legendBottom: lg.bottom };
  });
  assert(entropy.legendBottom <= entropy.plotTop + 1, `the legend covers the bars: ${JSON.stringify(entropy)}`);
  await page.screenshot({ path: join(artifacts, 'head-key-labels-across.png') });
  // Twelve keys, one a long word: a column is too narrow for it, so all run upwards.
  const long = ['x', ...Array.from({ length: 10 }, (_, i) => String(i)), 'Donaudampfschifffahrt'];
  await show(long);
  await page.waitForFunction(() => document.body.dataset.drawnStep === '12');
  got = await labels();
  assert(!got.across && got.spans.length === 12, `a long token: ${JSON.stringify(got)}`);
  assert(
    got.spans.every((s) => !s.across),
    `every label upwards: ${JSON.stringify(got.spans)}`,
  );
  await page.close();
});
