// The Global Q/K view (issue 32 item 3, after AttentionViz): one head's queries and keys in 2-D,
// drawn on a canvas of the page's own. Checked as drawn, against a hand-made view, in screenshots' pixels
// at each point's place (mapped here from the plot box and the hand-worked data range): each query's dot
// is its token's hue and each key a ring of it; colouring by position is matplotlib's viridis (on the
// light theme cut where it falls under 3:1 against the page, read from the pixels) and by
// query/key the theme's chart colours; hovering each point (and 5 px off it) names its sentence, role,
// token, position and pair; a click asks for that pair at the view's step; the slider asks for another
// step; the header says run, head, step, basis and pairs, and wraps whole at 640 and 420 px; at
// 420 px wide the scatter fits and still works. On the dark theme viridis's dark violet start is cut
// as its yellow end is on the light one: each end of the position scale keeps 3:1 against the page.
// Dark at pixel ratio 1, light at 2; screenshots in test-artifacts/webview/.
import { join } from 'node:path';
import {
  DARK_THEME,
  LIGHT_THEME,
  V,
  VIRIDIS,
  artifacts,
  assert,
  hexRgb,
  openPanel,
  posted,
  problems,
  send,
  test,
} from './harness.mjs';
import { ALL, HUE, PAIRS, VIEW, drawnAs, near, shot, state } from './globalFixture.mjs';

// The plot's span by hand: the points' range widened by 5% of it each side (x 0…5, y 0…3).
const DOMAIN = [-0.25, 5.25, -0.15, 3.15];

/** Where point i of the view is on the page: the canvas's plot box (data-box) and DOMAIN, mapped here. */
async function pixelOf(page, i) {
  const { rect, box } = await page.evaluate(() => {
    const c = document.getElementById('global-canvas');
    const r = c.getBoundingClientRect();
    return { rect: [r.left, r.top], box: c.dataset.box.split(' ').map(Number) };
  });
  const [left, top, w, hgt] = box;
  const [x0, x1, y0, y1] = DOMAIN;
  return [
    rect[0] + left + ((VIEW.points.x[i] - x0) / (x1 - x0)) * w,
    rect[1] + top + hgt - ((VIEW.points.y[i] - y0) / (y1 - y0)) * hgt,
  ];
}

/** WCAG 2's relative luminance of [r, g, b] (0–255) and the contrast ratio of two colours. */
const luminance = (rgb) =>
  rgb
    .map((v) => v / 255)
    .map((v) => (v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4))
    .reduce((sum, v, j) => sum + v * [0.2126, 0.7152, 0.0722][j], 0);
const contrast = (a, b) => {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
};

const hoverText = (page) =>
  page.evaluate(() => {
    const el = document.getElementById('global-hover');
    return el.hidden ? null : el.textContent;
  });
/** Moves the mouse to (x, y) and waits for the frame that looks it up (pointer moves are coalesced per frame). */
async function hoverAt(page, x, y) {
  await page.mouse.move(x, y);
  await page.evaluate(() => new Promise((r) => window.requestAnimationFrame(() => window.requestAnimationFrame(r))));
  return hoverText(page);
}

const Q = ALL.flatMap((p, i) => (p[0] === 'q' ? [i] : []));
const K = ALL.flatMap((p, i) => (p[0] === 'k' ? [i] : []));
const BG = { dark: '#1f1f1f', light: '#ffffff' }; // scripts/panel-server.mjs's themes
const GRID = { dark: '#454545', light: '#c8c8c8' };
const ROLE = { dark: ['#3794ff', '#d18616'], light: ['#1a85ff', '#d18616'] };

