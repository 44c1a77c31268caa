// Issue 26 items 6 and 14 as drawn: the attention view's checkpoint box names the step the view
// shows; its run/step header stays in sight when the page is scrolled to the bottom; the
// cross-attention the README points to is in sight without scrolling; the Beam Tree's box shows
// the chosen leaf of a tree wider than the old box.
import { join } from 'node:path';
import { POST_ATTENTION, V, artifacts, assert, openPanel, panelHeader, send, test } from './harness.mjs';

const HEADER = panelHeader('/runs/test', [1500, 750, 250], { run: 'reverse-tiny', step: 750 });
const attentionState = (header) => ({
  type: 'state',
  v: V,
  state: { panel: 'attention', header, attention: null, selected: null, roles: [] },
});
const selectedText = (page) =>
  page.evaluate(() => {
    const box = document.getElementById('input-step');
    return box.options[box.selectedIndex]?.textContent;
  });

test('issue 26: the checkpoint box names the checkpoint the view shows, “newest” only when no step is chosen', async () => {
  const page = await openPanel('attention');
  await send(page, attentionState(HEADER)); // after a click on checkpoint 750
  const clicked = await selectedText(page);
  assert(clicked === 'step 750', `the box says “${clicked}” while the header shows step 750`);
  await send(page, attentionState({ ...HEADER, step: null }));
  const newest = await selectedText(page);
  assert(newest === 'newest checkpoint (1500)', `with no step chosen the box says “${newest}”`);
  await send(page, attentionState({ ...HEADER, step: 250 }));
  assert((await selectedText(page)) === 'step 250', 'another checkpoint clicked');
  // A step the user picks in the box stays until the view shows another step.
  await page.selectOption('#input-step', '1500');
  await send(page, attentionState({ ...HEADER, step: 250, live: true }));
  assert((await selectedText(page)) === 'step 1500', 'the user’s pick survives a redraw of the same step');
  await page.close();
});

test('the attention form’s boxes show their whole placeholders at the widths of a side panel, and the view says what to type', async () => {
  // heads-roles.png (VS Code, 1600 px, two columns): "target (optional: decoded when empty)" was cut.
  const page = await openPanel('attention', { width: 560, height: 700 });
  for (const [vocab, width] of [true, false].flatMap((v) => [420, 560, 640, 800, 1000].map((w) => [v, w]))) {
    await page.setViewportSize({ width, height: 700 });
    await send(page, attentionState({ ...HEADER, vocab }));
    const boxes = await page.evaluate(() =>
      ['input-src', 'input-tgt'].map((id) => {
        const box = document.getElementById(id);
        const s = getComputedStyle(box);
        const ctx = document.createElement('canvas').getContext('2d');
        ctx.font = `${s.fontStyle} ${s.fontWeight} ${s.fontSize} ${s.fontFamily}`;
        const inner = box.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
        return { id, text: box.placeholder, width: ctx.measureText(box.placeholder).width, inner };
      }),
    );
    for (const b of boxes)
      assert(
        b.width <= b.inner,
        `${width} px: ${b.id}: “${b.text}” is ${b.width.toFixed(0)} px in a ${b.inner} px box`,
      );
    // What to type, as the boxes say: a run without a vocabulary reads token ids.
    const said = await page.locator('#status').innerText();
    const type = vocab ? 'type a sentence above' : 'type token ids above';
    assert(said.includes(type), `${vocab ? 'a vocabulary' : 'no vocabulary'}: the view says “${said}”`);
  }
  await page.screenshot({ path: join(artifacts, 'attention-form-1000.png') });
  await page.close();
});

