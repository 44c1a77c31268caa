// The run report (issue 33 item 1): a tiny reverse run is trained here, its report written by the
// CLI (`report RUN --out FILE`) and opened from file:// with every other request blocked and counted
// (must be none). Checked as drawn, against independent sources: the curves' traces hold the
// values of the run's own metrics.jsonl (read here), the slider's label says the step of a snapshot
// file in the run's snapshots/ folder, canvases are not blank and change with the slider, a curve
// answers hover with its step; the head view draws the shown snapshot's lines (each as opaque as
// the snapshot file's weight; on screen, in the heads' colours) and hovering a token leaves only
// its lines; the file is under 10 MB with 60 snapshots (as many as the README's
// 1,500-step tiny reverse run keeps). A known beam tree given with --beam is drawn in its own
// section (nodes, chosen and greedy edges, summary, n-best, on screen); a report without one says so
// in a line. Screenshots: test-artifacts/webview/report.png, report-beam.png.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { artifacts, assert, openFile, problems, test } from './harness.mjs';
import { decodePng } from './png.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const cli = (...args) => spawnSync(process.execPath, [join(root, 'dist', 'cli.js'), ...args], { encoding: 'utf8' });

/** Tensor `name` of a safetensors file (float32): its shape and values. */
function tensorOf(file, name) {
  const bytes = readFileSync(file);
  const n = Number(bytes.readBigUInt64LE(0));
  const t = JSON.parse(bytes.toString('utf8', 8, 8 + n))[name];
  const [begin, end] = t.data_offsets.map((o) => 8 + n + o);
  return {
    shape: t.shape,
    data: new Float32Array(bytes.buffer.slice(bytes.byteOffset + begin, bytes.byteOffset + end)),
  };
}

/** The head view's lines drawn (not the spares kept for later): head, query, key, opacity, visible. */
const LINES = () =>
  Array.from(document.querySelectorAll('#head-view svg line:not(.spare)')).map((l) => ({
    id: `${l.dataset.head}:${l.dataset.q}:${l.dataset.k}`,
    w: Number(l.getAttribute('stroke-opacity')),
    visible: getComputedStyle(l).visibility === 'visible' && getComputedStyle(l.parentElement).display !== 'none',
  }));

/** Pixels of the head view's SVG between its token columns that differ from its background. */
async function linePixels(page) {
  const shot = decodePng(await page.locator('#head-view svg').screenshot());
  const { width, height, channels, px } = shot;
  const at = (x, y) => Array.from(px.subarray((y * width + x) * channels, (y * width + x) * channels + 3)).join(',');
  const background = at(0, 0);
  const colours = new Set();
  let n = 0;
  for (let y = 0; y < height; y++)
    for (let x = Math.round(width * 0.35); x < Math.round(width * 0.65); x++) {
      const c = at(x, y);
      if (c === background) continue;
      n++;
      colours.add(c);
    }
  return { n, colours: colours.size };
}

/** Distinct colours of a canvas's pixels (in the page). */
const COLOURS = (sel) => {
  const c = document.querySelector(sel);
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  const seen = new Set();
  for (let i = 0; i < d.length; i += 4) seen.add(`${d[i]},${d[i + 1]},${d[i + 2]},${d[i + 3]}`);
  return { n: seen.size, alpha: d[3], pixels: Array.from(d.slice(0, 4000)).join(',') };
};

