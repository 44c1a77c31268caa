// The Beam Tree panel as drawn: a known search tree (the first-k rule's flaw of test/decode/beam.test.ts,
// its ids, statuses and scores written out here), the chosen path, greedy's path, pruned branches,
// finished leaves, hover text, the n-best, a click on a node, and that node's attention in viridis.
import { join } from 'node:path';
import { V, VIRIDIS, artifacts, assert, hexRgb, openPanel, panelHeader, posted, send, test } from './harness.mjs';

const HEADER = panelHeader('/runs/reverse-tiny', [1500], { step: 1500 });
const TEXT = { 1: '<s>', 2: '</s>', 4: 'a', 5: 'b' };
// [id, parent, token, logProb, status, chosen]
const ROWS = [
  [0, -1, 1, 0, 'expanded', true],
  [1, 0, 4, -0.125, 'expanded', true],
  [2, 0, 5, -5, 'expanded', false],
  [3, 1, 4, -0.25, 'expanded', true],
  [4, 1, 2, -2.125, 'pruned', false],
  [5, 1, 5, -4.125, 'expanded', false],
  [6, 2, 5, -6, 'pruned', false],
  [7, 3, 4, -0.375, 'expanded', true],
  [8, 3, 2, -2.25, 'finished', false],
  [9, 3, 5, -4.25, 'expanded', false],
  [10, 5, 2, -5.125, 'pruned', false],
  [11, 7, 2, -0.4375, 'finished', true],
  [12, 9, 2, -5.25, 'pruned', false],
];
const depthOf = (id) => (id === 0 ? 0 : 1 + depthOf(ROWS[id][1]));
const lp = (n) => ((5 + n) / 6) ** 0.6;
const TREE = {
  runDir: '/runs/reverse-tiny',
  step: 1500,
  checkpoint: '/runs/reverse-tiny/checkpoints/step-1500.safetensors',
  input: 'a a a',
  srcIds: [4, 4, 4, 2],
  srcTokens: ['a', 'a', 'a', '</s>'],
  beam: 2,
  alpha: 0.6,
  earlyStop: 'exact',
  nodes: ROWS.map(([id, parent, token, logProb, status, chosen]) => ({
    id,
    parent,
    depth: depthOf(id),
    token,
    logProb,
    score: depthOf(id) ? logProb / lp(depthOf(id)) : 0,
    status,
    chosen,
    text: TEXT[token],
  })),
  nBest: [11, 8],
  greedy: [4, 5, 2], // a b </s>: nodes 1, 5, 10
};

async function drawnOf(page) {
  const before = (await posted(page, 'drawn')).length;
  await send(page, { type: 'reportDrawn', v: V, cells: [] });
  await page.waitForFunction((n) => window.__posted.filter((m) => m.type === 'drawn').length > n, before);
  return (await posted(page, 'drawn'))[before];
}

