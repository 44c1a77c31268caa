// The Global Q/K view (issue 32 item 3, after AttentionViz): one head's queries and keys in 2-D,
// drawn with plotly's SVG scatter (scattergl needs eval, which the panels' CSP refuses). Checked as drawn, against a hand-made view: the traces hold the
// queries' and keys' coordinates, a query's dot is its token's hue on screen (a screenshot's pixel), colouring by position and by query/key recolours, hovering a point names its sentence
// and token, a click asks for that pair at the view's step, the slider asks for another step, and
// the header says run, head, step, basis and pairs. Dark and light, screenshots in test-artifacts/webview/.
import { join } from 'node:path';
import { V, artifacts, assert, hexRgb, openPanel, posted, send, test } from './harness.mjs';
import { decodePng } from './png.mjs';

const RUN = '/runs/reverse-micro';
// cross:0.1 of two pairs: queries are the target side (<s> first), keys the source side (</s> last).
// Queries on the line y = 0 at x = 0…5, keys on y = 3: far apart, so each is hovered and clicked alone.
const PAIRS = [
  { src: [4, 5, 2], tgt: [5, 4], srcTokens: ['4', '5', '</s>'], tgtTokens: ['<s>', '5', '4'] },
  { src: [6, 7, 2], tgt: [7, 6], srcTokens: ['6', '7', '</s>'], tgtTokens: ['<s>', '7', '6'] },
];
const side = (role) => PAIRS.flatMap((p, s) => (role === 'q' ? p.tgtTokens : p.srcTokens).map((t, i) => [s, i, t]));
const ALL = [...side('q').map((x) => ['q', ...x]), ...side('k').map((x) => ['k', ...x])];
const VIEW = {
  runDir: RUN,
  kind: 'cross',
  layer: 0,
  head: 1,
  step: 20,
  basisStep: 20,
  projection: 'pca',
  steps: [10, 20],
  pairs: PAIRS,
  points: {
    x: ALL.map((_, i) => i % 6),
    y: ALL.map(([r]) => (r === 'q' ? 0 : 3)),
    role: ALL.map(([r]) => r),
    sentence: ALL.map(([, s]) => s),
    position: ALL.map(([, , i]) => i),
    token: ALL.map(([, , , t]) => t),
  },
  explained: [0.6, 0.25],
  note: 'PCA fitted at step 20 on its 12 queries and keys',
};
// Token hues by hand: the view's tokens sorted as strings ('4' < … < '7' < '</s>' < '<s>'), the
// palette's first six (webview/global/plot.ts TOKEN_HUES).
const HUE = { 4: '#4e79a7', 5: '#f28e2b', 6: '#e15759', 7: '#76b7b2', '</s>': '#59a14f', '<s>': '#edc948' };
const HEADER = {
  runDir: RUN,
  run: 'reverse-micro',
  step: null,
  input: 'probe',
  live: false,
  checkpoints: [10, 20],
  vocab: true,
};
const state = (view) => ({
  type: 'state',
  v: V,
  state: {
    panel: 'global',
    header: HEADER,
    runDir: RUN,
    head: { kind: 'cross', layer: 0, head: 1 },
    view,
    busy: null,
    error: null,
  },
});

/** Where point i of the view is on the page (plotly's own axis maps). */
const pixelOf = (page, i) =>
  page.evaluate(
    ({ x, y }) => {
      const gd = document.getElementById('chart-global');
      const fl = gd._fullLayout;
      const r = gd.getBoundingClientRect();
      return [r.left + fl._size.l + fl.xaxis.l2p(x), r.top + fl._size.t + fl.yaxis.l2p(y)];
    },
    { x: VIEW.points.x[i], y: VIEW.points.y[i] },
  );