test('run report: opens from file:// with no request, every section drawn, the slider and hover work', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ad-report-'));
  try {
    const run = join(dir, 'reverse');
    const trained = cli(
      'train',
      '--backend',
      'wasm',
      '--task',
      'reverse',
      '--config',
      'tiny',
      '--out',
      run,
      '--steps',
      '60',
      '--snapshot-every',
      '1',
      '--telemetry-every',
      '5',
      '--eval-every',
      '30',
      '--checkpoint-every',
      '60',
    );
    assert(trained.status === 0, `train: ${trained.stderr}`);
    const heads = cli('heads', '--run', run, '--pairs', '8', '--limit', '10', '--json');
    assert(heads.status === 0, `heads: ${heads.stderr}`);
    writeFileSync(join(run, 'heads-report-step-60.json'), heads.stdout);
    const out = join(dir, 'reverse-report.html');
    const made = cli('report', run, '--out', out);
    assert(made.status === 0, `report: ${made.stderr}`);
    const bytes = statSync(out).size;
    console.log(`    report of a tiny reverse run with 60 snapshots: ${(bytes / 1e6).toFixed(2)} MB`);
    assert(bytes < 10e6, `the report is ${bytes} bytes, over 10 MB`);
    // Independent sources: the run's files as written.
    const rows = readFileSync(join(run, 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const snapSteps = readdirSync(join(run, 'snapshots'))
      .map((f) => Number(/^step-(\d+)\.safetensors$/.exec(f)?.[1]))
      .filter(Number.isInteger)
      .sort((a, b) => a - b);
    assert(snapSteps.length === 60, `the run kept ${snapSteps.length} snapshots, not 60`);

    const before = problems.length;
    const { page, blocked } = await openFile(pathToFileURL(out).href);
    await page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 30000 });
    await page.waitForFunction(
      () =>
        ['loss', 'lr', 'tps', 'grad', 'importance', 'pruning'].every((c) =>
          document.querySelector(`#chart-${c} .main-svg`),
        ),
      null,
      { timeout: 30000 },
    );
    // The header names the run and its steps.
    assert((await page.locator('#run-name').innerText()) === 'reverse', 'the header names the run');
    assert(/step 60 of 60/.test(await page.locator('#run-facts').innerText()), 'the header says the steps');
    // Curves: the traces hold metrics.jsonl's values.
    const traces = await page.evaluate(() =>
      Object.fromEntries(
        ['loss', 'tps', 'grad', 'lr'].map((c) => [
          c,
          document
            .getElementById(`chart-${c}`)
            .data.map((t) => ({ x: Array.from(t.x), y: Array.from(t.y), name: t.name })),
        ]),
      ),
    );
    const same = (trace, key, what) => {
      assert(trace.x.length === rows.length, `${what}: ${trace.x.length} points, metrics.jsonl has ${rows.length}`);
      rows.forEach((r, i) => {
        assert(
          trace.x[i] === r.step && Math.abs(trace.y[i] - r[key]) <= 1e-9 * Math.abs(r[key]),
          `${what} at step ${r.step}: ${trace.y[i]} ≠ ${r[key]}`,
        );
      });
    };
    same(traces.loss[0], 'loss', 'loss');
    same(traces.tps[0], 'tokens_per_sec', 'tokens/s');
    same(traces.grad[0], 'grad_norm', 'gradient norm');
    same(
      traces.lr.find((t) => t.name === 'actual'),
      'lr',
      'learning rate',
    );
    const val = rows.filter((r) => r.val_loss !== undefined);
    assert(
      traces.loss[1]?.y.length === val.length && val.every((r, i) => traces.loss[1].y[i] === r.val_loss),
      'validation loss',
    );
    // Canvases drawn: every thumbnail and the heads map hold more than one colour.
    const thumbs = await page.locator('canvas.thumb').count();
    assert(thumbs === 3 * 2 * 4, `${thumbs} thumbnails, want 3 kinds × 2 layers × 4 heads`);
    for (const sel of [
      'canvas.thumb[data-head="cross:1.0"]',
      'canvas.thumb[data-head="encoder_self:0.3"]',
      '#heads-map',
    ]) {
      const c = await page.evaluate(COLOURS, sel);
      assert(c.n > 3 && c.alpha === 255, `${sel} is blank (${c.n} colours)`);
    }
    // The findings: one line each of the run's events.jsonl (none is said as such).
    const eventsFile = join(run, 'events.jsonl');
    const findings = existsSync(eventsFile)
      ? readFileSync(eventsFile, 'utf8').trim().split('\n').filter(Boolean).length
      : 0;
    if (findings) assert((await page.locator('#events li').count()) === findings, `${findings} findings listed`);
    else assert((await page.locator('#events').innerText()) === 'No findings.', 'no findings, said');
    // The slider: the newest snapshot first; moved to the first, the label says its step and the pixels change.
    assert(
      (await page.locator('#step-label').innerText()) === `step ${snapSteps.at(-1)}`,
      'the slider starts at the newest snapshot',
    );
    const last = await page.evaluate(COLOURS, 'canvas.thumb[data-head="cross:1.0"]');
    await page.evaluate(() => {
      const s = document.getElementById('step-slider');
      s.value = '0';
      s.dispatchEvent(new window.Event('input'));
    });
    assert(
      (await page.locator('#step-label').innerText()) === `step ${snapSteps[0]}`,
      `the label says step ${snapSteps[0]}`,
    );
    const first = await page.evaluate(COLOURS, 'canvas.thumb[data-head="cross:1.0"]');
    assert(first.pixels !== last.pixels, 'the grid changed with the slider');
    // Hover: the mouse over a point of the loss curve shows its step and loss.
    const at = await page.evaluate(() => {
      const gd = document.getElementById('chart-loss');
      const xa = gd._fullLayout.xaxis;
      const ya = gd._fullLayout.yaxis;
      const i = 30;
      const b = gd.querySelector('.nsewdrag').getBoundingClientRect();
      return { x: b.left + xa.l2p(gd.data[0].x[i]), y: b.top + ya.l2p(gd.data[0].y[i]), step: gd.data[0].x[i] };
    });
    await page.mouse.move(at.x, at.y);
    await page.waitForSelector('#chart-loss .hoverlayer .hovertext', { timeout: 5000 });
    const hover = await page.locator('#chart-loss .hoverlayer .hovertext').first().textContent();
    assert(hover.includes(`step ${at.step}`), `hover says “${hover}”, not step ${at.step}`);
    await page.mouse.move(5, 5);
    // The head view follows the slider: cross-attention, layer 0, of that snapshot file, one line
    // per head and token pair whose weight is at least 1/512, each as opaque as its weight.
    const cross = tensorOf(join(run, 'snapshots', `step-${snapSteps[0]}.safetensors`), 'cross.0');
    const [, H, Q, K] = cross.shape;
    const want = new Map();
    for (let hd = 0; hd < H; hd++)
      for (let q = 0; q < Q; q++)
        for (let k = 0; k < K; k++) {
          const w = cross.data[(hd * Q + q) * K + k];
          if (w >= 1 / 512) want.set(`${hd}:${q}:${k}`, w);
        }
    assert((await page.getAttribute('#head-view', 'data-kind')) === 'cross', 'the head view shows cross-attention');
    const lines = await page.evaluate(LINES);
    assert(lines.length === want.size && want.size > 0, `${lines.length} lines, the snapshot has ${want.size}`);
    for (const l of lines)
      assert(want.has(l.id) && Math.abs(l.w - want.get(l.id)) < 1e-6, `line ${l.id}: ${l.w} vs ${want.get(l.id)}`);
    await page.locator('#head-view').scrollIntoViewIfNeeded();
    const all = await linePixels(page);
    assert(
      all.n > 2000 && all.colours > H,
      `the head view's lines are not on screen: ${all.n} px, ${all.colours} colours`,
    );
    // Hover: query 0's lines alone, and a box of head slots on each of its keys.
    await page.hover('#head-view .hv-token[data-side="q"][data-index="0"]');
    const hovered = await page.evaluate(LINES);
    const visible = hovered.filter((l) => l.visible).map((l) => l.id);
    const ofQuery = [...want.keys()].filter((id) => id.split(':')[1] === '0');
    assert(visible.sort().join() === ofQuery.sort().join(), `hovering query 0 shows ${visible.length} lines`);
    assert((await page.locator('#head-view .hv-boxes rect').count()) === ofQuery.length, 'one box per line of query 0');
    const focused = await linePixels(page);
    assert(focused.n < all.n && focused.n > 0, `hover: ${focused.n} line pixels, ${all.n} before`);
    await page.locator('#head-view').screenshot({ path: join(artifacts, 'report-head-view-hover.png') });
    await page.mouse.move(5, 5);
    assert(
      (await page.evaluate(LINES)).every((l) => l.visible),
      'every line again once the pointer leaves',
    );
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(artifacts, 'report.png'), fullPage: true });
    assert(blocked.length === 0, `the report asked for ${blocked.length} URL(s): ${blocked.slice(0, 3).join(', ')}`);
    const mine = problems.slice(before);
    assert(mine.length === 0, mine.slice(0, 3).join('\n'));
    await page.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// A known beam search tree (ids, parents, statuses and the chosen path written out here, as the Beam
