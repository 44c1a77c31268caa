/* global Document, EventTarget, Element, HTMLCanvasElement, CanvasRenderingContext2D -- in the page */
/* global MutationObserver, requestAnimationFrame -- in the page */
// Issue 34: a live snapshot after the first redraws only what changed, counted rather than timed (a
// fast machine cannot hide a regression): between snapshot 1 and snapshot 2 of the same shape, the
// page creates and inserts no elements, attaches no listeners, resizes no canvas, and puts pixels
// only into the canvases of the maps whose values changed (worked out by hand below).
import { join } from 'node:path';
import { V, artifacts, assert, openPanel, test } from './harness.mjs';

// Runs in the page before its scripts: counters around the DOM and canvas calls a rebuild makes.
const COUNTERS = () => {
  const c = { created: 0, inserted: 0, listeners: 0, resized: 0, redrawn: [], made: [] };
  window.__counts = c;
  window.__counting = false;
  const wrap = (proto, name, before) => {
    const orig = proto[name];
    proto[name] = function (...a) {
      if (window.__counting) before.call(this, ...a);
      return orig.apply(this, a);
    };
  };
  // Each element made, named by its tag and the first of the page's functions that made it.
  const made = (tag) => {
    c.created++;
    const by = new Error().stack.split('\n').find((l) => l.includes('/dist/webview/') && !l.includes(' h ('));
    c.made.push(`${tag} by ${by?.trim().replace(/\(.*\/dist\/webview\//, '(') ?? '?'}`);
  };
  wrap(Document.prototype, 'createElement', made);
  wrap(Document.prototype, 'createElementNS', (_ns, tag) => made(tag));
  wrap(EventTarget.prototype, 'addEventListener', () => c.listeners++);
  wrap(Element.prototype, 'setAttribute', function (name) {
    if (this instanceof HTMLCanvasElement && (name === 'width' || name === 'height')) c.resized++;
  });
  for (const prop of ['width', 'height']) {
    const d = Object.getOwnPropertyDescriptor(HTMLCanvasElement.prototype, prop);
    Object.defineProperty(HTMLCanvasElement.prototype, prop, {
      ...d,
      set(v) {
        if (window.__counting) c.resized++;
        d.set.call(this, v);
      },
    });
  }
  // A canvas's name: its map (kind:layer.head) or its across-heads aggregate (kind/name).
  const named = (cv) =>
    cv.dataset.aggregate
      ? `${cv.dataset.kind}/${cv.dataset.aggregate}`
      : `${cv.dataset.kind}:${cv.dataset.layer}.${cv.dataset.head}`;
  for (const name of ['putImageData', 'drawImage'])
    wrap(CanvasRenderingContext2D.prototype, name, function () {
      c.redrawn.push(named(this.canvas));
    });
  new MutationObserver((records) => {
    if (!window.__counting) return;
    for (const r of records) for (const n of r.addedNodes) if (n.nodeType === 1) c.inserted++;
  }).observe(document, { childList: true, subtree: true });
};

// Snapshot `step` of a 3-kind, 2-layer, 4-head model on 5 source and 4 target tokens; maps named in
// `bump` get a different (still row-stochastic) pattern, every other map is as in snapshot 1.
const POST = ({ step, bump, v }) => {
  const S = 5;
  const T = 4;
  const maps = ['encoder_self', 'decoder_self', 'cross'].map((kind) => {
    const q = kind === 'encoder_self' ? S : T;
    const k = kind === 'decoder_self' ? T : S;
    const w = new Float32Array(2 * 4 * q * k);
    for (let l = 0; l < 2; l++)
      for (let hd = 0; hd < 4; hd++) {
        const shift = bump.includes(`${kind}:${l}.${hd}`) ? 2 : 0;
        for (let r = 0; r < q; r++) {
          const o = ((l * 4 + hd) * q + r) * k;
          for (let c = 0; c < k; c++) w[o + c] = c === (r + hd + l + shift) % k ? 0.7 : 0.3 / (k - 1);
        }
      }
    return { kind, shape: [2, 4, q, k], weights: w };
  });
  const tok = (p, n) => Array.from({ length: n }, (_, i) => `${p}${i}`);
  window.postMessage(
    {
      type: 'attention',
      v,
      source: { runDir: '/runs/live', step, input: 'probe' },
      srcTokens: tok('s', S),
      tgtTokens: tok('t', T),
      maps,
    },
    '*',
  );
};

