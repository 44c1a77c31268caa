// Never another run's data under this run's name (issue 26 item 1): the attention view's large head
// card is cleared, saying what it showed, when the header names a run or input it does not belong to.
import { join } from 'node:path';
import { V, artifacts, assert, openPanel, test } from './harness.mjs';

const header = (run) => ({
  runDir: `/runs/${run}`,
  run,
  step: null,
  input: '4 5 6 7',
  live: false,
  checkpoints: [20],
  vocab: true,
});
const SELECTED = { kind: 'cross', layer: 0, head: 0 };

/** The decoded "4 5 6 7" of run `run`: cross-attention of 1 layer × 2 heads, 5 target × 5 source tokens. */
const decoded = (run) => ({
  source: { runDir: `/runs/${run}`, step: 20, input: 'input' },
  srcTokens: ['4', '5', '6', '7', '</s>'],
  tgtTokens: ['<s>', '7', '6', '5', '4'],
  maps: [{ kind: 'cross', shape: [1, 2, 5, 5], weights: Array.from({ length: 50 }, () => 0.2) }],
});

/** Posts a state as the extension does: the maps' weights as Float32Array. */
const sendState = (page, state) =>
  page.evaluate(
    ({ state, v }) => {
      for (const m of state.attention?.maps ?? []) m.weights = new Float32Array(m.weights);
      window.postMessage({ type: 'state', v, state }, '*');
    },
    { state, v: V },
  );

/** What the large head card shows: its title, and whether plotly holds and draws a heatmap in it. */
const card = (page) =>
  page.evaluate(() => ({
    title: document.getElementById('detail-title').textContent,
    drawn:
      document.getElementById('detail').data?.[0]?.type === 'heatmap' || !!document.querySelector('#detail .main-svg'),
    thumbs: document.querySelectorAll('canvas.thumb').length,
    status: document.getElementById('status').textContent,
  }));

async function showDecoded(page) {
  const state = { panel: 'attention', header: header('live-a'), attention: decoded('live-a'), selected: SELECTED };
  await sendState(page, { ...state, roles: [], ablation: null });
  await page.waitForFunction(() => document.getElementById('detail').data?.[0]?.type === 'heatmap');
  const shown = await card(page);
  assert(shown.title.startsWith('cross:0.0 · Encoder–decoder (cross) attention'), `title: ${shown.title}`);
  assert(shown.thumbs === 2, `${shown.thumbs} thumbnails`);
}

test('another run selected with nothing to show: the large head card is cleared and says what it showed', async () => {
  const page = await openPanel('attention');
  await showDecoded(page);
  // Open Run of a folder with nothing to show (yet): the header names it, the view has no attention.
  const state = { panel: 'attention', header: header('broken'), attention: null, selected: SELECTED, roles: [] };
  await sendState(page, state);
  await page.waitForFunction(
    () => !document.getElementById('detail').data && !document.querySelector('#detail .main-svg'),
    null,
    {
      timeout: 5000,
    },
  );
  const after = await card(page);
  assert(!after.drawn && after.thumbs === 0, `still drawn: ${JSON.stringify(after)}`);
  assert(after.title === 'Cleared: the head shown was of live-a, “4 5 6 7”', `title: ${after.title}`);
  assert(after.status.startsWith('Cleared the attention of live-a, “4 5 6 7”'), `status: ${after.status}`);
  const head = await page.locator('#view-header').innerText();
  assert(head.includes('broken') && !head.includes('live-a'), `header: ${head}`);
  await page.screenshot({ path: join(artifacts, 'attention-cleared-other-run.png') });
  await page.close();
});

test('an attention of one run under another run’s header is not drawn', async () => {
  const page = await openPanel('attention');
  await showDecoded(page);
  const state = { panel: 'attention', header: header('broken'), attention: decoded('live-a'), selected: SELECTED };
  await sendState(page, { ...state, roles: [] });
  await page.waitForFunction(
    () => !document.getElementById('detail').data && !document.querySelector('#detail .main-svg'),
    null,
    {
      timeout: 5000,
    },
  );
  const after = await card(page);
  assert(!after.drawn && after.thumbs === 0, `drawn under the wrong name: ${JSON.stringify(after)}`);
  assert(after.status.startsWith('Cleared the attention of live-a'), `status: ${after.status}`);
  await page.close();
});
