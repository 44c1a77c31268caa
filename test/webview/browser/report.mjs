// The run report (issue 33 item 1): a tiny reverse run is trained here, its report written by the
// CLI (`report RUN --out FILE`) and opened from file:// with every other request blocked and counted
// (must be none). Checked as drawn, against independent sources: the curves' traces hold the
// values of the run's own metrics.jsonl (read here), the slider's label says the step of a snapshot
// file in the run's snapshots/ folder, canvases are not blank and change with the slider, a curve
// answers hover with its step; the file is under 10 MB with 60 snapshots (as many as the README's
// 1,500-step tiny reverse run keeps). Screenshot: test-artifacts/webview/report.png.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { artifacts, assert, openFile, problems, test } from './harness.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const cli = (...args) => spawnSync(process.execPath, [join(root, 'dist', 'cli.js'), ...args], { encoding: 'utf8' });

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
    await page.screenshot({ path: join(artifacts, 'report.png'), fullPage: true });
    assert(blocked.length === 0, `the report asked for ${blocked.length} URL(s): ${blocked.slice(0, 3).join(', ')}`);
    const mine = problems.slice(before);
    assert(mine.length === 0, mine.slice(0, 3).join('\n'));
    await page.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
