// The inspector's Compare card: a head's difference map between two snapshots in a diverging
// scale, in the right cells, and every head ranked by its Jensen–Shannon divergence.
import { join } from 'node:path';
import { V, artifacts, assert, headState, metricRows, openPanel, panelHeader, posted, send, test } from './harness.mjs';

const source = (step) => ({ runDir: '/runs/cmp', step, input: 'probe' });
/** Encoder self-attention, 1 layer × 2 heads over 2 tokens: head 1 as given, head 2 fixed. */
const snap = (step, head1) => ({
  source: source(step),
  srcTokens: ['a', '</s>'],
  tgtTokens: ['<s>', 'x'],
  maps: [{ kind: 'encoder_self', shape: [1, 2, 2, 2], weights: [...head1, 0.5, 0.5, 0.5, 0.5] }],
});
const HEADER = panelHeader('/runs/cmp', []);

test('Compare draws B − A of the head in a diverging scale and ranks the heads by JS divergence', async () => {
  const page = await openPanel('head');
  const shown = snap(300, [1, 0, 0, 1]);
  await headState(page, {
    panel: 'head',
    header: HEADER,
    head: { kind: 'encoder_self', layer: 0, head: 0 },
    attention: shown,
    snapshots: [snap(100, [0.5, 0.5, 0, 1]), shown],
    losses: [],
    cursor: null,
  });
  await page.waitForFunction(() => document.body.dataset.drawnStep === '300');
  await page.selectOption('#compare-step', '100');
  await page.waitForFunction(() => !document.getElementById('diff-map').hidden);
  // Step 100 − step 300: [[−.5, +.5], [0, 0]]; ±.5 are the scale's ends, 0 its middle.
  const at = (r, c) =>
    page.evaluate(
      ({ r, c }) => {
        const cv = document.getElementById('diff-map');
        const d = cv.getContext('2d').getImageData(((c + 0.5) * cv.width) / 2, ((r + 0.5) * cv.height) / 2, 1, 1).data;
        return [d[0], d[1], d[2]];
      },
      { r, c },
    );
  const want = [
    [0, 0, [33, 102, 172]],
    [0, 1, [178, 24, 43]],
    [1, 0, [247, 247, 247]],
    [1, 1, [247, 247, 247]],
  ];
  for (const [r, c, rgb] of want) {
    const got = await at(r, c);
    assert(
      got.every((v, i) => Math.abs(v - rgb[i]) <= 2),
      `cell [${r}, ${c}] rgb(${got}), want rgb(${rgb})`,
    );
  }
  const ranked = await page.locator('#compare-ranking li').allInnerTexts();
  // Head 1 changed in its first row only: (JS([1, 0], [.5, .5]) + 0) / 2 = 0.2157616 / 2; head 2 not at all.
  assert(ranked.join(' | ') === 'encoder_self:0.0: 0.1079 | encoder_self:0.1: 0.0000', ranked.join(' | '));
  const note = await page.locator('#compare-note').innerText();
  assert(note.includes('step 100 − step 300') && note.includes('JS divergence 0.1079'), note);
  await page.screenshot({ path: join(artifacts, 'head-compare.png'), fullPage: true });
  await page.click('#compare-ranking li >> nth=1');
  const [open] = await posted(page, 'openHead');
  assert(open && open.kind === 'encoder_self' && open.layer === 0 && open.head === 1, JSON.stringify(open));
  await page.close();
});

test('Compare Runs draws another run on each chart from its own first step, named in the legend', async () => {
  const page = await openPanel('dashboard');
  await send(page, {
    type: 'state',
    v: V,
    state: {
      panel: 'dashboard',
      header: HEADER,
      rows: metricRows(1, 100, (s) => 3 - s / 100),
      schedule: null,
      cursor: null,
      events: [],
    },
  });
  // A fork of this run from step 50, logged from step 51 on.
  await send(page, {
    type: 'overlay',
    v: V,
    runs: [{ run: 'fork', runDir: '/runs/fork', rows: metricRows(51, 120, () => 1.5) }],
  });
  const traces = () =>
    page.evaluate(() =>
      Object.fromEntries(
        ['loss', 'lr', 'tps', 'grad'].map((c) => [
          c,
          document.getElementById(`chart-${c}`).data.map((d) => ({ name: d.name, x0: d.x[0], n: d.x.length })),
        ]),
      ),
    );
  let t = await traces();
  for (let i = 0; i < 50 && !t.loss.some((d) => d.name === 'fork: train'); i++) {
    await page.waitForTimeout(100);
    t = await traces();
  }
  const fork = t.loss.find((d) => d.name === 'fork: train');
  assert(fork && fork.x0 === 51 && fork.n === 70, `fork's loss trace: ${JSON.stringify(t.loss)}`);
  assert(t.loss.find((d) => d.name === 'train')?.x0 === 1, 'the selected run from step 1');
  for (const c of ['lr', 'tps', 'grad'])
    assert(
      t[c].some((d) => d.name.startsWith('fork: ') && d.x0 === 51),
      `${c}: ${JSON.stringify(t[c])}`,
    );
  const legend = await page.evaluate(() => document.getElementById('chart-grad')._fullLayout.showlegend);
  assert(legend === true, 'a legend names the runs');
  await page.screenshot({ path: join(artifacts, 'dashboard-overlay.png') });
  await send(page, { type: 'overlay', v: V, runs: [] });
  await page.waitForFunction(() => !document.getElementById('chart-loss').data.some((d) => d.name.startsWith('fork')));
  await page.close();
});
