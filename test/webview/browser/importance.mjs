// The Head Importance panel (issue 33 item 3): a heads report (the JSON Head Importance saves) as a
// table and figures. Checked as drawn: the table's rows are the report's heads with its numbers,
// a click on I_h sorts the rows as a hand-sorted list does (again: reversed), plotly's pruning
// traces hold the report's points, a row click asks for that head at the report's step, and a
// run without a report says so with its button. Dark and light screenshots in test-artifacts/webview/.
import { join } from 'node:path';
import { V, artifacts, assert, openPanel, panelHeader, posted, send, test } from './harness.mjs';

// A micro run's report: 6 heads (1 layer each of encoder self, decoder self, cross; 2 heads),
// importance ascending as the engine writes it, pruning curves of 7 points each.
const REPORT = {
  run: '/runs/reverse-micro',
  checkpoint: '/runs/reverse-micro/checkpoints/step-20.safetensors',
  step: 20,
  metric: 'exact_match_percent',
  sentences: 20,
  tolerance: 1,
  importance: {
    'decoder_self:0.1': 0.00031,
    'encoder_self:0.0': 0.0012,
    'decoder_self:0.0': 0.0047,
    'encoder_self:0.1': 0.019,
    'cross:0.1': 0.052,
    'cross:0.0': 0.31,
  },
  byImportance: [
    { removed: 0, head: null, metric: 85 },
    { removed: 1, head: 'decoder_self:0.1', metric: 85 },
    { removed: 2, head: 'encoder_self:0.0', metric: 80 },
    { removed: 3, head: 'decoder_self:0.0', metric: 70 },
    { removed: 4, head: 'encoder_self:0.1', metric: 55 },
    { removed: 5, head: 'cross:0.1', metric: 30 },
    { removed: 6, head: 'cross:0.0', metric: 0 },
  ],
  random: {
    seed: 1,
    points: [
      { removed: 0, head: null, metric: 85 },
      { removed: 1, head: 'cross:0.0', metric: 20 },
      { removed: 2, head: 'encoder_self:0.1', metric: 15 },
      { removed: 3, head: 'decoder_self:0.1', metric: 15 },
      { removed: 4, head: 'cross:0.1', metric: 5 },
      { removed: 5, head: 'decoder_self:0.0', metric: 0 },
      { removed: 6, head: 'encoder_self:0.0', metric: 0 },
    ],
  },
  prunable: { byImportance: 1, random: 0 },
};
const HEADER = panelHeader('/runs/reverse-micro', [10, 20]);
const state = (report, runDir = HEADER.runDir) => ({
  type: 'state',
  v: V,
  state: { panel: 'importance', header: HEADER, runDir, report },
});

const tableRows = (page) =>
  page.evaluate(() =>
    [...document.querySelectorAll('#importance-table tbody tr')].map((tr) =>
      [...tr.children].map((td) => td.textContent),
    ),
  );

