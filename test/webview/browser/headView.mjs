// The attention view's head view (issue 13): one layer's heads as lines from query tokens (left) to
// key tokens (right), as opaque as the known weights below, coloured by head from the theme, heads
// switched by clicking their colour, a token's lines alone while it is hovered. Screenshots in the
// dark and the light theme.
import { join } from 'node:path';
import { DARK_THEME, LIGHT_THEME, V, artifacts, assert, hexRgb, openPanel, test } from './harness.mjs';

// Encoder self-attention over 3 source tokens, 2 layers × 3 heads; layer 2 (index 1):
//   head 1: [[.7, .3, 0], [0, 1, 0], [.2, .2, .6]]
//   head 2: [[0, 0, 1], [.5, .5, 0], [0, 0, 1]]
//   head 3: [[.4, .3, .3], [.1, .8, .1], [.25, .25, .5]]
// Layer 1 is the identity for every head (a view of the wrong layer would show it).
// Cross attention, 2 target × 3 source tokens, layer 1 only, 3 heads:
//   head 1: [[1, 0, 0], [0, .5, .5]], head 2: [[0, 1, 0], [.9, .1, 0]], head 3: [[.6, .4, 0], [0, 0, 1]].
const EYE = [1, 0, 0, 0, 1, 0, 0, 0, 1];
const ENC = [
  [0.7, 0.3, 0, 0, 1, 0, 0.2, 0.2, 0.6],
  [0, 0, 1, 0.5, 0.5, 0, 0, 0, 1],
  [0.4, 0.3, 0.3, 0.1, 0.8, 0.1, 0.25, 0.25, 0.5],
];
const CROSS = [
  [1, 0, 0, 0, 0.5, 0.5],
  [0, 1, 0, 0.9, 0.1, 0],
  [0.6, 0.4, 0, 0, 0, 1],
];
const SRC = ['the', 'cat', '</s>'];
const TGT = ['<s>', 'die'];
/** Every non-zero weight of a layer as `head:q:k` → weight (the zeros draw no line). */
function expected(heads, k) {
  const out = new Map();
  heads.forEach((w, hd) => w.forEach((x, i) => x > 0 && out.set(`${hd}:${Math.floor(i / k)}:${i % k}`, x)));
  return out;
}

async function open(theme) {
  const page = await openPanel('attention', { width: 1400, height: 1400 }, theme);
  await page.evaluate(
    ({ v, enc, cross, src, tgt }) => {
      const header = {
        runDir: '/runs/hv',
        run: 'hv',
        step: 40,
        input: 'the cat',
        live: false,
        checkpoints: [40],
        vocab: true,
      };
      const attention = {
        source: { runDir: '/runs/hv', step: 40, input: 'input' },
        srcTokens: src,
        tgtTokens: tgt,
        maps: [
          { kind: 'encoder_self', shape: [2, 3, 3, 3], weights: new Float32Array(enc) },
          { kind: 'cross', shape: [1, 3, 2, 3], weights: new Float32Array(cross) },
        ],
      };
      const state = { panel: 'attention', header, attention, selected: null, roles: [], ablation: null };
      window.postMessage({ type: 'state', v, state }, '*');
    },
    { v: V, enc: [...EYE, ...EYE, ...EYE, ...ENC.flat()], cross: CROSS.flat(), src: SRC, tgt: TGT },
  );
  await page.waitForFunction(() => document.body.dataset.renderDone && document.getElementById('head-view'));
  return page;
}

/** Every line drawn (not the hidden spares kept for the next snapshot): head, query, key, opacity, colour, ends, shown. */
const drawn = (page) =>
  page.$$eval('#head-view svg line:not(.spare)', (ls) =>
    ls.map((l) => {
      const s = getComputedStyle(l);
      return {
        id: `${l.dataset.head}:${l.dataset.q}:${l.dataset.k}`,
        opacity: Number(l.getAttribute('stroke-opacity')),
        stroke: s.stroke,
        shows:
          s.visibility === 'visible' && s.display !== 'none' && getComputedStyle(l.parentElement).display !== 'none',
        y1: Number(l.getAttribute('y1')),
        y2: Number(l.getAttribute('y2')),
        x1: Number(l.getAttribute('x1')),
        x2: Number(l.getAttribute('x2')),
      };
    }),
  );
