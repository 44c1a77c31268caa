// The attention view's "across heads" row: the mean of a layer's heads, the mean of all, rollout
// and flow, drawn in viridis in the right cells, and exported as JSON.
import { join } from 'node:path';
import { V, VIRIDIS, artifacts, assert, hexRgb, openPanel, posted, test } from './harness.mjs';

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
  assert(names.join(',') === 'mean L1,mean all,rollout,flow', `aggregates drawn: ${names}`);
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
    ['mean L1', 0, 0, 1],
    ['mean L1', 1, 0, 0.5],
    ['mean L1', 1, 2, 0],
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
