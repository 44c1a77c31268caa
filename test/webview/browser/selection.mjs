// What every panel says it shows, the shared step cursor, the inspector's colour bar, escaped token
// labels, the attention view's input form, the page's own guard, and layouts that fit.
import { join } from 'node:path';
import {
  V,
  VIRIDIS,
  artifacts,
  assert,
  headState,
  hexRgb,
  openBrokenPanel,
  openPanel,
  panelHeader,
  posted,
  send,
  test,
} from './harness.mjs';

const HEADER = panelHeader('/runs/reverse-tiny', [100, 200, 300]);
const source = (step, input = 'probe') => ({ runDir: '/runs/reverse-tiny', step, input });
/** A 5×5 encoder map whose rows are shifts of [0.23, 0.2, 0.19, 0.19, 0.19]: its largest weight is 0.23, at (0, 0). */
const ROW = [0.23, 0.2, 0.19, 0.19, 0.19];
const map5 = Array.from({ length: 5 }, (_, q) => ROW.map((_, k) => ROW[(k - q + 5) % 5])).flat();
const snapshot = (step, tokens = ['<s>', 'a', 'b', 'c', '</s>']) => ({
  source: source(step),
  srcTokens: tokens,
  tgtTokens: ['<s>', 'x'],
  maps: [{ kind: 'encoder_self', shape: [1, 1, 5, 5], weights: map5 }],
});

/** The inspector on encoder head 0 with snapshots at steps 100, 200 and 300, showing 300. */
const historyState = (losses = []) => ({
  panel: 'head',
  header: HEADER,
  head: { kind: 'encoder_self', layer: 0, head: 0 },
  attention: snapshot(300),
  snapshots: [snapshot(100), snapshot(200), snapshot(300)],
  losses,
  cursor: null,
});

test('the inspector’s slider moves the shared step cursor, and the dashboard marks that step', async () => {
  const head = await openPanel('head');
  await headState(
    head,
    historyState([
      { step: 100, loss: 2.5 },
      { step: 200, loss: 1.25 },
    ]),
  );
  await head.waitForFunction(() => document.body.dataset.drawnStep === '300');
  await head.locator('#step-slider').fill('1');
  await head.waitForFunction(() => document.body.dataset.drawnStep === '200');
  // The cursor is posted once a frame, after the draw: wait for that frame, not the draw.
  await head.waitForFunction(() => window.__posted.some((m) => m.type === 'cursor'));
  const cursor = await posted(head, 'cursor');
  assert(cursor.length === 1 && cursor[0].step === 200, `posted ${JSON.stringify(cursor)}`);
  const label = await head.locator('#step-label').innerText();
  assert(label.includes('step 200') && label.includes('loss 1.2500'), `slider label: ${label}`);
  const header = await head.locator('#view-header').innerText();
  assert(header.includes('reverse-tiny') && header.includes('step 200') && header.includes('probe'), header);
  await head.close();

  const dash = await openPanel('dashboard');
  const rows = Array.from({ length: 300 }, (_, i) => ({
    step: i + 1,
    loss: 3 - i / 150,
    lr: 1e-4,
    tokensPerSec: 1000,
    gradNorm: 1,
  }));
  await send(dash, {
    type: 'state',
    v: V,
    state: { panel: 'dashboard', header: HEADER, rows, schedule: null, cursor: null, events: [] },
  });
  await send(dash, { type: 'cursor', v: V, step: 200, loss: 1.25 });
  await dash.waitForFunction(() => document.body.dataset.cursor === '200');
  // The marker: a vertical shape at step 200 in the layout, drawn where the x axis puts step 200.
  const markerAt = () =>
    dash.evaluate(() => {
      const gd = document.getElementById('chart-loss');
      const shape = gd._fullLayout.shapes.find((s) => s.x0 === s.x1);
      const path = gd.querySelector('.shapelayer path')?.getAttribute('d') ?? '';
      const xa = gd._fullLayout.xaxis;
      return { x0: shape?.x0, px: Number(/M([\d.]+),/.exec(path)?.[1]), want: xa._offset + xa.d2p(200) };
    });
  let marker = await markerAt();
  for (let i = 0; i < 50 && !(Math.abs(marker.px - marker.want) <= 1.5); i++) {
    await dash.waitForTimeout(100); // plotly redraws after its queue
    marker = await markerAt();
  }
  assert(marker.x0 === 200, `the loss chart's marker is at ${marker.x0}`);
  assert(
    Math.abs(marker.px - marker.want) <= 1.5,
    `the marker is drawn at x=${marker.px}, step 200 is at ${marker.want}`,
  );
  // A click on the loss curve moves the cursor to the step clicked.
  const target = await dash.evaluate(() => {
    const gd = document.getElementById('chart-loss');
    const r = gd.querySelector('.nsewdrag').getBoundingClientRect();
    const fl = gd._fullLayout;
    return { x: r.left + fl.xaxis.d2p(150), y: r.top + fl.yaxis.d2p(3 - 149 / 150) };
  });
  await dash.mouse.move(target.x, target.y);
  await dash.mouse.click(target.x, target.y);
  await dash.waitForFunction(() => window.__posted.some((m) => m.type === 'cursor'), null, { timeout: 5000 });
  const clicked = (await posted(dash, 'cursor'))[0].step;
  assert(Math.abs(clicked - 150) <= 3, `a click at step 150 posted cursor ${clicked}`);
  await dash.screenshot({ path: join(artifacts, 'dashboard-cursor.png') });
  await dash.close();
});

