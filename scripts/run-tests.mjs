// Runs every test suite and exits non-zero if any fails:
//   1. the engine's unit and golden tests under node:test (bundled by `npm run build` into out/test);
//   2. the integration tests in a real VS Code (scripts/test-vscode.mjs, test/vscode/README.md), then
//      the VSIX packed, checked and installed into a fresh VS Code server (test/vscode/vsix/);
//   3. the webview tests in a real browser (test/webview/browser/index.mjs);
//   4. the Python writer's tests with Debian's PyTorch (scripts/test-python.mjs, python/README.md).
// `node scripts/run-tests.mjs <text>…` runs only the unit-test files whose path contains a <text>.
//
// Skips (test/README.md): a test that cannot run on this machine fails, unless the run allows its skip
// by name: ATTENTION_DEBUGGER_ALLOW_SKIP=webgpu,gettext-de. Every skip node:test reports is counted
// and must name an allowed key (as a word of its message, e.g. "webgpu: no adapter"); one that does
// not fails the run. On CI (env CI set, as .ci/run's `npm test`) no skip may be allowed.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function findTests(dir) {
  const found = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) found.push(...findTests(p));
    else if (name.endsWith('.test.js')) found.push(p);
  }
  return found.sort();
}

const env = { ...process.env };
const allowed = new Set(
  (env.ATTENTION_DEBUGGER_ALLOW_SKIP ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean),
);
// The older switch for the Python tests says the same as allowing the skip "python".
if (env.ATTENTION_DEBUGGER_SKIP_PYTHON === '1') allowed.add('python');
if (env.CI && allowed.size) {
  console.error(`run-tests: CI allows no skips, but this run allows ${[...allowed].join(', ')}`);
  process.exit(1);
}
// Tests that check ATTENTION_DEBUGGER_REQUIRE_WEBGPU fail without an adapter unless webgpu may skip.
if (!allowed.has('webgpu')) env.ATTENTION_DEBUGGER_REQUIRE_WEBGPU = '1';
// Allowing "python" skips the Python tests only where they cannot run: Debian's python3 lacks torch.
if (allowed.has('python') && env.ATTENTION_DEBUGGER_SKIP_PYTHON !== '1') {
  const python = env.ATTENTION_DEBUGGER_PYTHON ?? '/usr/bin/python3';
  if (spawnSync(python, ['-c', 'import torch'], { stdio: 'ignore' }).status !== 0)
    env.ATTENTION_DEBUGGER_SKIP_PYTHON = '1';
}

/** The allowed key a skip message names as a word ("webgpu: …", "…SKIP_PYTHON=1"), if any. */
function allowedKey(message, keys = allowed) {
  const text = message.toLowerCase();
  for (const key of keys) {
    const at = text.indexOf(key);
    for (let i = at; i >= 0; i = text.indexOf(key, i + 1)) {
      const before = text[i - 1] ?? ' ';
      const after = text[i + key.length] ?? ' ';
      if (!/[a-z0-9]/.test(before) && !/[a-z0-9]/.test(after)) return key;
    }
  }
  return undefined;
}

const tapDir = mkdtempSync(join(tmpdir(), 'ad-tap-'));
const totals = { pass: 0, fail: 0, skipped: 0, allowed: 0, refused: [] };
const suiteTotals = { passed: 0, failed: 0, skipped: 0 };

/** A node:test run: spec to the terminal, TAP to a file whose summary and skips are counted here. */
function nodeTests(files) {
  const tap = join(tapDir, `${Object.keys(suites).length}.tap`);
  return [
    'node',
    ['--test', '--test-reporter=spec', '--test-reporter-destination=stdout'].concat(
      ['--test-reporter=tap', `--test-reporter-destination=${tap}`],
      files,
    ),
    tap,
  ];
}

