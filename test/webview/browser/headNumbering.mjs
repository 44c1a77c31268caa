// Heads numbered one way (issue 26 item 5): the attention grid, the head inspector, the Heads panel
// and the ablation card each name the same head, the first head of the second decoder layer's
// cross-attention, and each must call it what the CLI takes and run folders store: cross:1.0
// (kind:layer.head, from 0). The expected text is that documented form, written out here.
import { join } from 'node:path';
import { V, artifacts, assert, openPanel, panelHeader, send, test } from './harness.mjs';

const NAME = 'cross:1.0';
const HEAD = { kind: 'cross', layer: 1, head: 0 };
const HEADER = panelHeader('/runs/numbered', [20]);
const SRC = ['4', '5', '6', '</s>'];
const TGT = ['<s>', '6', '5', '4'];
/** Cross-attention of 2 layers × 4 heads, 4 target × 4 source tokens, uniform (the names are under test). */
const ATTENTION = {
  source: { runDir: '/runs/numbered', step: 20, input: 'probe' },
  srcTokens: SRC,
  tgtTokens: TGT,
  maps: [{ kind: 'cross', shape: [2, 4, 4, 4], weights: Array.from({ length: 2 * 4 * 16 }, () => 0.25) }],
};
const EFFECT = {
  ablation: { heads: [NAME], mode: 'zero' },
  runDir: '/runs/numbered',
  step: 20,
  tgtTokens: TGT,
  intact: [-0.1, -0.2, -0.3, -0.4],
  ablated: [-0.5, -0.6, -0.7, -0.8],
  output: { text: '6 5 4', tokens: ['6', '5', '4'] },
};

/** Posts a panel's state as the extension does: attention weights as Float32Array. */
const sendState = (page, state) =>
  page.evaluate(
    ({ state, v }) => {
      const f32 = (a) => a && { ...a, maps: a.maps.map((m) => ({ ...m, weights: new Float32Array(m.weights) })) };
      const s = { ...state, attention: f32(state.attention) };
      if (state.snapshots) s.snapshots = state.snapshots.map(f32);
      window.postMessage({ type: 'state', v, state: s }, '*');
    },
    { state, v: V },
  );

test('one head, one name: the grid, the head inspector, the Heads panel and the ablation card all say cross:1.0', async () => {
  // The attention view: the grid's thumbnail and readout, the large card's title, the ablation card's chip.
  const attention = await openPanel('attention', { width: 1400, height: 900 });
  await sendState(attention, {
    panel: 'attention',
    header: HEADER,
    attention: ATTENTION,
    selected: HEAD,
    roles: [],
    ablation: EFFECT,
  });
  await attention.waitForFunction(() => document.getElementById('detail').data?.[0]?.type === 'heatmap');
  const thumb = attention.locator('canvas.thumb[data-kind="cross"][data-layer="1"][data-head="0"]');
  const grid = await attention.evaluate(() => ({
    rows: [...document.querySelectorAll('.thumb-grid .row-label')].map((e) => e.textContent),
    cols: [...document.querySelectorAll('.thumb-grid .col-label')].map((e) => e.textContent),
  }));
  assert(grid.rows.join() === 'L0,L1' && grid.cols.join() === 'H0,H1,H2,H3', `grid axes ${JSON.stringify(grid)}`);
  const tip = await thumb.getAttribute('title');
  assert(tip.startsWith(`${NAME} `), `the thumbnail's tooltip: ${tip}`);
  const box = await thumb.boundingBox();
  await attention.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  const readout = await attention.locator('#readout').innerText();
  assert(readout.startsWith(`${NAME}: query `), `the grid's readout: ${readout}`);
  const detail = await attention.locator('#detail-title').innerText();
  assert(detail.startsWith(`${NAME} `), `the large card's title: ${detail}`);
  const chips = await attention.locator('#ablated-heads button').allInnerTexts();
  assert(chips.join('|') === `${NAME} ✕`, `the ablation card's heads: ${chips.join('|')}`);
  const output = await attention.locator('#ablation-output').innerText();
  assert(output.includes(`with ${NAME} zero-ablated`), `the ablation card's result: ${output}`);
  await attention.screenshot({ path: join(artifacts, 'heads-numbered-once-attention.png') });
  await attention.close();

  // The head inspector.
  const inspector = await openPanel('head', { width: 1200, height: 900 });
  await sendState(inspector, {
    panel: 'head',
    header: HEADER,
    head: HEAD,
    attention: ATTENTION,
    snapshots: [],
    losses: [],
    cursor: null,
  });
  await inspector.waitForFunction(() => document.body.dataset.drawnStep === '20');
  const title = await inspector.locator('#head-title').innerText();
  assert(title === NAME, `the inspector's title: ${title}`);
  await inspector.close();

  // The Heads panel: its rows are named as telemetry.jsonl names them.
  const heads = await openPanel('heads');
  await send(heads, {
    type: 'state',
    v: V,
    state: {
      panel: 'heads',
      header: HEADER,
      telemetry: [{ step: 20, pairs: 4, heads: ['cross:0.0', NAME], stats: { entropy_norm: [0.5, 0.25] } }],
      events: [],
      cursor: null,
    },
  });
  await heads.waitForFunction(() => document.body.dataset.drawnCols === '1');
  const rows = await heads.locator('.heads-labels div').allInnerTexts();
  assert(rows.includes(NAME), `the Heads panel's rows: ${rows.join(', ')}`);
  await heads.close();
});
