/* global performance -- the page functions below run in Chromium */
// Attention of a 4,096-token pair (issue 12, "Big input"): the grid of 144 pooled thumbnails, and one
// head opened and zoomed with its token axes, the blocks answered as the extension answers them.
import { join } from 'node:path';
import { VIRIDIS, artifacts, assert, hexRgb, openPanel, posted, test } from './harness.mjs';

// The known matrix, in closed form so that its pooled cells are known by hand: in block (i, j) of
// 64 × 64 tokens, f(q, k) = (q mod 64)·(k mod 64)/63² · g(i, j), largest at (63, 63) where it is
// g(i, j); so the pooled cell (i, j) (max of its block) is g(i, j), a multiple of 1/8 in [1/8, 1].
// (Written out again in the page functions below: the page's CSP allows no eval.)
const N = 4096;
const B = 64;

const POST_POOLED = ({ N, B }) => {
  const g = (l, h, i, j) => (((i * 3 + j * 5 + l + h) % 8) + 1) / 8;
  const cells = N / B;
  const maps = ['encoder_self', 'decoder_self', 'cross'].map((kind) => {
    const w = new Float32Array(6 * 8 * cells * cells);
    for (let l = 0; l < 6; l++)
      for (let h = 0; h < 8; h++)
        for (let i = 0; i < cells; i++)
          for (let j = 0; j < cells; j++) w[((l * 8 + h) * cells + i) * cells + j] = g(l, h, i, j);
    return { kind, shape: [6, 8, cells, cells], weights: w, pool: { rows: B, cols: B } };
  });
  const tok = (p) => Array.from({ length: N }, (_, i) => `${p}${i}`);
  window.__t0 = performance.now();
  window.postMessage(
    {
      type: 'attention',
      v: 3,
      source: { runDir: '/runs/long', step: 100, input: 'input' },
      srcTokens: tok('s'),
      tgtTokens: tok('t'),
      maps,
    },
    '*',
  );
};

// What the extension does with a requestBlock: the block of the known matrix, pooled to ≤ 256 a side.
const ANSWER = ({ r }) => {
  const g = (l, h, i, j) => (((i * 3 + j * 5 + l + h) % 8) + 1) / 8;
  const f = (l, h, q, k) => (((q % 64) * (k % 64)) / 3969) * g(l, h, q >> 6, k >> 6);
  const pool = { rows: Math.ceil((r.q1 - r.q0) / 256), cols: Math.ceil((r.k1 - r.k0) / 256) };
  const rows = Math.ceil((r.q1 - r.q0) / pool.rows);
  const cols = Math.ceil((r.k1 - r.k0) / pool.cols);
  const w = new Float32Array(rows * cols);
  for (let a = 0; a < rows; a++)
    for (let b = 0; b < cols; b++) {
      let m = -Infinity;
      for (let q = r.q0 + a * pool.rows; q < Math.min(r.q1, r.q0 + (a + 1) * pool.rows); q++)
        for (let k = r.k0 + b * pool.cols; k < Math.min(r.k1, r.k0 + (b + 1) * pool.cols); k++)
          m = Math.max(m, f(r.layer, r.head, q, k));
      w[a * cols + b] = m;
    }
  const { type: _, v: __, ...range } = r;
  window.postMessage({ type: 'attentionBlock', v: 3, ...range, pool, shape: [rows, cols], weights: w }, '*');
};

const g = (l, h, i, j) => (((i * 3 + j * 5 + l + h) % 8) + 1) / 8;
const f = (l, h, q, k) => (((q % 64) * (k % 64)) / 3969) * g(l, h, q >> 6, k >> 6);

async function answered(page, count) {
  await page.waitForFunction((n) => window.__posted.filter((m) => m.type === 'requestBlock').length >= n, count);
  const asks = await posted(page, 'requestBlock');
  await page.evaluate(ANSWER, { r: asks[count - 1] });
  return asks[count - 1];
}