/** The vertical centre and the horizontal extent of each token label, per side. */
const labels = (page, side) =>
  page.$$eval(`#head-view .hv-token[data-side="${side}"] text`, (ts) =>
    ts.map((t) => {
      const b = t.getBBox();
      return { text: t.textContent, cy: b.y + b.height / 2, left: b.x, right: b.x + b.width };
    }),
  );

/** Checks the lines against a map of `head:q:k` → weight, and that each joins its two tokens' labels. */
async function checkLines(page, want, what) {
  const lines = await drawn(page);
  assert(lines.length === want.size, `${what}: ${lines.length} lines drawn, want ${want.size}`);
  const [left, right] = [await labels(page, 'q'), await labels(page, 'k')];
  for (const l of lines) {
    assert(want.has(l.id), `${what}: line ${l.id} has no weight`);
    const w = Math.fround(want.get(l.id));
    assert(Math.abs(l.opacity - w) < 1e-6, `${what}: line ${l.id} opacity ${l.opacity}, weight ${w}`);
    const [, q, k] = l.id.split(':').map(Number);
    assert(
      Math.abs(l.y1 - left[q].cy) < 2 && Math.abs(l.y2 - right[k].cy) < 2,
      `${what}: line ${l.id} ends off its tokens`,
    );
    assert(l.x1 >= left[q].right && l.x2 <= right[k].left, `${what}: line ${l.id} crosses a label`);
  }
  return lines;
}

test('head view: one line per head and token pair, as opaque as its weight, coloured by head; heads switch by their colour', async () => {
  const page = await open('dark');
  const header = await page.textContent('#head-view .hv-header');
  assert(/^hv.*step 40.*input “the cat”.*encoder self · layer 0/.test(header), `card header: ${header}`);
  assert((await drawn(page)).length === 9, 'layer 1 is the identity: 3 heads × 3 lines');

  await page.selectOption('#head-view-layer', '1');
  const want = expected(ENC, 3);
  const lines = await checkLines(page, want, 'layer 2');
  assert(want.size === 19, `${want.size} non-zero weights`);
  // Head 1's lines in the theme's first chart colour; each head one colour, the colour of its switch.
  const chips = await page.$$eval('#head-view .head-swatch .chip', (cs) =>
    cs.map((c) => getComputedStyle(c).backgroundColor),
  );
  assert(chips[0] === `rgb(${hexRgb(DARK_THEME['--vscode-charts-blue']).join(', ')})`, `head 1 colour ${chips[0]}`);
  assert(new Set(chips).size === 3, `head colours ${chips}`);
  for (const l of lines)
    assert(l.stroke === chips[Number(l.id[0])], `line ${l.id} is ${l.stroke}, its head ${chips[l.id[0]]}`);

  // A click on head 2's colour removes its 4 lines; a second brings them back.
  await page.click('#head-view .head-swatch[data-head="1"]');
  const without2 = new Map([...want].filter(([id]) => !id.startsWith('1:')));
  await checkLines(page, without2, 'head 2 off');
  assert((await page.getAttribute('#head-view .head-swatch[data-head="1"]', 'aria-pressed')) === 'false', 'switch off');
  await page.click('#head-view .head-swatch[data-head="1"]');
  await checkLines(page, want, 'head 2 on again');
  // A double click shows head 3 alone: its 9 lines.
  await page.dblclick('#head-view .head-swatch[data-head="2"]');
  await checkLines(page, new Map([...want].filter(([id]) => id.startsWith('2:'))), 'head 3 alone');
  await page.dblclick('#head-view .head-swatch[data-head="2"]');
  await checkLines(page, want, 'every head again');

  // Hovering query "cat" (row 1) shows its lines alone: head 1 → cat, head 2 → the, cat, head 3 → all three.
  await page.hover('#head-view .hv-token[data-side="q"][data-index="1"]');
  const shown = (await drawn(page)).filter((l) => l.shows).map((l) => l.id);
  assert(shown.sort().join() === '0:1:1,1:1:0,1:1:1,2:1:0,2:1:1,2:1:2', `hovering cat shows ${shown}`);
  // …and on each key a box split into one slot per head, each as opaque as that head's weight from "cat".
  const boxes = await page.$$eval('#head-view .hv-boxes rect', (rs) =>
    rs.map((r) => ({
      head: Number(r.dataset.head),
      opacity: Number(r.getAttribute('fill-opacity')),
      x: r.getBBox().x,
      cy: r.getBBox().y + r.getBBox().height / 2,
      fill: getComputedStyle(r).fill,
    })),
  );
  const keys = await labels(page, 'k');
  const boxWant = new Map([...want].filter(([id]) => id.split(':')[1] === '1'));
  assert(boxes.length === boxWant.size, `${boxes.length} boxes, want ${boxWant.size}`);
  for (const b of boxes) {
    const k = keys.findIndex((t) => Math.abs(t.cy - b.cy) < 2);
    const w = boxWant.get(`${b.head}:1:${k}`);
    assert(
      w !== undefined && Math.abs(b.opacity - Math.fround(w)) < 1e-6,
      `box of head ${b.head} on key ${k}: ${b.opacity}`,
    );
    assert(b.fill === chips[b.head], `box of head ${b.head} is ${b.fill}`);
  }
  const slotX = [...new Set(boxes.map((b) => `${b.head}@${Math.round(b.x)}`))].sort();
  assert(new Set(slotX.map((s) => s.split('@')[1])).size === 3, `one slot per head: ${slotX}`);
  await page.locator('#head-view').screenshot({ path: join(artifacts, 'head-view-hover-dark.png') });
  await page.mouse.move(0, 0);
  assert(
    (await drawn(page)).every((l) => l.shows),
    'leaving the token shows every line again',
  );

  // Cross attention: targets on the left, sources on the right.
  await page.selectOption('#head-view-kind', 'cross');
  const left = (await labels(page, 'q')).map((t) => t.text);
  const right = (await labels(page, 'k')).map((t) => t.text);
  assert(left.join() === TGT.join() && right.join() === SRC.join(), `cross columns ${left} | ${right}`);
  await checkLines(page, expected(CROSS, 3), 'cross');
  assert((await page.inputValue('#head-view-layer')) === '0', 'cross has one layer: layer 1');
  await page.selectOption('#head-view-kind', 'encoder_self');
  await page.selectOption('#head-view-layer', '1');
  await page.locator('#head-view').screenshot({ path: join(artifacts, 'head-view-dark.png') });
  await page.close();
});