// Tree panel's test does): [id, parent, text, logProb, status, chosen]. Chosen: x y </s>; greedy: z </s>.
const BEAM_ROWS = [
  [0, -1, '<s>', 0, 'expanded', true],
  [1, 0, 'x', -0.5, 'expanded', true],
  [2, 0, 'z', -0.25, 'expanded', false],
  [3, 1, 'y', -0.75, 'expanded', true],
  [4, 1, 'x', -3, 'pruned', false],
  [5, 2, '</s>', -2.5, 'finished', false],
  [6, 3, '</s>', -1, 'finished', true],
  [7, 3, 'q', -4, 'open', false],
];
const TOKEN = { '<s>': 1, '</s>': 2, x: 4, y: 5, z: 6, q: 7 };
const depth = (id) => (id === 0 ? 0 : 1 + depth(BEAM_ROWS[id][1]));
const beamTreeOf = (runDir) => ({
  runDir,
  step: 4,
  checkpoint: join(runDir, 'checkpoints', 'step-4.safetensors'),
  input: 'y x',
  srcIds: [5, 4, 2],
  srcTokens: ['y', 'x', '</s>'],
  beam: 2,
  alpha: 0.6,
  earlyStop: 'exact',
  nodes: BEAM_ROWS.map(([id, parent, text, logProb, status, chosen]) => ({
    id,
    parent,
    depth: depth(id),
    token: TOKEN[text],
    logProb,
    score: logProb,
    status,
    chosen,
    text,
  })),
  nBest: [6, 5],
  greedy: [6, 2],
});

