// The Global Q/K view's hand-made view (two pairs of cross:0.1 of reverse-micro) and the helpers its
// Chromium tests share (global.mjs, globalKey.mjs): the message that shows it, each token's hue by
// hand, and the colour of a screenshot at a page point.
import { V, panelHeader } from './harness.mjs';
import { decodePng } from './png.mjs';

const RUN = '/runs/reverse-micro';
// cross:0.1 of two pairs: queries are the target side (<s> first), keys the source side (</s> last).
// Queries on the line y = 0 at x = 0…5, keys on y = 3: far apart, so each is hovered and clicked alone.
export const PAIRS = [
  {
    src: [4, 5, 2],
    tgt: [5, 4],
    words: { src: '4 5', tgt: '5 4' },
    srcTokens: ['4', '5', '</s>'],
    tgtTokens: ['<s>', '5', '4'],
  },
  {
    src: [6, 7, 2],
    tgt: [7, 6],
    words: { src: '6 7', tgt: '7 6' },
    srcTokens: ['6', '7', '</s>'],
    tgtTokens: ['<s>', '7', '6'],
  },
];
const side = (role) => PAIRS.flatMap((p, s) => (role === 'q' ? p.tgtTokens : p.srcTokens).map((t, i) => [s, i, t]));
export const ALL = [...side('q').map((x) => ['q', ...x]), ...side('k').map((x) => ['k', ...x])];
export const VIEW = {
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
// The palette (webview/global/plot.ts TOKEN_HUES), written out by hand: token j of the view's tokens
// in order (whole numbers by value, then the rest by code units) takes hue j mod 12.
export const PALETTE = '4e79a7 f28e2b e15759 76b7b2 59a14f edc948 b07aa1 ff9da7 9c755f bab0ac 17becf bcbd22'
  .split(' ')
  .map((x) => `#${x}`);
// The view's tokens sorted ('4' < … < '7' < '</s>' < '<s>') take the palette's first six.
export const HUE = Object.fromEntries(['4', '5', '6', '7', '</s>', '<s>'].map((tok, j) => [tok, PALETTE[j]]));
const HEADER = panelHeader(RUN, [10, 20]);
export const state = (view) => ({
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

export const near = (got, want, tol = 40) => got.every((c, j) => Math.abs(c - want[j]) <= tol);
/** The screenshot's colour at page point (x, y), and whether any pixel within `r` CSS px is near `want`. */
export async function shot(page, path, dpr) {
  const png = decodePng(await page.screenshot({ path }));
  const rgb = (x, y) => {
    const at = (Math.floor(y * dpr) * png.width + Math.floor(x * dpr)) * png.channels;
    return [...png.px.subarray(at, at + 3)];
  };
  const ringHas = (x, y, want, r = 5) => {
    for (let dy = -r; dy <= r; dy += 0.5)
      for (let dx = -r; dx <= r; dx += 0.5) if (dx * dx + dy * dy >= 4 && near(rgb(x + dx, y + dy), want)) return true;
    return false;
  };
  return { rgb, ringHas };
}

export const drawnAs = (page, what) =>
  page.waitForFunction((w) => document.getElementById('global-canvas')?.dataset.drawn === w, what, {
    timeout: 20_000,
  });