test('the Beam Tree draws a known tree: chosen and greedy paths, pruned greyed, finished square, hover, n-best, node attention', async () => {
  const page = await openPanel('beam');
  await send(page, { type: 'state', v: V, state: { panel: 'beam', header: HEADER, tree: TREE, node: null } });
  await page.waitForSelector('#beam-tree g[data-node="12"]');
  const d = await drawnOf(page);
  assert(d.frames === 13, `13 nodes drawn, got ${d.frames}`);
  assert(d.step === 1500 && d.input === 'a a a' && d.run === 'reverse-tiny', `header: ${JSON.stringify(d)}`);
  for (const m of ['chosen:0,1,3,7,11', 'greedy:1,5,10', 'pruned:4', 'nbest:2'])
    assert(d.marks.includes(m), `marks ${d.marks} lack ${m}`);

  const status = await page.evaluate(() => document.getElementById('status').textContent);
  assert(status === '13 hypotheses · chosen: “a a a </s>” · greedy: “a b </s>” (dashed)', `status: ${status}`);

  const edges = await page.evaluate(() =>
    Object.fromEntries(
      [...document.querySelectorAll('#beam-tree path[data-edge]')].map((e) => [
        e.dataset.edge,
        {
          width: e.getAttribute('stroke-width'),
          dash: e.getAttribute('stroke-dasharray'),
          opacity: e.getAttribute('opacity'),
        },
      ]),
    ),
  );
  assert(Object.keys(edges).length === 12, 'an edge per node but the root');
  for (const id of ['1', '3', '7', '11']) assert(edges[id].width === '3' && !edges[id].dash, `chosen edge ${id}`);
  for (const id of ['5', '10']) assert(edges[id].dash === '5 3', `greedy's edge ${id} is dashed`);
  for (const id of ['4', '6', '10', '12']) assert(edges[id].opacity === '0.35', `pruned edge ${id} is greyed`);
  assert(edges['8'].opacity === '1' && edges['8'].width === '1.5', 'a finished, unchosen edge is plain');

  const marks = await page.evaluate(() =>
    [...document.querySelectorAll('#beam-tree g[data-node]')].map((g) => ({
      id: g.dataset.node,
      shape: g.querySelector('rect') ? 'rect' : 'circle',
      label: g.querySelector('text').textContent,
      title: g.querySelector('title').textContent,
    })),
  );
  assert(marks[0].label === '<s>', `the root's label is the text <s>, got ${marks[0].label}`);
  assert(
    marks
      .filter((m) => m.shape === 'rect')
      .map((m) => m.id)
      .join() === '8,11',
    'finished nodes are squares',
  );
  const t11 = marks[11].title;
  for (const part of ['a a a </s>', 'log P -0.438', `score ${(-0.4375 / lp(4)).toFixed(3)}`, 'finished', 'chosen'])
    assert(t11.includes(part), `hover of node 11 "${t11}" lacks "${part}"`);

  const nbest = await page.evaluate(() =>
    [...document.querySelectorAll('#n-best tr')].slice(1).map((r) => [...r.children].map((c) => c.textContent)),
  );
  assert(nbest.length === 2 && nbest[0][1] === 'a a a </s>' && nbest[1][1] === 'a a </s>', `n-best ${nbest}`);
  assert(nbest[1][2] === (-2.25 / lp(3)).toFixed(3), `second score ${nbest[1][2]}`);

  await page.click('#beam-tree g[data-node="8"]');
  await page.waitForFunction(() => window.__posted.some((m) => m.type === 'beamNode'));
  const asked = await posted(page, 'beamNode');
  assert(asked.length === 1 && asked[0].node === 8, `a click asks for node 8: ${JSON.stringify(asked)}`);

  // Node 8 (a a </s>): decoder input <s> a a, 3 queries; the last query's cross row puts all weight on key 2.
  await page.evaluate(
    ({ header, tree, v }) => {
      const L = 1,
        H = 2,
        T = 3,
        S = 4;
      const cross = new Float32Array(L * H * T * S).fill(0.25);
      cross.set([0, 0, 1, 0], ((0 * H + 0) * T + (T - 1)) * S); // layer 1, head 1, last query
      const self = new Float32Array(L * H * T * T).fill(1 / 3);
      const attention = {
        source: { runDir: tree.runDir, step: 1500, checkpoint: tree.checkpoint, input: 'input' },
        srcTokens: tree.srcTokens,
        tgtTokens: ['<s>', 'a', 'a'],
        maps: [
          { kind: 'decoder_self', shape: [L, H, T, T], weights: self },
          { kind: 'cross', shape: [L, H, T, S], weights: cross },
        ],
      };
      window.postMessage({ type: 'state', v, state: { panel: 'beam', header, tree, node: { id: 8, attention } } }, '*');
    },
    { header: HEADER, tree: TREE, v: V },
  );
  await page.waitForSelector('#beam-node canvas[data-kind="cross"]');
  const d2 = await drawnOf(page);
  assert(d2.marks.includes('node:8'), 'the node shown is reported');
  assert(
    JSON.stringify(d2.maps) ===
      JSON.stringify([
        { kind: 'cross', shape: [1, 2, 3, 4] },
        { kind: 'decoder_self', shape: [1, 2, 3, 3] },
      ]),
    `maps ${JSON.stringify(d2.maps)}`,
  );
  const px = await page.evaluate(() => {
    const c = document.querySelector('#beam-node canvas[data-kind="cross"]');
    const at = (x, y) => [...c.getContext('2d').getImageData(x, y, 1, 1).data].slice(0, 3);
    return { hot: at(2, 0), quarter: at(0, 1), size: [c.width, c.height] };
  });
  assert(px.size.join() === '4,2', `one pixel per key and head: ${px.size}`);
  const want = hexRgb(VIRIDIS[1]);
  assert(
    px.hot.every((c, i) => Math.abs(c - want[i]) <= 3),
    `weight 1 drawn as viridis(1) ${want}, got ${px.hot}`,
  );
  const quarter = hexRgb(VIRIDIS[0.25]);
  assert(
    px.quarter.every((c, i) => Math.abs(c - quarter[i]) <= 3),
    `0.25 as viridis(0.25), got ${px.quarter}`,
  );
  await page.screenshot({ path: join(artifacts, 'beam-tree.png') });
  // Key labels are written across only when each token, in the font the page draws it in, fits
  // its column less 4 px. Two-digit tokens sit near that edge at the page's 0.85em: measured in
  // any other font (e.g. before the labels are attached), they come out on the wrong side of it.
  for (const src of [
    ['1', '2', '3', '4'],
    ['12', '34', '56', '78'],
  ]) {
    await page.evaluate(
      ({ header, tree, v, src }) => {
        const S = src.length;
        const cross = new Float32Array(2 * 3 * S).fill(1 / S);
        const self = new Float32Array(2 * 3 * 3).fill(1 / 3);
        const attention = {
          source: { runDir: tree.runDir, step: 1500, checkpoint: tree.checkpoint, input: 'input' },
          srcTokens: src,
          tgtTokens: ['<s>', 'a', 'a'],
          maps: [
            { kind: 'decoder_self', shape: [1, 2, 3, 3], weights: self },
            { kind: 'cross', shape: [1, 2, 3, S], weights: cross },
          ],
        };
        const state = { panel: 'beam', header, tree, node: { id: 8, attention } };
        window.postMessage({ type: 'state', v, state }, '*');
      },
      { header: HEADER, tree: TREE, v: V, src },
    );
    await page.waitForFunction(
      (t) => document.querySelector('#beam-node .key-labels')?.textContent === t,
      src.join(''),
    );
    const got = await page.evaluate(() => {
      const row = document.querySelector('#beam-node .key-labels');
      const across = row.classList.contains('across');
      row.classList.add('across'); // each token's width as the page lays it out across
      const widths = [...row.children].map((s) => {
        const range = document.createRange();
        range.selectNodeContents(s);
        return range.getBoundingClientRect().width;
      });
      row.classList.toggle('across', across);
      return { across, widths, column: row.children[0].getBoundingClientRect().width };
    });
    const fits = got.widths.every((w) => w <= got.column - 4);
    assert(got.across === fits, `${src}: across ${got.across}, widths ${got.widths} in ${got.column} px columns`);
  }
  await page.close();
});