test('issue 26: the attention view’s header stays in sight scrolled to the bottom, and the cross-attention is in sight at once', async () => {
  // Half of a 1600 × 900 window: the attention view beside the editor.
  const page = await openPanel('attention', { width: 800, height: 860 });
  await send(page, attentionState({ ...HEADER, step: null }));
  await page.evaluate(POST_ATTENTION, {
    S: 12,
    T: 12,
    L: 3,
    H: 4,
    kinds: ['encoder_self', 'decoder_self', 'cross'],
    fill: 0.1,
    step: 1500,
  });
  await page.waitForFunction(() => document.body.dataset.renderDone);
  const top = await page.evaluate(() => ({
    cross: document.querySelector('section.kind[data-kind="cross"]').getBoundingClientRect().top,
    height: window.innerHeight,
  }));
  assert(top.cross < top.height - 100, `the cross-attention starts at y ${top.cross} of a ${top.height} px view`);
  await page.screenshot({ path: join(artifacts, 'layout-attention-top.png') });
  await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
  const scrolled = await page.evaluate(() => {
    const el = document.getElementById('view-header');
    const r = el.getBoundingClientRect();
    const hit = document.elementFromPoint(r.left + 20, r.top + r.height / 2);
    return {
      y: window.scrollY,
      top: r.top,
      bottom: r.bottom,
      text: el.textContent,
      onTop: el.contains(hit),
    };
  });
  assert(scrolled.y > 300, `the page scrolled (${scrolled.y} px): a test that cannot fail otherwise`);
  assert(
    scrolled.top >= 0 && scrolled.bottom <= 860 && scrolled.onTop,
    `the header scrolled away: ${JSON.stringify(scrolled)}`,
  );
  assert(scrolled.text.includes('reverse-tiny') && scrolled.text.includes('step 1500'), scrolled.text);
  await page.screenshot({ path: join(artifacts, 'layout-attention-scrolled.png') });
  await page.close();
});

/** A beam-2 search 16 tokens deep: the chosen path and one pruned sibling a step. */
function deepTree() {
  const nodes = [
    { id: 0, parent: -1, depth: 0, token: 1, logProb: 0, score: 0, status: 'expanded', chosen: true, text: '<s>' },
  ];
  let parent = 0;
  for (let d = 1; d <= 16; d++) {
    const last = d === 16;
    const chosen = { id: nodes.length, parent, depth: d, token: 4, logProb: -0.1 * d, score: -0.1, chosen: true };
    nodes.push({ ...chosen, status: last ? 'finished' : 'expanded', text: last ? '</s>' : `w${d}` });
    nodes.push({
      id: nodes.length,
      parent,
      depth: d,
      token: 5,
      logProb: -3 * d,
      score: -3,
      status: 'pruned',
      chosen: false,
      text: `p${d}`,
    });
    parent = chosen.id;
  }
  return {
    runDir: '/runs/test',
    step: 1500,
    checkpoint: '/runs/test/checkpoints/step-1500.safetensors',
    input: 'a long sentence',
    srcIds: [4, 4, 2],
    srcTokens: ['a', 'a', '</s>'],
    beam: 2,
    alpha: 0.6,
    earlyStop: 'exact',
    nodes,
    nBest: [parent],
    greedy: [4],
  };
}

test('issue 26: the Beam Tree’s box takes the free width and shows the chosen leaf', async () => {
  const page = await openPanel('beam', { width: 1200, height: 800 });
  const tree = deepTree();
  const leaf = tree.nBest[0];
  await send(page, {
    type: 'state',
    v: V,
    state: { panel: 'beam', header: { ...HEADER, step: 1500 }, tree, node: null },
  });
  await page.waitForSelector(`#beam-tree g[data-node="${leaf}"]`);
  const seen = await page.evaluate((id) => {
    const box = document.querySelector('.beam-tree').getBoundingClientRect();
    const node = document.querySelector(`#beam-tree g[data-node="${id}"]`).getBoundingClientRect();
    return { box: [box.left, box.top, box.right, box.bottom], node: [node.left, node.top, node.right, node.bottom] };
  }, leaf);
  const [l, t, r, b] = seen.box;
  const [nl, nt, nr, nb] = seen.node;
  assert(r - l > 900, `the tree's box is ${r - l} px wide in a 1200 px panel`);
  assert(nl >= l && nr <= r && nt >= t && nb <= b, `the chosen leaf ${seen.node} lies outside the box ${seen.box}`);
  assert(nr <= 1200 && nb <= 800, `the chosen leaf ${seen.node} is outside the window`);
  await page.screenshot({ path: join(artifacts, 'layout-beam-tree.png') });
  await page.close();
});