/** The attention view, counters in, showing a run training live (the state before its first snapshot). */
async function openLive(viewport) {
  const page = await openPanel('attention', viewport, 'dark', COUNTERS);
  await postLiveState(page, 10);
  return page;
}

/** The state of a run training live at `step`, before its first snapshot there. */
async function postLiveState(page, step) {
  const header = { runDir: '/runs/live', run: 'live', step, input: 'probe', live: true, checkpoints: [], vocab: true };
  await page.evaluate(
    ({ header, v }) => {
      const state = { panel: 'attention', header, attention: null, selected: null, roles: [], ablation: null };
      window.postMessage({ type: 'state', v, state }, '*');
    },
    { header, v: V },
  );
}

// Waits until the page has drawn snapshot `step` and has had two frames to settle.
async function drawn(page, step) {
  await page.waitForFunction(
    (s) => document.body.dataset.renderDone && document.getElementById('view-header').dataset.step === s,
    String(step),
  );
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  await page.evaluate(() => new Promise((r) => setTimeout(r, 50)));
}

test('a live snapshot after the first makes no element or listener, resizes no canvas, redraws changed maps only', async () => {
  // Tall enough that every card of this small model is on screen: every map, row and the head view.
  const page = await openLive({ width: 1400, height: 2600 });
  await page.evaluate(POST, { step: 10, bump: [], v: V });
  await drawn(page, 10);
  const before = await page.evaluate(() => ({
    thumbs: document.querySelectorAll('canvas.thumb[data-drawn="1"]').length,
    aggregates: document.querySelectorAll('canvas.aggregate[data-drawn="1"]').length,
    lines: document.querySelectorAll('#head-view line').length,
  }));
  assert(before.thumbs === 24, `snapshot 1 drew ${before.thumbs} of 24 thumbnails`);
  // Encoder: mean L0, mean L1, mean all, rollout, flow; decoder and cross: mean L0, mean L1, mean all.
  assert(before.aggregates === 5 + 3 + 3, `snapshot 1 drew ${before.aggregates} of 11 across-heads maps`);
  assert(before.lines > 0, 'the head view drew no lines');
  await page.evaluate(() => (window.__counting = true));
  // Snapshot 2: heads encoder_self:0.1 (in the head view, which shows encoder self layer 0) and cross:1.3 change.
  await page.evaluate(POST, { step: 12, bump: ['encoder_self:0.1', 'cross:1.3'], v: V });
  await drawn(page, 12);
  const c = await page.evaluate(() => {
    window.__counting = false;
    return { ...window.__counts, step: document.getElementById('view-header').dataset.step };
  });
  await page.screenshot({ path: join(artifacts, 'attention-live-counts.png') });
  console.log(
    `    snapshot 2: ${c.created} elements created, ${c.inserted} inserted, ${c.listeners} listeners, ` +
      `${c.resized} canvases resized, redrawn: ${c.redrawn.join(' ')}`,
  );
  assert(
    c.created === 0,
    `snapshot 2 created ${c.created} elements, want 0 (the DOM is rebuilt): ${c.made.join('; ')}`,
  );
  assert(c.inserted === 0, `snapshot 2 inserted ${c.inserted} elements, want 0`);
  assert(c.listeners === 0, `snapshot 2 attached ${c.listeners} listeners, want 0`);
  assert(c.resized === 0, `snapshot 2 resized ${c.resized} canvases, want 0`);
  // The changed maps' thumbnails; the encoder's mean of layer 0, mean of all, rollout and flow (each
  // made from layer 0's heads); the cross kind's mean of layer 1 and mean of all. Nothing else.
  const want = [
    'encoder_self:0.1',
    'cross:1.3',
    'encoder_self/mean L0',
    'encoder_self/mean all',
    'encoder_self/rollout',
    'encoder_self/flow',
    'cross/mean L1',
    'cross/mean all',
  ].sort();
  const got = [...c.redrawn].sort();
  assert(JSON.stringify(got) === JSON.stringify(want), `redrawn ${got.join(', ')}; want ${want.join(', ')}`);
  // The header moved on to the new step: what changed is shown.
  assert(c.step === '12', `the header says step ${c.step}, want 12`);
  await page.close();
});

