// Roles over training (issue 32 item 4) as drawn in the Heads panel, in a dark and a light theme:
// the loss with its drop shaded, one lane per head coloured by its role at each telemetry row
// (checked in the screenshot's pixels), the drop explained beside it, and clicks on a lane and on
// the drop posting the step every view moves to.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { V, artifacts, assert, metricRows, openPanel, panelHeader, posted, send, test } from './harness.mjs';
import { decodePng } from './png.mjs';

const HEADER = panelHeader('/runs/reverse-tiny', [100, 200, 300, 400]);
// The loss: 2.3 flat to step 150, a fall to 0.3 by step 200, then flat: one drop, about 150–200.
const LOSS = (s) => (s <= 150 ? 2.3 : s <= 200 ? 2.3 - (2 * (s - 150)) / 50 : 0.3);
const HEADS = ['encoder_self:0.0', 'cross:0.0', 'cross:0.1', 'cross:0.2', 'decoder_self:0.1'];
// Telemetry every 25 steps: encoder_self:0.0 positional −1 throughout; cross:0.0 diffuse until
// step 175, then aligned to the task (align_err 0.02); cross:0.1 an EOS sink; cross:0.2 dead (its
// gradient 10⁻⁶ of its layer's median); decoder_self:0.1 positional −2 (its largest weight two
// keys back in 93% of the rows where that key exists).
const TELEMETRY = Array.from({ length: 16 }, (_, i) => {
  const step = 25 * (i + 1);
  const aligned = step >= 200;
  return {
    step,
    pairs: 4,
    heads: HEADS,
    stats: {
      top_prev: [0.95, 0, 0, 0, 0.02],
      top_offset: [-1, null, null, null, -2],
      top_offset_share: [0.95, null, null, null, 0.93],
      entropy_norm: [0.3, aligned ? 0.2 : 0.95, 0.4, 0.5, 0.3],
      align_err: [null, aligned ? 0.02 : 0.85, 0.7, 0.8, null],
      sink_eos: [0, 0.1, 0.8, 0.1, 0],
      grad_norm: [1, 1, 1, 1e-6, 1],
    },
  };
});
// Fallbacks of roles.ts where the theme sets no chart colour, else the theme's (scripts/panel-server.mjs).
const COLORS = {
  dark: {
    'positional -1': '#cca700',
    'positional -k': '#bc3fbc',
    diffuse: '#9d9d9d',
    'aligned (task)': '#89d185',
    sink: '#11a8cd',
    dead: '#f14c4c',
  },
  light: {
    'positional -1': '#cca700',
    'positional -k': '#bc3fbc',
    diffuse: '#717171',
    'aligned (task)': '#388a34',
    sink: '#11a8cd',
    dead: '#f14c4c',
  },
};
const rgb = (hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));

/** The Heads panel given the run above; resolves once its roles section is drawn. */
async function showRoles(page) {
  const state = { panel: 'heads', header: HEADER, telemetry: TELEMETRY, metrics: metricRows(1, 400, LOSS) };
  await send(page, { type: 'state', v: V, state: { ...state, events: [], cursor: null } });
  await page.waitForFunction(() => Number(document.body.dataset.rolesDrawn) >= 1);
}

/** The page pixel of a lane (head) at a step, from plotly's own axes. */
const laneAt = (page, head, step) =>
  page.evaluate(
    ({ head, step }) => {
      const gd = document.getElementById('roles-chart');
      const { xaxis, yaxis2 } = gd._fullLayout;
      const box = gd.getBoundingClientRect();
      return {
        x: box.left + xaxis._offset + xaxis.d2p(step),
        y: box.top + yaxis2._offset + yaxis2.d2p(head),
      };
    },
    { head, step },
  );