function countTap(tap) {
  let text = '';
  try {
    text = readFileSync(tap, 'utf8');
  } catch {
    return; // the run died before writing; its exit status says so
  }
  for (const key of ['pass', 'fail', 'skipped']) {
    for (const m of text.matchAll(new RegExp(`^# ${key} (\\d+)$`, 'gm'))) totals[key] += Number(m[1]);
  }
  for (const m of text.matchAll(/^\s*ok \d+ - (.*?) # SKIP(?: (.*))?$/gm)) {
    const [, name, message = ''] = m;
    if (allowedKey(message)) totals.allowed++;
    else totals.refused.push(`${name}: ${message || '(no reason given)'}`);
  }
}

const only = process.argv.slice(2);
const unit = findTests('out/test').filter((f) => only.length === 0 || only.some((o) => f.includes(o)));
// node --test given no file runs every test file it finds under the working folder: say so instead.
if (!unit.length) {
  console.error(`run-tests: no unit-test file under out/test matches ${only.join(', ') || 'anything'} (build first?)`);
  process.exit(1);
}
const suites = {};
suites.unit = nodeTests(unit);
if (only.length === 0) {
  suites.vscode = ['node', ['scripts/test-vscode.mjs']];
  suites.vsix = nodeTests(['test/vscode/vsix/vsix.test.mjs']);
  suites.webview = ['node', ['test/webview/browser/index.mjs']];
  suites.python = ['node', ['scripts/test-python.mjs']];
}

/** A line that starts a failure's report in any suite's output (node:test spec, our runners, unittest). */
const FAILURE = /^\s*(✖|FAIL\b|not ok\b|ERROR:|FAILED\b)/;
/** Lines kept after each failure's first, for the recap at the end. */
const FAILURE_CONTEXT = 8;

/**
 * Runs a suite with its output passed through as it comes, and returns its exit status and its
 * failures' lines: the recap at the end repeats them, since a failure 20 minutes into a long run
 * is otherwise far above the summary a CI log shows.
 */
function runSuite(cmd, args) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['inherit', 'pipe', 'pipe'], env });
    const failures = [];
    let keep = 0;
    const scan = (stream, to) => {
      let rest = '';
      stream.on('data', (chunk) => {
        to.write(chunk);
        const lines = (rest + chunk.toString('utf8')).split('\n');
        rest = lines.pop() ?? '';
        for (const line of lines) {
          if (FAILURE.test(line)) keep = FAILURE_CONTEXT + 1;
          if (keep > 0 && failures.length < 400) failures.push(line);
          keep = Math.max(0, keep - 1);
        }
      });
    };
    scan(child.stdout, process.stdout);
    scan(child.stderr, process.stderr);
    child.on('error', (err) => resolve({ status: 1, failures: [`could not start ${cmd}: ${err.message}`] }));
    child.on('close', (status, signal) => resolve({ status: signal ? 1 : status, failures }));
  });
}

const recap = [];
for (const [name, [cmd, args, tap]] of Object.entries(suites)) {
  if (name === 'python' && env.ATTENTION_DEBUGGER_SKIP_PYTHON === '1') {
    console.log('python tests: skipped (allowed: python)');
    suiteTotals.skipped++;
    continue;
  }
  const r = await runSuite(cmd, args);
  if (tap) countTap(tap);
  if (r.status === 0) suiteTotals.passed++;
  else {
    suiteTotals.failed++;
    recap.push(`--- ${name} suite failed (exit ${r.status}):`, ...r.failures);
  }
}
rmSync(tapDir, { recursive: true, force: true });

if (recap.length) console.log(['', 'run-tests: what failed, again:', ...recap, ''].join('\n'));

for (const s of totals.refused)
  console.error(`skip not allowed: ${s}\n  (ATTENTION_DEBUGGER_ALLOW_SKIP=<key> allows it; test/README.md, "Skips")`);
const allowedList = allowed.size ? [...allowed].join(',') : 'none';
console.log(
  `node:test: ${totals.pass} passed, ${totals.fail} failed, ${totals.skipped} skipped ` +
    `(${totals.allowed} allowed, ${totals.refused.length} not allowed; allowed skips: ${allowedList}); ` +
    `suites: ${suiteTotals.passed} passed, ${suiteTotals.failed} failed, ${suiteTotals.skipped} skipped`,
);
const unmatched = totals.skipped - totals.allowed - totals.refused.length;
if (unmatched !== 0) console.error(`run-tests: ${unmatched} skips in the summaries match no skipped test line`);
process.exit(suiteTotals.failed || totals.refused.length || unmatched ? 1 : 0);