test('the across-heads rows and the head view off screen are drawn when they come into view, not before', async () => {
  // 600 pixels high: the cross card (first on screen) and its row are in view; the decoder's row and
  // the head view, at the bottom, are not.
  const page = await openLive({ width: 1400, height: 600 });
  await page.evaluate(POST, { step: 10, bump: [], v: V });
  await page.waitForFunction(() => document.body.dataset.renderDone);
  const state = () =>
    page.evaluate(() => ({
      thumbs: document.querySelectorAll('canvas.thumb[data-drawn="1"]').length,
      cross: document.querySelectorAll('canvas.aggregate[data-kind="cross"][data-drawn="1"]').length,
      decoder: document.querySelectorAll('canvas.aggregate[data-kind="decoder_self"][data-drawn="1"]').length,
      lines: document.querySelectorAll('#head-view line:not(.spare)').length,
    }));
  let s = await state();
  assert(s.thumbs === 24, `${s.thumbs} of 24 thumbnails drawn (every one is, on screen or not)`);
  assert(s.cross === 3, `the cross row on screen drew ${s.cross} of its 3 maps`);
  assert(
    s.decoder === 0 && s.lines === 0,
    `off screen, the decoder row drew ${s.decoder} maps, the head view ${s.lines} lines`,
  );
  // A second snapshot changes a decoder head: its thumbnail is redrawn, its row (off screen) is not.
  await page.evaluate(() => (window.__counting = true));
  await page.evaluate(POST, { step: 12, bump: ['decoder_self:1.2'], v: V });
  await page.waitForFunction(() => document.body.dataset.renderDone && window.__counts.redrawn.length > 0);
  const redrawn = await page.evaluate(() => window.__counts.redrawn);
  assert(redrawn.join() === 'decoder_self:1.2', `redrawn ${redrawn.join(', ')}; want decoder_self:1.2 alone`);
  // Scrolled into view, the row and the head view draw the snapshot shown (step 12).
  await page.evaluate(() => document.querySelector('.aggregates[data-kind="decoder_self"]').scrollIntoView());
  await page.waitForFunction(
    () => document.querySelectorAll('canvas.aggregate[data-kind="decoder_self"][data-drawn="1"]').length === 3,
  );
  await page.evaluate(() => document.getElementById('head-view').scrollIntoView());
  await page.waitForFunction(() => document.querySelectorAll('#head-view line:not(.spare)').length > 0);
  s = await state();
  // The head view shows encoder self layer 0: 4 heads × 5 queries × 5 keys, every weight ≥ 1/512.
  assert(s.lines === 4 * 5 * 5, `the head view drew ${s.lines} lines, want 100`);
  const step = await page.evaluate(() => document.querySelector('#head-view .hv-header').dataset.step);
  assert(step === '12', `the head view says step ${step}, want 12`);
  await page.close();
});

test('issue 34: the attention view after two live snapshots, dark and light (screenshots)', async () => {
  for (const theme of ['dark', 'light']) {
    const page = await openPanel('attention', { width: 1400, height: 1800 }, theme);
    await postLiveState(page, 12);
    await page.evaluate(POST, { step: 10, bump: [], v: V });
    await page.waitForFunction(() => document.body.dataset.renderDone);
    await page.evaluate(POST, { step: 12, bump: ['encoder_self:0.1', 'cross:1.3'], v: V });
    await page.waitForFunction(
      () => document.body.dataset.renderDone && document.getElementById('view-header').dataset.step === '12',
    );
    await page.click('canvas.thumb[data-kind="cross"][data-layer="1"][data-head="3"]');
    await page.waitForFunction(() => document.getElementById('detail').data?.[0]?.type === 'heatmap');
    // The pointer on a cell: its row and column marked on every cross map, the readout filled.
    const box = await page.locator('canvas.thumb[data-kind="cross"][data-layer="0"][data-head="1"]').boundingBox();
    await page.mouse.move(box.x + (2.5 * box.width) / 5, box.y + (1.5 * box.height) / 4);
    await page.waitForFunction(() => document.getElementById('readout').textContent.startsWith('cross:0.1'));
    const n = await page.evaluate(() => ({
      thumbs: document.querySelectorAll('canvas.thumb[data-drawn="1"]').length,
      marks: document.querySelectorAll('.crosshair').length,
    }));
    assert(n.thumbs === 24 && n.marks === 2 * (8 + 3), `drawn ${n.thumbs} thumbnails, ${n.marks} crosshair bars`);
    await page.screenshot({ path: join(artifacts, `attention-issue34-${theme}.png`), fullPage: true });
    await page.close();
  }
});