for (const [theme, dpr] of [
  ['dark', 1],
  ['light', 2],
])
  test(`Global Q/K view (${theme}, pixel ratio ${dpr}): points, colours on screen, hover, click, slider, narrow`, async () => {
    const page = await openPanel('global', { width: 1200, height: 900, deviceScaleFactor: dpr }, theme);
    await send(page, state(VIEW));
    await drawnAs(page, '20 token 12');
    const canvas = await page.evaluate(() => {
      const c = document.getElementById('global-canvas');
      return { w: c.width, cssW: c.getBoundingClientRect().width, domain: c.dataset.domain.split(' ').map(Number) };
    });
    assert(
      Math.abs(canvas.w - canvas.cssW * dpr) <= 1,
      `backing store ${canvas.w} for ${canvas.cssW} CSS px at ${dpr}`,
    );
    assert(
      canvas.domain.every((d, i) => Math.abs(d - DOMAIN[i]) < 1e-9),
      `domain ${canvas.domain}, want ${DOMAIN}`,
    );
    const plotly = await page.evaluate(() => [
      typeof window.Plotly,
      !!document.getElementById('plotly-script'),
      document.getElementById('error').hidden,
    ]);
    assert(plotly.join() === 'undefined,false,true', `no plotly.js loaded, no error shown: ${plotly}`);

    // On screen: each query's dot is its token's hue; each key is a ring of its hue round the background.
    let at = await Promise.all(ALL.map((_, i) => pixelOf(page, i)));
    let s = await shot(page, join(artifacts, `global-${theme}-first.png`), dpr);
    for (const i of Q) {
      const got = s.rgb(...at[i]);
      const want = hexRgb(HUE[VIEW.points.token[i]]);
      assert(near(got, want), `query ${i} ("${VIEW.points.token[i]}"): ${got}, want ${want}`);
    }
    for (const i of K) {
      const want = hexRgb(HUE[VIEW.points.token[i]]);
      const centre = s.rgb(...at[i]); // the background, or a grid line through it
      assert(
        [BG[theme], GRID[theme]].some((c) => near(centre, hexRgb(c), 12)),
        `key ${i}'s centre is the background: ${centre}`,
      );
      assert(s.ringHas(...at[i], want), `key ${i} ("${VIEW.points.token[i]}") has a ring of ${want}`);
    }

    // Hover names the sentence, the role, the token, its position and the pair; the page hook hears it.
    // Each point hovered on it and 5 px right of and below it (within the 8 px reach), so a hit grid
    // looking in the wrong cells misses some.
    for (const i of [...Q, ...K])
      for (const d of [0, 5]) {
        const text = await hoverAt(page, at[i][0] + d, at[i][1] + d);
        const [, sentence, position, token] = ALL[i];
        const role = ALL[i][0] === 'q' ? 'query' : 'key';
        const side = ALL[i][0] === 'q' ? 'target' : 'source';
        const want = `sentence ${sentence} · ${role} “${token}” at ${side} position ${position}`;
        assert(text?.includes(want), `hover ${d} px from point ${i}: ${text}, want ${want}`);
        const p = PAIRS[sentence];
        assert(
          text.includes(`${p.srcTokens.join(' ')} → ${p.tgtTokens.slice(1).join(' ')}`),
          `names the pair: ${text}`,
        );
      }
    assert((await hoverAt(page, at[Q[0]][0] + 40, at[Q[0]][1] - 60)) === null, 'no label away from the points');
    await hoverAt(page, ...at[4]);
    await page.screenshot({ path: join(artifacts, `global-${theme}-hover.png`) });
    await send(page, { type: 'reportDrawn', v: V, cells: [] });
    await page.waitForFunction(() => window.__posted.some((m) => m.type === 'drawn'));
    const drawnMsg = (await posted(page, 'drawn')).at(-1);
    const marks = (drawnMsg.report ?? drawnMsg).marks ?? [];
    assert(marks.includes('hover sentence 1 q 7') && marks.includes('points 12'), `drawn marks ${marks}`);

    // A click asks for that pair at the view's step: a query of sentence 1, then a key of sentence 0.
    for (const [i, sentence] of [
      [4, 1],
      [8, 0],
    ]) {
      await page.mouse.click(...at[i]);
      await page.waitForFunction(
        (n) => window.__posted.filter((m) => m.type === 'openPair').length === n,
        sentence ? 1 : 2,
      );
      const open = (await posted(page, 'openPair')).at(-1);
      assert(open.sentence === sentence && open.step === 20, `click on point ${i}: openPair ${JSON.stringify(open)}`);
    }

    // The header says run, head, step, basis and pairs.
    const header = await page.evaluate(() => document.getElementById('view-header').textContent);
    for (const part of [
      'reverse-micro',
      'cross:0.1',
      'step 20',
      'PCA basis of step 20',
      '2 validation pairs',
      '6 queries, 6 keys',
    ])
      assert(header.includes(part), `header "${header}" says ${part}`);
    await page.mouse.move(1, 1);
    await page.screenshot({ path: join(artifacts, `global-${theme}.png`) });

    // Colour by position: viridis from 0 to the last position (2), matplotlib's values; by query/key:
    // the theme's blue and orange.
    await page.selectOption('#colour-by', 'position');
    await drawnAs(page, '20 position 12');
    at = await Promise.all(ALL.map((_, i) => pixelOf(page, i))); // the colour bar narrows the plot
    s = await shot(page, join(artifacts, `global-${theme}-position.png`), dpr);
    const pageBg = hexRgb(BG[theme]);
    const byPosition = Q.map((i) => [VIEW.points.position[i], s.rgb(...at[i])]).sort((a, b) => a[0] - b[0]);
    // The colour bar's ends (canvas.ts: the bar 14 px right of the plot, 12 wide): its bottom is
    // position 0, its top the last position.
    const barEnds = await page.evaluate(() => {
      const c = document.getElementById('global-canvas');
      const r = c.getBoundingClientRect();
      const [left, top, w, hgt] = c.dataset.box.split(' ').map(Number);
      const x = r.left + left + w + 14 + 6;
      return [
        [x, r.top + top + hgt - 3],
        [x, r.top + top + 2],
      ];
    });
    const [barBottom, barTop] = barEnds.map((p) => s.rgb(...p));
    if (theme === 'dark') {
      // Dark: viridis's dark violet start is cut, so the first position, the last and the colour
      // bar's ends each stand at least 3:1 from the page (WCAG's for graphics), and still differ.
      const [first, last] = [byPosition[0], byPosition.at(-1)];
      for (const [what, rgb] of [
        [`position ${first[0]}`, first[1]],
        [`position ${last[0]}`, last[1]],
        ["the colour bar's bottom", barBottom],
        ["the colour bar's top", barTop],
      ])
        assert(contrast(rgb, pageBg) >= 3, `${what}: ${rgb} has ${contrast(rgb, pageBg).toFixed(2)}:1 on ${BG.dark}`);
      assert(
        first[0] === 0 && last[0] === 2 && !near(first[1], last[1]),
        `positions ${first[0]} (${first[1]}) and ${last[0]} (${last[1]}) differ`,
      );
    } else {
      // Light: viridis's pale yellow end is cut, so every position, and the colour bar's top, stands
      // at least 3:1 from the page; position 0 is still viridis's start, and the colours still rise
      // in luminance with the position (the last one near 3:1: the scale runs as far as it may).
      const white = pageBg;
      for (const [p, rgb] of byPosition)
        assert(contrast(rgb, white) >= 3, `position ${p}: ${rgb} has ${contrast(rgb, white).toFixed(2)}:1 on white`);
      assert(near(byPosition[0][1], hexRgb(VIRIDIS[0])), `position 0: ${byPosition[0][1]}`);
      for (let j = 1; j < byPosition.length; j++) {
        const [[p0, a], [p1, b]] = [byPosition[j - 1], byPosition[j]];
        if (p1 > p0) assert(luminance(b) > luminance(a), `position ${p1} (${b}) lighter than ${p0} (${a})`);
      }
      assert(contrast(byPosition.at(-1)[1], white) < 3.5, `the last position ${byPosition.at(-1)[1]} near 3:1`);
      assert(contrast(barTop, white) >= 3 && contrast(barTop, white) < 3.5, `the colour bar's top ${barTop} on white`);
    }
    await page.selectOption('#colour-by', 'role');
    await drawnAs(page, '20 role 12');
    at = await Promise.all(ALL.map((_, i) => pixelOf(page, i)));
    s = await shot(page, join(artifacts, `global-${theme}-role.png`), dpr);
    for (const i of Q) assert(near(s.rgb(...at[i]), hexRgb(ROLE[theme][0])), `query ${i} by role: ${s.rgb(...at[i])}`);
    for (const i of K)
      assert(s.ringHas(...at[i], hexRgb(ROLE[theme][1])), `key ${i} by role: a ring of ${ROLE[theme][1]}`);

    // The slider says the step shown among the run's checkpoints, and asks for the other one.
    const label = await page.locator('#step-label').innerText();
    assert(label === 'step 20 · checkpoints 10, 20', `slider label ${label}`);
    await page.evaluate(() => {
      const el = document.getElementById('step-slider');
      el.value = '0';
      el.dispatchEvent(new window.Event('change'));
    });
    const step = (await posted(page, 'globalStep')).at(-1);
    assert(step?.step === 10, `globalStep ${JSON.stringify(step)}`);

    // A theme switch (VS Code rewrites <html style> and <body class>) redraws in the other theme's colours.
    const other = theme === 'dark' ? 'light' : 'dark';
    await page.evaluate(
      ({ vars, cls }) => {
        for (const [k, v] of Object.entries(vars)) document.documentElement.style.setProperty(k, v);
        document.body.className = cls;
      },
      { vars: other === 'light' ? LIGHT_THEME : DARK_THEME, cls: `vscode-${other}` },
    );
    await page.evaluate(() => new Promise((r) => window.requestAnimationFrame(() => window.requestAnimationFrame(r))));
    s = await shot(page, join(artifacts, `global-${theme}-to-${other}.png`), dpr);
    // the data point (0.25, 0.25), between grid lines: a quarter of the way from (0, 0) to x = 1, a twelfth to y = 3
    const blank = [at[0][0] + (at[1][0] - at[0][0]) / 4, at[0][1] + (at[6][1] - at[0][1]) / 12];
    assert(
      near(s.rgb(...blank), hexRgb(BG[other]), 12),
      `after the switch the plot is ${s.rgb(...blank)}, want ${BG[other]}`,
    );
    for (const i of Q)
      assert(near(s.rgb(...at[i]), hexRgb(ROLE[other][0]), 12), `query ${i} after the switch: ${s.rgb(...at[i])}`);

    // At an editor column's width (640 px) and at 420 px the header wraps instead of being cut: nothing
    // in it is clipped, it still says the run and the step, and the toolbar stays below it, in sight.
    await page.selectOption('#colour-by', 'token');
    for (const width of [640, 420]) {
      await page.setViewportSize({ width, height: 700 });
      const head = await page.evaluate(() => {
        const el = document.getElementById('view-header');
        // the header's text as laid out (its parts' boxes), not only its own box
        const bottom = Math.max(...[el, ...el.children].map((e) => e.getBoundingClientRect().bottom));
        const bar = document.getElementById('colour-by').getBoundingClientRect();
        // the text of each part that begins a line after the first
        const tops = [...el.children].map((c) => c.getBoundingClientRect().top);
        const starts = [...el.children].filter((c, i) => i > 0 && tops[i] !== tops[i - 1]).map((c) => c.textContent);
        return { scroll: el.scrollWidth, client: el.clientWidth, text: el.textContent, bottom, bar: bar.top, starts };
      });
      assert(width > 420 || head.starts.length > 0, `at ${width} px the header should wrap: "${head.text}"`);
      assert(!head.starts.some((t) => t.trimStart().startsWith('·')), `at ${width} px lines start ${head.starts}`);
      assert(head.scroll <= head.client, `at ${width} px the header is ${head.scroll} px wide in ${head.client}`);
      for (const part of ['reverse-micro', 'step 20', '6 queries, 6 keys'])
        assert(head.text.includes(part), `at ${width} px the header "${head.text}" says ${part}`);
      assert(
        head.bar >= head.bottom && head.bar < 700,
        `at ${width} px the toolbar (top ${head.bar}) is below the header (bottom ${head.bottom})`,
      );
      await page.screenshot({ path: join(artifacts, `global-${other}-${width}.png`) }); // the theme switched to, above
    }
    // Narrow: the scatter fits a 420 px panel, drawn anew at that size, still coloured and hoverable.
    await page.waitForFunction(() => document.getElementById('global-canvas').getBoundingClientRect().width < 420);
    await drawnAs(page, '20 token 12');
    const widths = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    assert(widths[0] <= widths[1], `page ${widths[0]} px wide in a ${widths[1]} px panel`);
    await page.evaluate(() => new Promise((r) => window.requestAnimationFrame(() => window.requestAnimationFrame(r))));
    const narrow = await Promise.all(ALL.map((_, i) => pixelOf(page, i)));
    s = await shot(page, join(artifacts, `global-${theme}-narrow.png`), dpr);
    assert(near(s.rgb(...narrow[4]), hexRgb(HUE['7'])), `narrow: query 4 ${s.rgb(...narrow[4])}`);
    const text = await hoverAt(page, ...narrow[4]);
    assert(text?.includes('sentence 1 · query “7”'), `narrow hover: ${text}`);
    const mine = problems.filter((p) => p.startsWith('global:'));
    assert(mine.length === 0, `no CSP violation, console or page error: ${mine.join('; ')}`);
    await page.close();
  });
