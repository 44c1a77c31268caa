// The Ablation Results panel (issue 33 item 3): every ablation tried on a run (its folder's
// ablations.json) as a table and a bar of Δ per ablation. Checked as drawn: the table's rows are
// the records' numbers (Δ = ablated − intact, signed), a click on Δ sorts the rows as a hand-sorted
// list does (again: reversed), plotly's bars hold each row's Δ in the table's order, the chart's
// paper is the theme's background, a run without ablations says so with its button, and a
// message of the wrong shape is named in the error banner. Dark and light screenshots in
// test-artifacts/webview/.
import { join } from 'node:path';
import { V, artifacts, assert, openPanel, panelHeader, posted, send, test } from './harness.mjs';

const RUN = '/runs/reverse-micro';
const record = (heads, mode, step, intact, ablated, time, metric = 'exact_match_percent') => ({
  ablation: { heads, mode },
  runDir: RUN,
  step,
  metric,
  sentences: 20,
  intact,
  ablated,
  time,
});
// Four ablations of a micro run, oldest first: one costs nothing, one helps a little.
const ROWS = [
  record(['cross:0.0'], 'zero', 20, 85, 30, 1000),
  record(['encoder_self:0.1'], 'mean', 20, 85, 85, 2000),
  record(['decoder_self:0.0', 'decoder_self:0.1'], 'zero', 20, 85, 62.5, 3000),
  record(['cross:0.1'], 'mean', 30, 90, 92.5, 4000),
];
const HEADER = panelHeader(RUN, [20, 30]);
const state = (rows, runDir = RUN) => ({
  type: 'state',
  v: V,
  state: { panel: 'ablations', header: HEADER, runDir, rows },
});

const tableRows = (page) =>
  page.evaluate(() =>
    [...document.querySelectorAll('#ablations-table tbody tr')].map((tr) =>
      [...tr.children].map((td) => td.textContent),
    ),
  );
/** `−54.5` → -54.5 */
const num = (s) => Number(s.replace('−', '-'));

