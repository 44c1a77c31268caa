// The Global Q/K view's token key: coloured by token, the page says which hue is which token, right
// of the plot (webview/global/canvas.ts). Checked as drawn: each row's dot on screen is its token's hue
// by hand (the view's tokens in order, numbers by value, the palette in order); past twelve tokens the hues
// repeat, and the key shows the thirteenth in the first one's hue; where the plot is too short for
// every token, the last row says how many more there are; coloured by position or by query/key there
// is no token key. Light at pixel ratio 2, dark at 1; screenshots in test-artifacts/webview/.
import { join } from 'node:path';
import { artifacts, assert, hexRgb, openPanel, problems, send, test } from './harness.mjs';
import { HUE, PALETTE, VIEW, drawnAs, near, shot, state } from './globalFixture.mjs';

const keyOf = (page) => page.evaluate(() => JSON.parse(document.getElementById('global-canvas').dataset.key));
/** A row's swatch centre on the page: the canvas's place plus the row's CSS pixels. */
const onPage = (page, row) =>
  page.evaluate(({ x, y }) => {
    const r = document.getElementById('global-canvas').getBoundingClientRect();
    return [r.left + x, r.top + y];
  }, row);

// Twenty queries, each its own token t00…t19 (sorted as written), one key: more tokens than hues.
const MANY = 20;
const manyTokens = Array.from({ length: MANY }, (_, i) => `t${String(i).padStart(2, '0')}`);
const MANY_VIEW = {
  ...VIEW,
  points: {
    x: [...manyTokens.map((_, i) => i), 0],
    y: [...manyTokens.map(() => 0), 3],
    role: [...manyTokens.map(() => 'q'), 'k'],
    sentence: [...manyTokens.map(() => 0), 0],
    position: [...manyTokens.map((_, i) => i % 3), 0],
    token: [...manyTokens, 't00'],
  },
};