for (const theme of ['dark', 'light'])
  test(`Roles over training (${theme}): lanes by role under the loss, the drop explained, clicks move the step`, async () => {
    const page = await openPanel('heads', { width: 1400, height: 1100 }, theme);
    await showRoles(page);
    await page.locator('#roles-card').scrollIntoViewIfNeeded();
    // One drop, inside the fall, listed with cross:0.0's change first.
    const drop = await page.locator('#roles-drops > li > div.problem').allInnerTexts();
    assert(drop.length === 1, `drops listed: ${JSON.stringify(drop)}`);
    const [, from, to] = drop[0].match(/steps (\d+)–(\d+)/) ?? [];
    assert(Number(from) >= 140 && Number(from) <= 160 && Number(to) >= 190 && Number(to) <= 210, `drop ${drop[0]}`);
    const heads = await page.locator('#roles-drops .drop-head').allInnerTexts();
    assert(heads[0]?.startsWith('cross:0.0: diffuse → aligned (task) · align_err 0.85 → 0.02'), `explained ${heads}`);
    assert(
      !heads.some((t) => t.startsWith('cross:0.1') || t.startsWith('encoder')),
      `unchanged heads listed: ${heads}`,
    );
    // The drop's band on the chart spans the listed steps.
    const band = await page.evaluate(() =>
      document.getElementById('roles-chart').layout.shapes.find((s) => s.type === 'rect' && s.y0 === 0),
    );
    assert(band && band.x0 === Number(from) && band.x1 === Number(to), `drop band ${JSON.stringify(band)}`);
    const legend = await page.evaluate(() => document.getElementById('roles-chart').data.map((t) => t.name));
    assert(legend.includes('positional -2'), `lane legend ${legend}`);
    const caption = await page.locator('#roles-caption').innerText();
    assert(caption.startsWith('reverse-tiny · the training loss (400 logged steps)'), `caption ${caption}`);

    // The lanes as drawn: each head's colour at a step, read from the screenshot.
    // A stat's underscore (align_err) hangs below the baseline and was cut off while `.problem`
    // clipped its overflow, until its line box was 1.4 em (seen in this screenshot of the list alone).
    await page.locator('#roles-drops').screenshot({ path: join(artifacts, `heads-roles-drops-${theme}.png`) });
    const lineBox = await page.evaluate(() => {
      const s = getComputedStyle(document.querySelector('#roles-drops .drop-head'));
      return parseFloat(s.lineHeight) / parseFloat(s.fontSize);
    });
    assert(lineBox >= 1.3, `a drop's head line is ${lineBox} em: its underscores are clipped`);
    const shot = join(artifacts, `heads-roles-${theme}.png`);
    await page.screenshot({ path: shot, fullPage: true });
    const png = decodePng(readFileSync(shot));
    const pixel = ({ x, y }) => {
      const i = (Math.round(y) * png.width + Math.round(x)) * png.channels;
      return [png.px[i], png.px[i + 1], png.px[i + 2]];
    };
    const c = COLORS[theme];
    const want = [
      ['encoder_self:0.0', 300, c['positional -1']],
      ['cross:0.0', 100, c.diffuse],
      ['cross:0.0', 300, c['aligned (task)']],
      ['cross:0.1', 300, c.sink],
      ['cross:0.2', 300, c.dead],
      ['decoder_self:0.1', 300, c['positional -k']],
    ];
    for (const [head, step, hex] of want) {
      const got = pixel(await laneAt(page, head, step));
      assert(
        got.every((v, i) => Math.abs(v - rgb(hex)[i]) <= 3),
        `${theme}: ${head} at step ${step} drew ${got}, want ${hex}`,
      );
    }

    // A click on cross:0.0's lane at step 300 moves every view to where its role began (200).
    const at = await laneAt(page, 'cross:0.0', 300);
    await page.mouse.click(at.x, at.y);
    await page.waitForFunction(() => window.__posted.some((m) => m.type === 'cursor'));
    assert(
      (await posted(page, 'cursor')).at(-1).step === 200,
      `lane click: ${JSON.stringify(await posted(page, 'cursor'))}`,
    );
    // A click on the drop moves it to the drop's steepest step; a click on its head opens the head.
    await page.locator('#roles-drops > li > div.problem').click();
    const steep = (await posted(page, 'cursor')).at(-1).step;
    assert(steep >= Number(from) && steep <= Number(to), `drop click posted step ${steep}`);
    await page.locator('#roles-drops .drop-head').first().click();
    const open = (await posted(page, 'openHeadAt')).at(-1);
    assert(open?.kind === 'cross' && open.layer === 0 && open.head === 0, `openHeadAt ${JSON.stringify(open)}`);
    // The extension answers with the cursor: every view, this one too, draws it.
    await send(page, { type: 'cursor', v: V, step: 200 });
    await page.waitForFunction(() =>
      document.getElementById('roles-chart').layout.shapes.some((s) => s.type === 'line' && s.x0 === 200),
    );
    await page.close();
  });

test('Roles over training in a narrow panel: the chart takes the card’s width and the drops wrap under it', async () => {
  const page = await openPanel('heads', { width: 540, height: 900 }, 'dark');
  await showRoles(page);
  const box = (sel) => page.locator(sel).boundingBox();
  const [chart, card, drops] = [await box('#roles-chart'), await box('#roles-card'), await box('#roles-drops')];
  assert(chart.width >= 0.9 * card.width, `chart ${chart.width} px wide in a card of ${card.width}`);
  assert(
    drops.y >= chart.y + chart.height,
    `the drops (top ${drops.y}) under the chart (bottom ${chart.y + chart.height})`,
  );
  const svg = await page.evaluate(() => document.querySelector('#roles-chart .main-svg').getAttribute('width'));
  assert(Number(svg) <= card.width, `plotly drew ${svg} px wide in a card of ${card.width}`);
  // Every lane names its head: plotly's own tick spacing left every other lane unnamed here.
  const named = await page.evaluate(() =>
    [...document.querySelectorAll('#roles-chart .y2tick text')].map((t) => t.textContent),
  );
  assert(JSON.stringify(named.sort()) === JSON.stringify([...HEADS].sort()), `lanes named ${JSON.stringify(named)}`);
  await page.screenshot({ path: join(artifacts, 'heads-roles-narrow.png'), fullPage: true });
  await page.close();
});