for (const theme of ['dark', 'light'])
  test(`Head Importance panel (${theme}): the table holds the report's numbers and sorts by I_h; the pruning traces are its curves`, async () => {
    const page = await openPanel('importance', { width: 1400, height: 1000 }, theme);
    await send(page, state(REPORT));
    await page.waitForFunction(
      () =>
        document.querySelectorAll('#importance-table tbody tr').length > 0 &&
        document.getElementById('chart-pruning').data?.length === 2 &&
        document.getElementById('chart-importance').data?.length === 1,
      null,
      { timeout: 20_000 },
    );
    const ids = Object.keys(REPORT.importance);
    // Hand-made expectations: rank 1 = the most important; the metric when removed from byImportance.
    const byHand = ids.map((id) => ({
      head: id,
      imp: REPORT.importance[id],
      rank: [...ids].sort((a, b) => REPORT.importance[b] - REPORT.importance[a]).indexOf(id) + 1,
      removed: REPORT.byImportance.find((p) => p.head === id).metric,
    }));
    const rows = await tableRows(page);
    assert(rows.length === ids.length, `${rows.length} rows, want one per head (${ids.length})`);
    for (const [head, imp, rank, removed] of rows) {
      const want = byHand.find((x) => x.head === head);
      assert(want, `a row for ${head}, which the report does not have`);
      assert(Math.abs(Number(imp) - want.imp) <= want.imp * 1e-3, `${head}: I_h ${imp}, want ${want.imp}`);
      assert(Number(rank) === want.rank, `${head}: rank ${rank}, want ${want.rank}`);
      assert(Number(removed) === want.removed, `${head}: when removed ${removed}, want ${want.removed}`);
    }
    const header = await page.evaluate(() => document.getElementById('view-header').textContent);
    assert(
      header.includes('reverse-micro') && header.includes('step 20') && header.includes('exact match'),
      `header: ${header}`,
    );
    // Sorting by I_h: ascending on the first click, descending on the second.
    const ascending = [...byHand].sort((a, b) => a.imp - b.imp).map((x) => x.head);
    await page.click('#importance-table th[data-key="importance"]');
    const up = (await tableRows(page)).map((r) => r[0]);
    assert(up.join() === ascending.join(), `ascending I_h: ${up}, want ${ascending}`);
    await page.click('#importance-table th[data-key="importance"]');
    const down = (await tableRows(page)).map((r) => r[0]);
    assert(
      down.join() === [...ascending].reverse().join(),
      `descending I_h: ${down}, want ${[...ascending].reverse()}`,
    );
    // The curves: plotly's traces hold the report's points, by importance first, then at random.
    const traces = await page.evaluate(() =>
      document.getElementById('chart-pruning').data.map((d) => ({ name: d.name, x: [...d.x], y: [...d.y] })),
    );
    const pts = (ps) => ({ x: ps.map((p) => p.removed), y: ps.map((p) => p.metric) });
    for (const [i, want] of [pts(REPORT.byImportance), pts(REPORT.random.points)].entries()) {
      assert(
        JSON.stringify({ x: traces[i].x, y: traces[i].y }) === JSON.stringify(want),
        `trace ${traces[i].name}: ${JSON.stringify(traces[i])}, want ${JSON.stringify(want)}`,
      );
    }
    assert(
      traces[0].name === 'by importance' && traces[1].name.startsWith('random'),
      `names ${traces.map((t) => t.name)}`,
    );
    const bars = await page.evaluate(() => [...document.getElementById('chart-importance').data[0].y]);
    assert(JSON.stringify(bars) === JSON.stringify(Object.values(REPORT.importance)), `bars ${bars}`);
    // Themed: the figure's paper is the page's background.
    const bg = await page.evaluate(() => [
      document.getElementById('chart-pruning').layout.paper_bgcolor,
      getComputedStyle(document.documentElement).getPropertyValue('--vscode-editor-background').trim(),
    ]);
    assert(bg[0].toLowerCase() === bg[1].toLowerCase(), `paper ${bg[0]}, theme background ${bg[1]}`);
    // Drawn, not only in data: plotly's SVG has the two curves' paths.
    const paths = await page.evaluate(
      () => document.querySelectorAll('#chart-pruning .scatterlayer .trace path.js-line').length,
    );
    assert(paths === 2, `${paths} curve paths drawn`);
    await page.screenshot({ path: join(artifacts, `importance-${theme}.png`), fullPage: true });
    // A row click asks for that head at the report's step.
    await page.click('#importance-table tbody tr[data-head="cross:0.1"]');
    const asked = await posted(page, 'openHeadAt');
    assert(
      asked.length === 1 &&
        asked[0].kind === 'cross' &&
        asked[0].layer === 0 &&
        asked[0].head === 1 &&
        asked[0].step === 20,
      `openHeadAt: ${JSON.stringify(asked)}`,
    );
    await page.close();
  });

test('Head Importance panel: a run without a report says so, and its button asks to compute one', async () => {
  const page = await openPanel('importance', { width: 1000, height: 600 });
  await send(page, state(REPORT));
  await page.waitForFunction(() => document.querySelectorAll('#importance-table tbody tr').length === 6);
  await send(page, state(null, '/runs/reverse-other'));
  await page.waitForFunction(() => document.getElementById('none'));
  const seen = await page.evaluate(() => ({
    none: document.getElementById('none').textContent,
    hidden: document.getElementById('report').hidden,
  }));
  assert(seen.none === 'No head importance for reverse-other yet', `says ${seen.none}`);
  assert(seen.hidden, 'the old run’s table and figures are hidden');
  await page.click('#compute');
  const asked = await posted(page, 'computeImportance');
  assert(asked.length === 1, `computeImportance posted ${asked.length} times`);
  await page.close();
});

test('Head Importance panel: an untrained model (0 exact match with every head) says pruning tells nothing yet', async () => {
  const page = await openPanel('importance', { width: 1000, height: 900 });
  const zero = (ps) => ps.map((p) => ({ ...p, metric: 0 }));
  const untrained = {
    ...REPORT,
    byImportance: zero(REPORT.byImportance),
    random: { ...REPORT.random, points: zero(REPORT.random.points) },
    prunable: { byImportance: 6, random: 6 },
  };
  await send(page, state(untrained));
  await page.waitForFunction(() => document.getElementById('chart-pruning').data?.length === 2, null, {
    timeout: 20_000,
  });
  const said = await page.evaluate(() => document.getElementById('prunable').textContent);
  assert(
    said.startsWith('Step 20: with every head the model scores 0.00 exact match % on ') &&
      said.includes('Train further before pruning') &&
      !said.includes('6 of 6 heads can go'),
    `says ${said}`,
  );
  // The flat 0 curves sit on the axis's bottom, which is 0, not mid-chart on −0.5 … 1.
  const range = await page.evaluate(() => document.getElementById('chart-pruning')._fullLayout.yaxis.range);
  assert(range[0] === 0 && range[1] > 0, `the metric's axis ${range}`);
  await page.screenshot({ path: join(artifacts, 'importance-untrained.png'), fullPage: true });
  await page.close();
});