test('run report: a beam tree given is drawn as the Beam Tree panel draws it; without one, a muted line', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ad-report-beam-'));
  try {
    const run = join(dir, 'reverse');
    const trained = cli(
      ...['train', '--backend', 'wasm', '--task', 'reverse', '--config', 'tiny', '--out', run],
      ...['--steps', '4', '--snapshot-every', '2', '--eval-every', '4', '--checkpoint-every', '4'],
    );
    assert(trained.status === 0, `train: ${trained.stderr}`);
    const treeFile = join(dir, 'tree.json');
    const tree = beamTreeOf(run);
    writeFileSync(treeFile, JSON.stringify(tree));
    const out = join(dir, 'with-beam.html');
    const plain = join(dir, 'plain.html');
    for (const [file, extra] of [
      [out, ['--beam', treeFile]],
      [plain, []],
    ]) {
      const made = cli('report', run, '--out', file, ...extra);
      assert(made.status === 0, `report: ${made.stderr}`);
    }
    const before = problems.length;
    const none = await openFile(pathToFileURL(plain).href);
    await none.page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 30000 });
    assert((await none.page.locator('#beam-tree').count()) === 0, 'a report without a tree draws none');
    assert(/No beam tree/.test(await none.page.locator('#beam-none').innerText()), 'and says so in a line');
    await none.page.close();

    const { page, blocked } = await openFile(pathToFileURL(out).href);
    await page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 30000 });
    const drawn = await page.evaluate(() => ({
      nodes: [...document.querySelectorAll('#beam-section #beam-tree g[data-node]')].map((g) => ({
        id: Number(g.dataset.node),
        status: g.dataset.status,
        shape: g.querySelector('rect') ? 'rect' : 'circle',
        label: g.querySelector('text').textContent,
        title: g.querySelector('title').textContent,
      })),
      edges: Object.fromEntries(
        [...document.querySelectorAll('#beam-section #beam-tree path[data-edge]')].map((e) => [
          e.dataset.edge,
          { width: e.getAttribute('stroke-width'), dash: e.getAttribute('stroke-dasharray') },
        ]),
      ),
      summary: document.getElementById('beam-summary')?.textContent,
      nBest: [...document.querySelectorAll('#beam-section #n-best tr')].slice(1).map((r) => r.children[1].textContent),
    }));
    assert(drawn.nodes.length === BEAM_ROWS.length, `${drawn.nodes.length} nodes drawn, the tree has 8`);
    for (const [id, , text, , status] of BEAM_ROWS) {
      const n = drawn.nodes[id];
      assert(n.id === id && n.label === text && n.status === status, `node ${id}: ${JSON.stringify(n)}`);
      assert(n.shape === (status === 'finished' ? 'rect' : 'circle'), `node ${id} is a ${n.shape}`);
    }
    assert(
      drawn.nodes[6].title.startsWith('x y </s>') && drawn.nodes[6].title.includes('chosen'),
      drawn.nodes[6].title,
    );
    assert(Object.keys(drawn.edges).length === 7, 'an edge per node but the root');
    for (const id of ['1', '3', '6']) assert(drawn.edges[id].width === '3', `chosen edge ${id} is thick`);
    for (const id of ['2', '5']) assert(drawn.edges[id].dash === '5 3', `greedy's edge ${id} is dashed`);
    assert(
      drawn.summary === '8 hypotheses · chosen: “x y </s>” · greedy: “z </s>” (dashed)',
      `summary: ${drawn.summary}`,
    );
    assert(drawn.nBest.join('|') === 'x y </s>|z </s>', `n-best: ${drawn.nBest}`);
    // On screen: the tree's SVG holds pixels of more than its background.
    const svg = page.locator('#beam-section #beam-tree');
    await svg.scrollIntoViewIfNeeded();
    const shot = decodePng(await svg.screenshot());
    const seen = new Set();
    for (let i = 0; i < shot.px.length; i += shot.channels) seen.add(shot.px.subarray(i, i + 3).join(','));
    assert(seen.size > 4, `the tree is not on screen: ${seen.size} colours`);
    await page.locator('#beam-section').screenshot({ path: join(artifacts, 'report-beam.png') });
    assert(blocked.length === 0, `the report asked for ${blocked.length} URL(s): ${blocked.slice(0, 3).join(', ')}`);
    const mine = problems.slice(before);
    assert(mine.length === 0, mine.slice(0, 3).join('\n'));
    await page.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