test('a 4,096-token grid is drawn pooled, and a head opens zoomed with its token axes', async () => {
  const page = await openPanel('attention', { width: 1600, height: 1400 });
  await page.evaluate(POST_POOLED, { N, B });
  await page.waitForFunction(() => document.body.dataset.renderDone, null, { timeout: 60000 });
  const drawnMs = await page.evaluate(() => performance.now() - window.__t0);
  const grid = await page.evaluate(() => ({
    thumbs: document.querySelectorAll('canvas.thumb[data-drawn="1"]').length,
    captions: [...document.querySelectorAll('section.kind header .muted')].map((e) => e.textContent),
  }));
  assert(grid.thumbs === 144, `${grid.thumbs} of 144 thumbnails drawn`);
  for (const c of grid.captions)
    assert(c === '6 layers × 8 heads · 4096 × 4096 · pooled 64×64 → max', `kind caption: ${c}`);
  // A thumbnail cell's colour is its pooled value g on the map's own scale (max 1): the viridis stop.
  const [l, h] = [2, 5];
  const px = await page.evaluate(
    ({ l, h }) => {
      const c = document.querySelector(`canvas.thumb[data-kind="encoder_self"][data-layer="${l}"][data-head="${h}"]`);
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      const at = (i, j) => {
        const x = Math.floor(((j + 0.5) * c.width) / 64);
        const y = Math.floor(((i + 0.5) * c.height) / 64);
        return Array.from(d.slice((y * c.width + x) * 4, (y * c.width + x) * 4 + 3));
      };
      return { w: c.width, cells: [at(0, 0), at(7, 3), at(50, 41)] };
    },
    { l, h },
  );
  assert(px.w === 96, `thumbnail ${px.w} px wide`);
  // Cells (i, j) drawn in a 96-px thumbnail of 64 cells: 1.5 pixels a cell, so the pixel at the
  // centre of a cell shows that cell alone, coloured on the map's own scale (its max, 1).
  // encoder_self:2.5: cell (0, 0) is g = ((0 + 0 + 2 + 5) % 8 + 1)/8 = 1, viridis at the top; (7, 3) is
  // ((21 + 15 + 7) % 8 + 1)/8 = 0.5; (50, 41) is ((150 + 205 + 7) % 8 + 1)/8 = 0.375.
  for (const [at, want] of [
    [0, 1],
    [1, 0.5],
    [2, 0.375],
  ]) {
    const rgb = hexRgb(VIRIDIS[want]);
    assert(
      rgb.every((v, i) => Math.abs(v - px.cells[at][i]) <= 3),
      `cell ${at} drawn rgb(${px.cells[at]}), want ${VIRIDIS[want]} (${want})`,
    );
  }

  // The across-heads row of pooled maps: means of the pooled maxima, said so; no rollout or flow
  // (they need every weight), no export of token rows the page does not have.
  const across = await page.evaluate(() =>
    ['encoder_self', 'cross'].map((kind) => {
      const card = document.querySelector(`section.kind[data-kind="${kind}"]`);
      const row = card.querySelector('.aggregate-head');
      return {
        text: row.textContent,
        buttons: row.querySelectorAll('button').length,
        names: [...card.querySelectorAll('canvas.aggregate')].map((c) => c.dataset.aggregate),
        title: card.querySelector('canvas.aggregate').title,
      };
    }),
  );
  const means = 'mean L0,mean L1,mean L2,mean L3,mean L4,mean L5,mean all';
  for (const a of across) {
    assert(a.names.join(',') === means, `across heads drawn: ${a.names}`);
    assert(a.buttons === 0, `${a.buttons} export buttons on pooled means`);
    assert(a.title === "Layer 0: the mean of its heads' pooled maxima", `title: ${a.title}`);
  }
  const heading =
    "Across heads: means of the heads' pooled maxima, 64 × 64 cells of 64×64 tokens (not means of weights)";
  assert(
    across[0].text === `${heading} · no rollout or flow: they need full maps (inputs ≤ 256 tokens a side)`,
    `encoder row: ${across[0].text}`,
  );
  assert(across[1].text === heading, `cross row: ${across[1].text}`);

  // Open the head: the large view shows the pooled cells (each the max of its block of f), titled pooled.
  await page.click(`canvas.thumb[data-kind="encoder_self"][data-layer="${l}"][data-head="${h}"]`);
  const first = await answered(page, 1);
  assert(
    first.q0 === 0 && first.q1 === 256 && first.k0 === 0 && first.k1 === 256,
    `opening asked for ${JSON.stringify(first)}`,
  );
  await page.waitForFunction(() => document.getElementById('zoom').dataset.block?.startsWith('encoder_self:2.5 0-256'));
  const detail = await page.evaluate(() => ({
    title: document.getElementById('detail-title').textContent,
    z: document.getElementById('detail').data[0].z,
  }));
  assert(detail.title.endsWith('(pooled 64×64 → max)'), `detail title: ${detail.title}`);
  for (const [i, j] of [
    [0, 0],
    [7, 3],
    [50, 41],
    [63, 63],
  ]) {
    let max = -Infinity; // the max of block (i, j) of the known matrix, computed here over its 4,096 cells
    for (let q = i * B; q < (i + 1) * B; q++)
      for (let k = j * B; k < (j + 1) * B; k++) max = Math.max(max, f(l, h, q, k));
    assert(
      Math.abs(detail.z[i][j] - max) < 1e-6,
      `pooled cell (${i}, ${j}) = ${detail.z[i][j]}, max of its block ${max}`,
    );
  }

  // Zoom: queries 1000–1255 × keys 2000–2255, every weight, token axes.
  await page.fill('#zoom-q0', '1000');
  await page.fill('#zoom-q1', '1256');
  await page.fill('#zoom-k0', '2000');
  await page.fill('#zoom-k1', '2256');
  await page.click('#zoom-go');
  const second = await answered(page, 2);
  assert(second.q0 === 1000 && second.k1 === 2256, `zoom asked for ${JSON.stringify(second)}`);
  await page.waitForFunction(() => document.getElementById('zoom').dataset.block?.endsWith('1000-1256 2000-2256'));
  const zoomed = await page.evaluate(() => {
    const gd = document.getElementById('zoom');
    return { title: document.getElementById('zoom-title').textContent, ...gd.data[0] };
  });
  assert(
    zoomed.title === 'Zoom · encoder_self:2.5 · queries (src) 1000–1255 × keys (src) 2000–2255 · every weight',
    `zoom title: ${zoomed.title}`,
  );
  assert(zoomed.z.length === 256 && zoomed.z[0].length === 256, 'the zoom is 256 × 256 weights');
  assert(zoomed.y[0] === 's1000 ‹1000›' && zoomed.x[255] === 's2255 ‹2255›', `axes ${zoomed.y[0]}, ${zoomed.x[255]}`);
  for (const [r, c] of [
    [0, 0],
    [7, 15],
    [31, 47],
    [255, 255],
  ]) {
    const want = f(l, h, 1000 + r, 2000 + c); // e.g. (1007, 2015): (47·31/63²)·g(2, 5, 15, 31)
    assert(Math.abs(zoomed.z[r][c] - want) < 1e-6, `zoom (${r}, ${c}) = ${zoomed.z[r][c]}, want ${want}`);
  }
  await page.screenshot({ path: join(artifacts, 'attention-4096-zoom.png'), fullPage: true });
  console.log(`    4,096-token grid drawn ${drawnMs.toFixed(0)} ms after its message`);
  await page.close();
});