for (const theme of ['dark', 'light'])
  test(`Global Q/K view (${theme}): points, token colours on screen, hover, click and slider`, async () => {
    const page = await openPanel('global', { width: 1200, height: 900 }, theme);
    await send(page, state(VIEW));
    await page.waitForFunction(() => document.getElementById('chart-global').data?.length === 2, null, {
      timeout: 20_000,
    });
    const data = await page.evaluate(() =>
      document.getElementById('chart-global').data.map((d) => ({
        type: d.type,
        x: [...d.x],
        y: [...d.y],
        color: [...d.marker.color],
        symbol: d.marker.symbol,
      })),
    );
    assert(
      data.every((d) => d.type === 'scatter'),
      `types ${data.map((d) => d.type)}`,
    );
    const q = ALL.flatMap((p, i) => (p[0] === 'q' ? [i] : []));
    const k = ALL.flatMap((p, i) => (p[0] === 'k' ? [i] : []));
    assert(JSON.stringify(data[0].x) === JSON.stringify(q.map((i) => VIEW.points.x[i])), `queries' x ${data[0].x}`);
    assert(JSON.stringify(data[1].y) === JSON.stringify(k.map(() => 3)), `keys' y ${data[1].y}`);
    assert((await page.locator('.no-webgl').count()) === 0, 'no "WebGL is not supported" message');
    assert(data[0].symbol === 'circle' && data[1].symbol === 'circle-open', `symbols ${data.map((d) => d.symbol)}`);
    const wantQ = q.map((i) => HUE[VIEW.points.token[i]]);
    assert(JSON.stringify(data[0].color) === JSON.stringify(wantQ), `query hues ${data[0].color}, want ${wantQ}`);

    // On screen: the dot of query 4 (sentence 1's "7" at target position 1) is the hue of "7".
    const [px, py] = await pixelOf(page, 4);
    const png = decodePng(await page.screenshot({ path: join(artifacts, `global-${theme}-first.png`) }));
    const at = (Math.round(py) * png.width + Math.round(px)) * png.channels;
    const got = [...png.px.subarray(at, at + 3)];
    const want = hexRgb(HUE['7']);
    assert(
      got.every((c, j) => Math.abs(c - want[j]) <= 40),
      `pixel at query 4: ${got}, want ${want} (${HUE['7']})`,
    );

    // Hover names the sentence and token; the page hook hears it too.
    await page.mouse.move(px, py);
    await page.waitForFunction(() => document.querySelector('.hoverlayer .hovertext'), null, { timeout: 5000 });
    const hover = await page.evaluate(() => document.querySelector('.hoverlayer .hovertext').textContent);
    assert(hover.includes('sentence 1 · query “7” at target position 1'), `hover: ${hover}`);
    assert(hover.includes('6 7 </s> → 7 6'), `hover names the pair: ${hover}`);

    // A click asks for that pair at the view's step.
    await page.mouse.click(px, py);
    await page.waitForFunction(() => window.__posted.some((m) => m.type === 'openPair'), null, { timeout: 5000 });
    const open = (await posted(page, 'openPair')).at(-1);
    assert(open.sentence === 1 && open.step === 20, `openPair ${JSON.stringify(open)}`);

    // The header says run, head, step, basis and pairs.
    const header = await page.evaluate(() => document.getElementById('view-header').textContent);
    for (const part of [
      'reverse-micro',
      'cross:0.1',
      'step 20',
      'PCA basis of step 20',
      '2 validation pairs',
      '6 queries, 6 keys',
    ])
      assert(header.includes(part), `header "${header}" says ${part}`);
    await page.screenshot({ path: join(artifacts, `global-${theme}.png`) });

    // Colour by position: a scale over the positions; by query/key: the theme's first two chart colours.
    await page.selectOption('#colour-by', 'position');
    const pos = await page.evaluate(() => [...document.getElementById('chart-global').data[0].marker.color]);
    assert(JSON.stringify(pos) === JSON.stringify(q.map((i) => VIEW.points.position[i])), `positions ${pos}`);
    await page.selectOption('#colour-by', 'role');
    const roles = await page.evaluate(() => [
      ...document.getElementById('chart-global').data.map((d) => d.marker.color),
      getComputedStyle(document.documentElement).getPropertyValue('--vscode-charts-blue').trim(),
      getComputedStyle(document.documentElement).getPropertyValue('--vscode-charts-orange').trim(),
    ]);
    assert(roles[0] === (roles[2] || '#3794ff') && roles[1] === (roles[3] || '#d18616'), `role colours ${roles}`);

    // The slider: the other checkpoint is asked for.
    await page.evaluate(() => {
      const s = document.getElementById('step-slider');
      s.value = '0';
      s.dispatchEvent(new window.Event('change'));
    });
    const step = (await posted(page, 'globalStep')).at(-1);
    assert(step?.step === 10, `globalStep ${JSON.stringify(step)}`);
  });