for (const [theme, dpr] of [
  ['light', 2],
  ['dark', 1],
])
  test(`Global Q/K view (${theme}): coloured by token, a key names each token's hue`, async () => {
    const page = await openPanel('global', { width: 1200, height: 900, deviceScaleFactor: dpr }, theme);
    await send(page, state(VIEW));
    await drawnAs(page, '20 token 12');
    let key = await keyOf(page);
    const want = ['4', '5', '6', '7', '</s>', '<s>'];
    assert(key.map((r) => r.text).join(' ') === want.join(' '), `key rows ${key.map((r) => r.text)}`);
    let s = await shot(page, join(artifacts, `global-key-${theme}.png`), dpr);
    for (const row of key) {
      const got = s.rgb(...(await onPage(page, row)));
      assert(near(got, hexRgb(HUE[row.text])), `key row "${row.text}": ${got}, want ${HUE[row.text]}`);
    }

    // Numbers by value: 10 after 6, not before 4 as a string sort put it.
    const TEN = { ...VIEW, points: { ...VIEW.points, token: VIEW.points.token.map((t) => (t === '7' ? '10' : t)) } };
    await send(page, state(TEN));
    await page.waitForFunction(() => document.getElementById('global-canvas').dataset.key.includes('"10"'));
    key = await keyOf(page);
    assert(key.map((r) => r.text).join(' ') === '4 5 6 10 </s> <s>', `numbers by value: ${key.map((r) => r.text)}`);

    // Twenty tokens in a tall panel: every row fits, each in its hue; the thirteenth repeats the first.
    await send(page, state(MANY_VIEW));
    await drawnAs(page, `20 token ${MANY + 1}`);
    key = await keyOf(page);
    assert(key.map((r) => r.text).join(' ') === manyTokens.join(' '), `20 tokens' key: ${key.map((r) => r.text)}`);
    const header = await page.evaluate(() => document.getElementById('view-header').textContent);
    assert(header.includes('20 queries, 1 key') && !header.includes('1 keys'), `header: ${header}`);
    s = await shot(page, join(artifacts, `global-key-many-${theme}.png`), dpr);
    for (const [j, row] of key.entries()) {
      const got = s.rgb(...(await onPage(page, row)));
      const want = PALETTE[j % 12];
      assert(near(got, hexRgb(want)), `row ${j} ("${row.text}"): ${got}, want ${want}`);
    }

    // A short panel: fewer rows than tokens, the last says how many are left out, and the rows shown
    // plus that count are the twenty.
    await page.setViewportSize({ width: 1200, height: 380 });
    await page.waitForFunction(
      (n) => JSON.parse(document.getElementById('global-canvas').dataset.key).length < n,
      MANY,
    );
    key = await keyOf(page);
    const last = key.at(-1).text;
    const more = /^\+(\d+) more$/.exec(last);
    assert(more && key.at(-1).more && !key[0].more, `the last row says how many more: "${last}"`);
    assert(key.length - 1 + Number(more[1]) === MANY, `${key.length - 1} rows and ${last} make ${MANY}`);
    assert(
      key.slice(0, -1).every((r, j) => r.text === manyTokens[j]),
      `the first rows in order: ${key.map((r) => r.text)}`,
    );
    // As many rows as the plot's height holds (rows as far apart as they are tall).
    const box = await page.evaluate(() => document.getElementById('global-canvas').dataset.box.split(' ').map(Number));
    const rowHeight = key[1].y - key[0].y;
    assert(key.length === Math.floor(box[3] / rowHeight), `${key.length} rows of ${rowHeight} px in ${box[3]} px`);
    await page.screenshot({ path: join(artifacts, `global-key-short-${theme}.png`) });

    // A token wider than the key's column is cut with an ellipsis, and the plot keeps its width.
    const long = 'supercalifragilisticexpialidocious-and-then-some';
    const LONG_VIEW = {
      ...VIEW,
      points: { ...VIEW.points, token: VIEW.points.token.map((t) => (t === '7' ? long : t)) },
    };
    await page.setViewportSize({ width: 1200, height: 900 });
    await send(page, state(LONG_VIEW));
    await page.waitForFunction(
      (w) => JSON.parse(document.getElementById('global-canvas').dataset.key).some((r) => r.text === w),
      long,
    );
    key = await keyOf(page);
    const cut = key.find((r) => r.text === long);
    assert(cut.drawn.endsWith('…') && long.startsWith(cut.drawn.slice(0, -1)), `cut: "${cut.drawn}"`);
    assert(
      key.filter((r) => r !== cut).every((r) => r.drawn === r.text),
      'the short tokens are whole',
    );
    // The key takes at most 30% of the canvas beside a long token; the plot the rest, less its margins.
    const [plot, canvasWidth] = await page.evaluate(() => {
      const c = document.getElementById('global-canvas');
      return [c.dataset.box.split(' ').map(Number), c.getBoundingClientRect().width];
    });
    assert(plot[2] >= 0.7 * canvasWidth - 64 - 16, `the plot keeps its width beside a long token: ${plot}`);
    assert(
      key.every((r) => r.end <= canvasWidth),
      `every row ends within ${canvasWidth} px: ${key.map((r) => r.end)}`,
    );
    // At 420 px the key still fits the canvas.
    await page.setViewportSize({ width: 420, height: 700 });
    await page.waitForFunction(() => document.getElementById('global-canvas').getBoundingClientRect().width < 420);
    await page.evaluate(() => new Promise((r) => window.requestAnimationFrame(() => window.requestAnimationFrame(r))));
    const narrow = await page.evaluate(() => {
      const c = document.getElementById('global-canvas');
      return { rows: JSON.parse(c.dataset.key), width: c.getBoundingClientRect().width };
    });
    assert(
      narrow.rows.length > 0 && narrow.rows.every((r) => r.end <= narrow.width),
      `at 420 px every row ends within ${narrow.width} px: ${narrow.rows.map((r) => r.end)}`,
    );
    await page.screenshot({ path: join(artifacts, `global-key-420-${theme}.png`) });
    await page.screenshot({ path: join(artifacts, `global-key-long-${theme}.png`) });

    // By position or by query/key: no token key.
    for (const by of ['position', 'role']) {
      await page.selectOption('#colour-by', by);
      await drawnAs(page, `20 ${by} 12`);
      key = await keyOf(page);
      assert(key.length === 0, `coloured by ${by}, no token key: ${JSON.stringify(key)}`);
    }
    const mine = problems.filter((p) => p.startsWith('global:'));
    assert(mine.length === 0, `no CSP violation, console or page error: ${mine.join('; ')}`);
    await page.close();
  });
