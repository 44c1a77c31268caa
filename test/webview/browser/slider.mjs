/* global MutationObserver, requestAnimationFrame -- the page functions below run in Chromium */
// The head inspector's slider (issue 26 item 7) against an extension that answers as the real one
// does: every `cursor` the page posts comes back, a round trip later, as a `cursor` and a `state`
// carrying that step (panels/index.ts showCursor and setHeader). Counted, not timed: N arrow presses
// draw N successive steps, the last one the slider's; after a drag's release nothing moves; the
// first state draws its frame before the next animation frame.
import { join } from 'node:path';
import { V, artifacts, assert, openPanel, test } from './harness.mjs';

const FRAMES = 10;
const ROUND_TRIP_MS = 500; // a busy extension host: longer than the gap between two presses

/** In the page: the fake extension, which answers every cursor the page posts. */
const ANSWERING = ({ roundTrip, v }) => {
  window.__answers = 0;
  const make = window.acquireVsCodeApi;
  window.acquireVsCodeApi = () => {
    const api = make();
    const postMessage = api.postMessage;
    api.postMessage = (m) => {
      postMessage(m);
      if (m.type !== 'cursor') return;
      setTimeout(() => {
        window.postMessage({ type: 'cursor', v, step: m.step }, '*');
        window.postMessage({ type: 'state', v, state: { ...window.__headState, cursor: m.step } }, '*');
        window.__answers++;
      }, roundTrip);
    };
    return api;
  };
};

/**
 * Records every step the map is drawn at (each time data-drawn-step is set, even to the same value),
 * then posts the first state: `n` probe snapshots at steps 100, 200, …, each a different 3 × 3 map.
 */
const POST_STATE = ({ n, v }) => {
  const mk = (step, i) => ({
    source: { runDir: '/runs/slider', step, input: 'probe' },
    srcTokens: ['a', 'b', 'c'],
    tgtTokens: ['x', 'y'],
    maps: [
      {
        kind: 'encoder_self',
        shape: [1, 1, 3, 3],
        weights: new Float32Array([1, 0, 0, 0, 1, 0, 0, 0, 1].map((w, k) => (k === i % 9 ? 1 : w * 0.5))),
      },
    ],
  });
  const snaps = Array.from({ length: n }, (_, i) => mk(100 * (i + 1), i));
  window.__drawn = [];
  new MutationObserver((records) => {
    for (const r of records) window.__drawn.push(r.target.dataset.drawnStep);
  }).observe(document.body, { attributes: true, attributeFilter: ['data-drawn-step'] });
  window.__headState = {
    panel: 'head',
    header: null,
    head: { kind: 'encoder_self', layer: 0, head: 0 },
    attention: snaps[0],
    snapshots: snaps,
    losses: [],
    cursor: 100,
  };
  window.postMessage({ type: 'state', v, state: window.__headState }, '*');
  // The frame the state was drawn in: what the map shows at the first animation frame after it arrived.
  return new Promise((resolve) =>
    window.addEventListener('message', () => requestAnimationFrame(() => resolve(document.body.dataset.drawnStep)), {
      once: true,
    }),
  );
};

/** Waits until the fake extension has answered every cursor the page posted, then three animation frames. */
async function settled(page) {
  await page.waitForFunction(() => window.__answers === window.__posted.filter((m) => m.type === 'cursor').length);
  await page.evaluate(
    () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => requestAnimationFrame(r)))),
  );
}

test('issue 26: the head inspector’s slider draws each arrow press, stops on release, and draws its first state at once', async () => {
  const page = await openPanel('head', { width: 1200, height: 900 }, 'dark', ANSWERING, {
    roundTrip: ROUND_TRIP_MS,
    v: V,
  });
  const first = await page.evaluate(POST_STATE, { n: FRAMES, v: V });
  assert(first === '100', `the first state's frame (step 100) is drawn by the next animation frame, got ${first}`);

  // Six arrow presses, 120 ms apart (the pace): six successive steps, each drawn once, in order.
  await page.focus('#step-slider');
  await page.evaluate(() => (window.__drawn = []));
  for (let i = 0; i < 6; i++) {
    await page.keyboard.press('ArrowRight');
    await page.waitForTimeout(120);
  }
  await settled(page);
  const pressed = await page.evaluate(() => ({
    drawn: window.__drawn,
    value: document.getElementById('step-slider').value,
    step: document.body.dataset.drawnStep,
  }));
  const want = ['200', '300', '400', '500', '600', '700'];
  const moves = pressed.drawn.filter((s, i) => s !== (i ? pressed.drawn[i - 1] : '100'));
  assert(JSON.stringify(moves) === JSON.stringify(want), `steps drawn for 6 presses: ${pressed.drawn}, want ${want}`);
  assert(pressed.value === '6' && pressed.step === '700', `slider ${pressed.value}, drawn step ${pressed.step}`);

  // A drag from the left end to the right end: after the release, no step but the last is drawn.
  const box = await page.locator('#step-slider').boundingBox();
  const y = box.y + box.height / 2;
  await page.mouse.move(box.x + 2, y);
  await page.mouse.down();
  for (let i = 1; i <= 20; i++) {
    await page.mouse.move(box.x + 2 + ((box.width - 4) * i) / 20, y); // as fast as a hand: answers still on the way
  }
  await page.mouse.up();
  const released = await page.evaluate(() => ({
    at: window.__drawn.length,
    value: document.getElementById('step-slider').value,
    step: document.body.dataset.drawnStep,
  }));
  await settled(page);
  const after = await page.evaluate(
    (at) => ({
      drawn: window.__drawn.slice(at),
      value: document.getElementById('step-slider').value,
      step: document.body.dataset.drawnStep,
    }),
    released.at,
  );
  assert(released.value === String(FRAMES - 1), `the drag ends at the right end: ${released.value}`);
  const moved = after.drawn.filter((s) => s !== released.step);
  assert(moved.length === 0, `after the release the map was drawn at steps ${moved} (it showed ${released.step})`);
  assert(
    after.value === released.value && after.step === released.step,
    `moved after release: ${JSON.stringify(after)}`,
  );
  await page.screenshot({ path: join(artifacts, 'head-slider.png'), fullPage: true });
  await page.close();
});