test('a token label <s> is drawn as text, in plotly’s labels and in tables', async () => {
  const head = await openPanel('head');
  await headState(head, {
    panel: 'head',
    header: HEADER,
    head: { kind: 'encoder_self', layer: 0, head: 0 },
    attention: snapshot(300),
    snapshots: [],
    losses: [],
    cursor: null,
  });
  await head.waitForFunction(() => document.querySelectorAll('#entropy .ytick text').length === 5);
  const ticks = await head.evaluate(() =>
    [...document.querySelectorAll('#entropy .ytick text')].map((t) => t.textContent),
  );
  assert(ticks.includes('<s> ‹0›') && ticks.includes('</s> ‹4›'), `entropy labels: ${ticks}`);
  const cells = await head.evaluate(() => [...document.querySelectorAll('#topk td')].map((t) => t.textContent));
  assert(cells[0] === '<s> ‹0›', `top-k table: ${cells.slice(0, 4)}`);
  await head.close();
  const view = await openPanel('attention');
  await view.evaluate((v) => {
    window.postMessage(
      {
        type: 'attention',
        v,
        source: { runDir: '/runs/r', step: 3, input: 'probe' },
        srcTokens: ['<s>', 'a', '</s>'],
        tgtTokens: ['<s>'],
        maps: [{ kind: 'encoder_self', shape: [1, 1, 3, 3], weights: new Float32Array(9).fill(1 / 3) }],
      },
      '*',
    );
  }, V);
  await view.waitForFunction(() => document.body.dataset.renderDone);
  await view.click('canvas.thumb');
  await view.waitForFunction(() => document.querySelectorAll('#detail .xtick text').length === 3);
  const axis = await view.evaluate(() =>
    [...document.querySelectorAll('#detail .xtick text')].map((t) => t.textContent),
  );
  assert(axis[0] === '<s> ‹0›' && axis[2] === '</s> ‹2›', `detail axis: ${axis}`);
  await view.close();
});

test('the inspector has a colour bar, scaled to the map’s maximum or, checked, to 1', async () => {
  const head = await openPanel('head');
  await headState(head, {
    panel: 'head',
    header: HEADER,
    head: { kind: 'encoder_self', layer: 0, head: 0 },
    attention: snapshot(300),
    snapshots: [],
    losses: [],
    cursor: null,
  });
  await head.waitForFunction(() => document.body.dataset.drawnStep === '300');
  const read = () =>
    head.evaluate(() => {
      const bar = document.getElementById('colorbar');
      const px = (x) => Array.from(bar.getContext('2d').getImageData(x, 5, 1, 1).data.slice(0, 3));
      const map = document.getElementById('head-map');
      const cell = map
        .getContext('2d')
        .getImageData(Math.floor(map.width / 10), Math.floor(map.height / 10), 1, 1).data;
      return {
        left: px(0),
        right: px(bar.width - 1),
        max: document.getElementById('colorbar-max').textContent,
        top: Array.from(cell.slice(0, 3)),
      };
    });
  const own = await read();
  const near = (a, hex, tol = 3) => hexRgb(hex).every((v, i) => Math.abs(v - a[i]) <= tol);
  assert(near(own.left, VIRIDIS[0]) && near(own.right, VIRIDIS[1]), `colour bar ends ${own.left} … ${own.right}`);
  // The map's largest weight is 0.23: its own scale tops out there, and that cell is viridis(1).
  assert(own.max === '0.23', `scale top ${own.max}`);
  assert(near(own.top, VIRIDIS[1]), `the 0.23 cell is ${own.top} on its own scale`);
  await head.check('#absolute');
  await head.waitForFunction(() => document.getElementById('colorbar-max').textContent === '1.00');
  const abs = await read();
  // On 0–1, 0.23 lies between viridis's stops at 0.125 and 0.25: close to the 0.25 stop, far from yellow.
  assert(!near(abs.top, VIRIDIS[1], 60) && near(abs.top, VIRIDIS[0.25], 20), `0.23 on 0–1 drawn as ${abs.top}`);
  await head.screenshot({ path: join(artifacts, 'head-colorbar.png'), fullPage: true });
  await head.close();
});

