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
import { spawnSync } from 'node:child_process';
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

for (const [name, [cmd, args, tap]] of Object.entries(suites)) {
  if (name === 'python' && env.ATTENTION_DEBUGGER_SKIP_PYTHON === '1') {
    console.log('python tests: skipped (allowed: python)');
    suiteTotals.skipped++;
    continue;
  }
  const r = spawnSync(cmd, args, { stdio: 'inherit', env });
  if (tap) countTap(tap);
  if (r.status === 0) suiteTotals.passed++;
  else suiteTotals.failed++;
}
rmSync(tapDir, { recursive: true, force: true });

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