for (const theme of ['dark', 'light'])
  test(`Ablation Results panel (${theme}): the table holds each ablation's numbers and sorts by Δ; the bars are the Δs`, async () => {
    const page = await openPanel('ablations', { width: 1400, height: 1000 }, theme);
    await send(page, state(ROWS));
    await page.waitForFunction(
      () =>
        document.querySelectorAll('#ablations-table tbody tr').length > 0 &&
        document.getElementById('chart-delta').data?.length === 1,
      null,
      { timeout: 20_000 },
    );
    const byHand = ROWS.map((r, i) => ({
      n: i + 1,
      heads: r.ablation.heads.join(', '),
      delta: r.ablated - r.intact,
      r,
    }));
    const rows = await tableRows(page);
    assert(rows.length === ROWS.length, `${rows.length} rows, want ${ROWS.length}`);
    for (const [n, heads, mode, step, metric, intact, ablated, delta, sentences] of rows) {
      const want = byHand[Number(n) - 1];
      assert(want, `row #${n}, which the records do not have`);
      assert(heads === want.heads && mode === want.r.ablation.mode, `#${n}: ${heads} ${mode}`);
      assert(Number(step) === want.r.step && metric === 'exact match %', `#${n}: step ${step}, ${metric}`);
      assert(Number(intact) === want.r.intact && Number(ablated) === want.r.ablated, `#${n}: ${intact} → ${ablated}`);
      assert(Math.abs(num(delta) - want.delta) < 0.05, `#${n}: Δ ${delta}, want ${want.delta}`);
      assert(Number(sentences) === want.r.sentences, `#${n}: ${sentences} sentences`);
    }
    const header = await page.evaluate(() => document.getElementById('view-header').textContent);
    assert(
      header.includes('reverse-micro') && header.includes('step 30') && header.includes('4 ablations'),
      `header: ${header}`,
    );
    const summary = await page.evaluate(() => document.getElementById('summary').textContent);
    assert(summary.includes('cross:0.0 zero-ablated, −55.0'), `summary: ${summary}`);
    // The bars: one per row in the table's order (oldest first), each its Δ.
    const bars = async () =>
      page.evaluate(() => {
        const d = document.getElementById('chart-delta').data[0];
        return { x: [...d.x], y: [...d.y] };
      });
    let drawn = await bars();
    assert(JSON.stringify(drawn.y) === JSON.stringify(byHand.map((x) => x.delta)), `bars ${drawn.y}`);
    assert(drawn.x[0] === '#1 cross:0.0 (zero)', `first bar ${drawn.x[0]}`);
    // Sorting by Δ: ascending on the first click, descending on the second; the bars follow.
    const ascending = [...byHand].sort((a, b) => a.delta - b.delta).map((x) => String(x.n));
    await page.click('#ablations-table th[data-key="delta"]');
    const up = (await tableRows(page)).map((r) => r[0]);
    assert(up.join() === ascending.join(), `ascending Δ: ${up}, want ${ascending}`);
    await page.click('#ablations-table th[data-key="delta"]');
    const down = (await tableRows(page)).map((r) => r[0]);
    assert(down.join() === [...ascending].reverse().join(), `descending Δ: ${down}, want ${[...ascending].reverse()}`);
    // The bars follow the table's order.
    await page.waitForFunction(() => document.getElementById('chart-delta').data[0].y[0] > 0, null, {
      timeout: 10_000,
    });
    drawn = await bars();
    const want = [...byHand].sort((a, b) => b.delta - a.delta).map((x) => x.delta);
    assert(JSON.stringify(drawn.y) === JSON.stringify(want), `bars sorted ${drawn.y}, want ${want}`);
    // Drawn, not only in data: plotly's SVG has the four bars; the paper is the theme's background.
    const paths = await page.evaluate(() => document.querySelectorAll('#chart-delta .barlayer .point path').length);
    assert(paths === ROWS.length, `${paths} bars drawn`);
    const bg = await page.evaluate(() => [
      document.getElementById('chart-delta').layout.paper_bgcolor,
      getComputedStyle(document.documentElement).getPropertyValue('--vscode-editor-background').trim(),
    ]);
    assert(bg[0].toLowerCase() === bg[1].toLowerCase(), `paper ${bg[0]}, theme background ${bg[1]}`);
    await page.screenshot({ path: join(artifacts, `ablations-${theme}.png`), fullPage: true });
    // The Markdown export: the rows in the table's order, Δ signed.
    await page.click('#export-md');
    const md = (await posted(page, 'export')).at(-1);
    assert(md.format === 'md' && md.name === 'reverse-micro-ablations.md', `export ${md.format} ${md.name}`);
    assert(md.text.includes('| 4 | cross:0.1 | mean | 30 | exact match % | 90.0 | 92.5 | +2.5 | 20 |'), md.text);
    await page.close();
  });

test('Ablation Results panel: a run without ablations says so, its button asks for one; a malformed state is named', async () => {
  const page = await openPanel('ablations', { width: 1000, height: 600 });
  await send(page, state(ROWS));
  await page.waitForFunction(() => document.querySelectorAll('#ablations-table tbody tr').length === 4);
  await send(page, state([], '/runs/reverse-other'));
  await page.waitForFunction(() => document.getElementById('none'));
  const seen = await page.evaluate(() => ({
    none: document.getElementById('none').textContent,
    hidden: document.getElementById('ablations').hidden,
  }));
  assert(seen.none === 'No ablations of reverse-other yet', `says ${seen.none}`);
  assert(seen.hidden, 'the old run’s table and chart are hidden');
  await page.click('#ablate');
  assert((await posted(page, 'ablate')).length === 1, 'ablate posted once');
  // A row whose Δ cannot be computed (intact is text): the banner names the field, nothing is redrawn.
  const bad = state([{ ...ROWS[0], intact: '85' }]);
  await send(page, bad);
  await page.waitForSelector('#error:not([hidden])', { timeout: 10_000 });
  const text = await page.locator('#error').innerText();
  assert(text.includes('state.rows[0].intact'), `the banner says: ${text}`);
  assert(await page.evaluate(() => document.getElementById('none') !== null), 'the page still shows the run it had');
  await page.close();
});