test('head view follows the light theme, and says so rather than draw past its token limit', async () => {
  const page = await open('light');
  await page.selectOption('#head-view-layer', '1');
  const chip = await page.$eval('#head-view .head-swatch .chip', (c) => getComputedStyle(c).backgroundColor);
  assert(chip === `rgb(${hexRgb(LIGHT_THEME['--vscode-charts-blue']).join(', ')})`, `light head 1 colour ${chip}`);
  const fill = await page.$eval('#head-view svg text', (t) => getComputedStyle(t).fill);
  assert(fill === `rgb(${hexRgb(LIGHT_THEME['--vscode-editor-foreground']).join(', ')})`, `token colour ${fill}`);
  await checkLines(page, expected(ENC, 3), 'light');
  await page.locator('#head-view').screenshot({ path: join(artifacts, 'head-view-light.png') });

  // 200 source tokens: more than the view draws; it says how many, draws no line.
  await page.evaluate(() => {
    const n = 200;
    const w = new Float32Array(n * n).fill(1 / n);
    const srcTokens = Array.from({ length: n }, (_, i) => `s${i}`);
    window.postMessage(
      {
        type: 'attention',
        v: 3,
        source: { runDir: '/runs/hv', step: 41, input: 'probe' },
        srcTokens,
        tgtTokens: ['<s>'],
        maps: [{ kind: 'encoder_self', shape: [1, 1, n, n], weights: w }],
      },
      '*',
    );
  });
  await page.waitForFunction(() => document.getElementById('head-view-note')?.textContent.includes('200 × 200'));
  const note = await page.textContent('#head-view-note');
  assert(/up to 150 tokens/.test(note), note);
  assert((await drawn(page)).length === 0, 'no lines past the limit');
  await page.close();
});