test('the attention view’s form asks for a pair at a checkpoint (text, or ids for a run without vocabulary)', async () => {
  const page = await openPanel('attention');
  await send(page, {
    type: 'state',
    v: V,
    state: { panel: 'attention', header: HEADER, attention: null, selected: null, roles: [] },
  });
  const status = await page.locator('#status').innerText();
  assert(status.includes('type a sentence'), `an empty view says what to do: ${status}`);
  await page.fill('#input-src', 'the cat sat');
  await page.selectOption('#input-step', '200');
  await page.click('#input-show');
  const text = (await posted(page, 'inspectInput'))[0];
  assert(
    text.input.kind === 'text' && text.input.src === 'the cat sat' && text.input.tgt === undefined && text.step === 200,
    JSON.stringify(text),
  );
  await send(page, {
    type: 'state',
    v: V,
    state: { panel: 'attention', header: { ...HEADER, vocab: false }, attention: null, selected: null, roles: [] },
  });
  await page.fill('#input-src', '5 6 x');
  await page.click('#input-show');
  assert((await page.locator('#input-why').innerText()).includes('token ids'), 'ids only without a vocabulary');
  await page.fill('#input-src', '5 6 7');
  await page.fill('#input-tgt', '1 9');
  await page.click('#input-show');
  const ids = (await posted(page, 'inspectInput')).at(-1);
  assert(
    JSON.stringify(ids.input) === JSON.stringify({ kind: 'ids', src: [5, 6, 7], tgt: [1, 9] }),
    JSON.stringify(ids),
  );
  await page.click('#input-probe');
  assert((await posted(page, 'inspectInput')).at(-1).input.kind === 'probe', 'the Probe button');

  // The boxes follow the pair the view shows each time it changes (e.g. one opened from the Global
  // Q/K view), target included, and keep what is typed while the same pair is redrawn.
  const show = async (input, target, step) => {
    const header = { ...HEADER, step, input, ...(target === undefined ? {} : { target }) };
    await send(page, {
      type: 'state',
      v: V,
      state: { panel: 'attention', header, attention: null, selected: null, roles: [] },
    });
    await page.waitForFunction((s) => document.getElementById('view-header').textContent.includes(`step ${s}`), step);
  };
  const boxes = async () => [await page.inputValue('#input-src'), await page.inputValue('#input-tgt')];
  await show('4 5 6', '6 5 4', 100);
  assert((await boxes()).join('|') === '4 5 6|6 5 4', `the pair shown: ${await boxes()}`);
  await page.fill('#input-src', '7 8');
  await show('4 5 6', '6 5 4', 200); // the same pair at another step
  assert((await boxes()).join('|') === '7 8|6 5 4', `what is typed stays: ${await boxes()}`);
  await show('9 9', undefined, 300);
  assert((await boxes()).join('|') === '9 9|', `another pair, its target decoded: ${await boxes()}`);
  await page.close();
});

test('a page whose script does not load says so instead of staying blank', async () => {
  const page = await openBrokenPanel('dashboard');
  await page.waitForSelector('#error:not([hidden])', { timeout: 10000 });
  const text = await page.locator('#error').innerText();
  assert(text.includes('could not load its script'), `the page says: ${text}`);
  await page.close();
});

test('panels fit their window: no horizontal scrolling at 1,600 or 800 pixels', async () => {
  for (const width of [1600, 800]) {
    for (const panel of ['head', 'attention', 'dashboard']) {
      const page = await openPanel(panel, { width, height: 900 });
      if (panel === 'head')
        await headState(page, {
          panel: 'head',
          header: HEADER,
          head: { kind: 'encoder_self', layer: 0, head: 0 },
          attention: snapshot(300, ['a-rather-long-token-label-that-goes-on', 'b', 'c', 'd', '</s>']),
          snapshots: [],
          losses: [],
          cursor: null,
        });
      await page.waitForTimeout(500);
      const over = await page.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      );
      assert(over <= 0, `${panel} at ${width} px scrolls ${over} px sideways`);
      await page.close();
    }
  }
});

