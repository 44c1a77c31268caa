// The attention view's "across heads" row: the mean of a layer's heads, the mean of all, rollout
// and flow, drawn in viridis in the right cells, and exported as JSON.
import { join } from 'node:path';
import { POST_ATTENTION, V, VIRIDIS, artifacts, assert, hexRgb, openPanel, posted, test } from './harness.mjs';

test('the across-heads row draws the mean of the heads, rollout and flow, and exports them', async () => {
  const page = await openPanel('attention');
  // Encoder self-attention, 1 layer × 2 heads over 3 tokens: head 1 the identity, head 2 all on key 0.
  // Mean: [[1, 0, 0], [.5, .5, 0], [.5, 0, .5]]; rollout = ½·mean + ½·I = [[1, 0, 0], [.25, .75, 0], [.25, 0, .75]].
  const eye = [1, 0, 0, 0, 1, 0, 0, 0, 1];
  const first = [1, 0, 0, 1, 0, 0, 1, 0, 0];
  await page.evaluate(
    ({ w, v }) =>
      window.postMessage(
        {
          type: 'attention',
          v,
          source: { runDir: '/runs/agg', step: 9, input: 'probe' },
          srcTokens: ['a', 'b', '</s>'],
          tgtTokens: ['<s>'],
          maps: [{ kind: 'encoder_self', shape: [1, 2, 3, 3], weights: new Float32Array(w) }],
        },
        '*',
      ),
    { w: [...eye, ...first], v: V },
  );
  await page.waitForFunction(() => document.body.dataset.renderDone);
  const names = await page.$$eval('canvas.aggregate', (cs) => cs.map((c) => c.dataset.aggregate));
  assert(names.join(',') === 'mean L0,mean all,rollout,flow', `aggregates drawn: ${names}`);
  const cell = (name, r, c) =>
    page.evaluate(
      ({ name, r, c }) => {
        const cv = document.querySelector(`canvas.aggregate[data-aggregate="${name}"]`);
        const d = cv.getContext('2d').getImageData(((c + 0.5) * cv.width) / 3, ((r + 0.5) * cv.height) / 3, 1, 1).data;
        return [d[0], d[1], d[2]];
      },
      { name, r, c },
    );
  const near = (got, hex) => hexRgb(hex).every((v, i) => Math.abs(v - got[i]) <= 3);
  // Each map scaled to its maximum (1): 1 → top, .5 → middle, 0 → bottom of viridis.
  for (const [name, r, c, w] of [
    ['mean L0', 0, 0, 1],
    ['mean L0', 1, 0, 0.5],
    ['mean L0', 1, 2, 0],
    ['rollout', 1, 2, 0],
    ['rollout', 0, 0, 1],
  ]) {
    const got = await cell(name, r, c);
    assert(near(got, VIRIDIS[w]), `${name} [${r}, ${c}] (${w}) drawn rgb(${got}), want ${VIRIDIS[w]}`);
  }
  await page.click('.aggregate-head button');
  await page.waitForFunction(() => window.__posted.some((m) => m.type === 'export'));
  const [exp] = await posted(page, 'export');
  const j = JSON.parse(exp.text);
  assert(exp.name === 'encoder_self-across-heads-step9.json', exp.name);
  assert(j.run === '/runs/agg' && j.step === 9 && j.kind === 'encoder_self', JSON.stringify(j).slice(0, 120));
  assert(JSON.stringify(j.mean_of_heads[0][1]) === '[0.5,0.5,0]', `mean row 1: ${j.mean_of_heads[0][1]}`);
  assert(JSON.stringify(j.rollout[2]) === '[0.25,0,0.75]', `rollout row 2: ${j.rollout[2]}`);
  // One layer: flow from input j to output i is the single edge ½·mean + ½·I.
  assert(JSON.stringify(j.flow[1]) === '[0.25,0.75,0]', `flow row 1: ${j.flow[1]}`);
  await page.screenshot({ path: join(artifacts, 'attention-across-heads.png'), fullPage: true });
  await page.close();
});

test('hovering a token or a cell marks its row and column on every map of the kind', async () => {
  const page = await openPanel('attention');
  await page.evaluate(POST_ATTENTION, { S: 6, T: 5, L: 2, H: 2, kinds: ['encoder_self', 'cross'], fill: 0, step: 3 });
  await page.waitForFunction(() => document.body.dataset.renderDone);
  const bars = () =>
    page.evaluate(() =>
      [...document.querySelectorAll('.crosshair')].map((b) => {
        const c = b.parentElement.querySelector('canvas');
        const r = b.getBoundingClientRect();
        const cr = c.getBoundingClientRect();
        return {
          kind: c.dataset.kind,
          cls: b.classList.contains('xh-row') ? 'row' : 'col',
          at: b.classList.contains('xh-row')
            ? Math.round(((r.top - cr.top) / cr.height) * Number(c.dataset.queries))
            : Math.round(((r.left - cr.left) / cr.width) * Number(c.dataset.keys)),
        };
      }),
    );
  // Source token s2 in the encoder's card: a query (row 2) and a key (column 2) of every encoder map.
  await page.hover('section[data-kind="encoder_self"] .token[data-side="src"][data-index="2"]');
  let b = await bars();
  const encMaps = 2 * 2 + 2 + 1 + 2; // thumbnails, the mean of each layer, of all, rollout and flow
  assert(b.length === 2 * encMaps, `${b.length} bars for ${encMaps} encoder maps`);
  assert(
    b.every((x) => x.kind === 'encoder_self' && x.at === 2),
    JSON.stringify(b.slice(0, 4)),
  );
  // In cross attention s2 is a key only: a column on each cross map, no row.
  await page.hover('section[data-kind="cross"] .token[data-side="src"][data-index="2"]');
  b = await bars();
  assert(
    b.length === 2 * 2 + 2 + 1 && b.every((x) => x.kind === 'cross' && x.cls === 'col' && x.at === 2),
    JSON.stringify(b),
  );
  // A cell of one thumbnail: its query row and key column on every cross map.
  const box = await page.locator('canvas.thumb[data-kind="cross"][data-layer="1"][data-head="0"]').boundingBox();
  await page.mouse.move(box.x + (4.5 * box.width) / 6, box.y + (1.5 * box.height) / 5);
  b = await bars();
  const rows = b.filter((x) => x.cls === 'row');
  const cols = b.filter((x) => x.cls === 'col');
  assert(rows.length === 7 && rows.every((x) => x.at === 1), `rows ${JSON.stringify(rows)}`);
  assert(cols.length === 7 && cols.every((x) => x.at === 4), `cols ${JSON.stringify(cols)}`);
  await page.screenshot({ path: join(artifacts, 'attention-crosshair.png') });
  await page.mouse.move(0, 0);
  assert((await bars()).length === 0, 'leaving the map clears the marks');
  await page.close();
});
