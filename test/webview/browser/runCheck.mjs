// The Run Check panel (issue 33 item 3): a run folder's check (run/check, what check-run prints) as
// a summary line and a table of findings. Checked as drawn: the rows are the findings' file, line,
// field, message and severity, a click on a column sorts them as a hand-sorted list does (again:
// reversed), the summary counts the files and says valid or not, a valid folder shows no table,
// the Markdown export lists the findings, and a message of the wrong shape is named in the error
// banner. Dark and light screenshots in test-artifacts/webview/.
import { join } from 'node:path';
import { V, artifacts, assert, openPanel, panelHeader, posted, send, test } from './harness.mjs';

const RUN = '/runs/reverse-micro';
const FILES = ['config.json', 'status.json', 'metrics.jsonl', 'checkpoints/step-10.safetensors'];
const FINDINGS = [
  { file: 'metrics.jsonl', line: 7, field: 'lr', message: 'expected a number, got "x"', severity: 'error' },
  { file: 'config.json', field: 'heads', message: 'must divide d_model', severity: 'error' },
  { file: 'checkpoints/step-10.safetensors', message: 'truncated: 12 bytes', severity: 'error' },
  { file: 'metrics.jsonl', line: 3, message: 'not valid JSON (Unexpected token)', severity: 'error' },
];
const HEADER = panelHeader(RUN, [10]);
const check = (findings) => ({ runDir: RUN, files: FILES, ok: findings.length === 0, findings, omitted: 0 });
const state = (c, error = null) => ({
  type: 'state',
  v: V,
  state: { panel: 'runCheck', header: HEADER, runDir: RUN, check: c, error },
});

const tableRows = (page) =>
  page.evaluate(() =>
    [...document.querySelectorAll('#findings-table tbody tr')].map((tr) =>
      [...tr.children].map((td) => td.textContent),
    ),
  );

for (const theme of ['dark', 'light'])
  test(`Run Check panel (${theme}): the findings as the checker gives them, sortable; the summary counts files`, async () => {
    const page = await openPanel('runCheck', { width: 1200, height: 800 }, theme);
    await send(page, state(check(FINDINGS)));
    await page.waitForFunction(() => document.querySelectorAll('#findings-table tbody tr').length > 0, null, {
      timeout: 20_000,
    });
    const rows = await tableRows(page);
    assert(rows.length === FINDINGS.length, `${rows.length} rows, want ${FINDINGS.length}`);
    rows.forEach(([n, file, line, field, message, severity], i) => {
      const f = FINDINGS[i];
      assert(Number(n) === i + 1, `row ${i}: #${n}`);
      assert(
        file === f.file && line === String(f.line ?? '') && field === (f.field ?? ''),
        `row ${i}: ${file}:${line} ${field}`,
      );
      assert(message === f.message && severity === f.severity, `row ${i}: ${message} (${severity})`);
    });
    const summary = await page.evaluate(() => document.getElementById('summary').textContent);
    assert(summary === 'reverse-micro: 4 files checked: not valid, 4 findings', `summary: ${summary}`);
    const header = await page.evaluate(() => document.getElementById('view-header').textContent);
    assert(header.includes('reverse-micro') && header.includes('4 files checked'), `header: ${header}`);
    // By file: ascending on the first click (equal files keep the checker's order), reversed on the second.
    const byFile = FINDINGS.map((f, i) => ({ ...f, n: i + 1 }))
      .sort((a, b) => a.file.localeCompare(b.file))
      .map((f) => String(f.n));
    await page.click('#findings-table th[data-key="file"]');
    const up = (await tableRows(page)).map((r) => r[0]);
    assert(up.join() === byFile.join(), `by file: ${up}, want ${byFile}`);
    await page.click('#findings-table th[data-key="line"]');
    const byLine = (await tableRows(page)).map((r) => r[2]);
    assert(byLine.join() === '3,7,,', `by line (none last): ${byLine}`);
    await page.click('#findings-table th[data-key="line"]');
    const down = (await tableRows(page)).map((r) => r[2]);
    assert(down.join() === '7,3,,', `by line, reversed (none still last): ${down}`);
    // Theme-aware: the page's colours are the theme's.
    const bg = await page.evaluate(() => [
      getComputedStyle(document.body).backgroundColor,
      getComputedStyle(document.documentElement).getPropertyValue('--vscode-editor-background').trim(),
    ]);
    const hex = (rgb) =>
      `#${rgb
        .match(/\d+/g)
        .slice(0, 3)
        .map((x) => Number(x).toString(16).padStart(2, '0'))
        .join('')}`;
    assert(hex(bg[0]) === bg[1].toLowerCase(), `body ${bg[0]}, theme background ${bg[1]}`);
    await page.screenshot({ path: join(artifacts, `runCheck-${theme}.png`), fullPage: true });
    // The Markdown export: the summary and one row per finding, in the table's order.
    await page.click('#export-md');
    const md = (await posted(page, 'export')).at(-1);
    assert(md.format === 'md' && md.name === 'reverse-micro-check.md', `export ${md.format} ${md.name}`);
    assert(md.text.includes('| metrics.jsonl | 7 | lr | expected a number, got "x" | error |'), md.text);
    assert(md.text.includes('not valid, 4 findings'), md.text);
    await page.close();
  });

test('Run Check panel: a valid folder says so without a table; an error is said; a malformed state is named', async () => {
  const page = await openPanel('runCheck', { width: 1000, height: 600 });
  await send(page, state(check([])));
  await page.waitForFunction(() => document.getElementById('summary'));
  const seen = await page.evaluate(() => ({
    summary: document.getElementById('summary').textContent,
    hidden: document.getElementById('findings').hidden,
  }));
  assert(seen.summary === 'reverse-micro: 4 files checked: a valid run folder', `says ${seen.summary}`);
  assert(seen.hidden, 'no findings table');
  await send(page, state(null, 'no such folder'));
  await page.waitForFunction(() => document.getElementById('none'));
  const said = await page.evaluate(() => document.getElementById('none').textContent);
  assert(said === 'Could not check reverse-micro: no such folder', `says ${said}`);
  await page.click('#recheck');
  assert((await posted(page, 'recheck')).length === 1, 'recheck posted once');
  // `ok` that contradicts the findings is refused, naming the field.
  await send(page, state({ ...check(FINDINGS), ok: true }));
  await page.waitForSelector('#error:not([hidden])', { timeout: 10_000 });
  const text = await page.locator('#error').innerText();
  assert(text.includes('state.check.ok'), `the banner says: ${text}`);
  await page.close();
});