test('the inspector’s play button walks the slider through the history, moving the cursor, then stops', async () => {
  const head = await openPanel('head');
  await headState(head, historyState());
  await head.waitForFunction(() => document.body.dataset.drawnStep === '300');
  await head.locator('#step-slider').fill('0');
  // The slider's own cursor (step 100) goes out on the next frame: cleared before it, it was counted
  // as the play's first step once.
  await head.waitForFunction(() => window.__posted.some((m) => m.type === 'cursor' && m.step === 100));
  await head.evaluate(() => (window.__posted.length = 0));
  await head.click('#play');
  assert((await head.locator('#play').innerText()) === '⏸', 'playing shows pause');
  await head.waitForFunction(() => document.querySelector('#play').textContent === '▶', null, { timeout: 5000 });
  // The last step's cursor goes out on the frame after its draw.
  await head.waitForFunction(() => window.__posted.some((m) => m.type === 'cursor' && m.step === 300));
  const steps = (await posted(head, 'cursor')).map((m) => m.step);
  assert(steps.join(',') === '200,300', `the cursor went through ${steps.join(',')}`);
  assert((await head.evaluate(() => document.body.dataset.drawnStep)) === '300', 'it ends at the newest step');
  await head.close();
});

test('a header wider than its panel wraps between its parts; only a part wider than the panel is cut', async () => {
  const dash = await openPanel('dashboard');
  const long = 'the quick brown fox jumps over the lazy dog '.repeat(8).trim();
  const header = (input) => ({
    ...HEADER,
    run: 'reverse-tiny-seed-1-with-a-long-name',
    step: 200,
    input,
    live: true,
    fork: { parent: '/runs/reverse-tiny', step: 100, edits: 'frozen cross:1.0; lr × 0.5' },
  });
  const show = (input) =>
    send(dash, {
      type: 'state',
      v: V,
      state: { panel: 'dashboard', header: header(input), rows: [], schedule: null, cursor: null, events: [] },
    });
  // Each part's box against the header's: cut when its text is wider than its box or past the edge.
  const laidOut = () =>
    dash.evaluate(() => {
      const el = document.getElementById('view-header');
      const right = el.getBoundingClientRect().right;
      const parts = [...el.children].map((s) => ({
        text: s.textContent,
        cut: s.scrollWidth > s.clientWidth + 1 || s.getBoundingClientRect().right > right + 0.5,
        top: s.getBoundingClientRect().top,
      }));
      return { parts, page: document.documentElement.scrollWidth, window: window.innerWidth };
    });
  for (const width of [640, 420]) {
    await dash.setViewportSize({ width, height: 600 });
    await show('probe');
    // The header of the width before may still show the long input at step 200: wait for the probe.
    await dash.waitForFunction(() => {
      const d = document.getElementById('view-header').dataset;
      return d.step === '200' && d.input === 'probe';
    });
    let h = await laidOut();
    assert(h.page <= h.window, `at ${width} px the page is ${h.page} px wide`);
    assert(h.parts.length >= 5 && h.parts.every((p) => !p.cut), `at ${width} px: ${JSON.stringify(h.parts)}`);
    assert(new Set(h.parts.map((p) => p.top)).size > 1, `at ${width} px the header should wrap`);
    // A separator ends the line it wraps on: no line starts with one.
    const starts = h.parts.filter((p, i) => i > 0 && p.top !== h.parts[i - 1].top).map((p) => p.text);
    assert(
      starts.every((t) => !t.trimStart().startsWith('·')),
      `at ${width} px lines start: ${starts}`,
    );
    await dash.screenshot({ path: join(artifacts, `header-wraps-${width}.png`) });
    // A typed input longer than the panel: that part alone ends in an ellipsis, the rest stay whole.
    await show(long);
    await dash.waitForFunction(() => document.getElementById('view-header').dataset.input.length > 100);
    h = await laidOut();
    assert(h.page <= h.window, `at ${width} px with a long input the page is ${h.page} px wide`);
    const cut = h.parts.filter((p) => p.cut).map((p) => p.text);
    assert(cut.length === 1 && cut[0].includes('quick brown fox'), `at ${width} px cut: ${JSON.stringify(cut)}`);
  }
  await dash.close();
});
