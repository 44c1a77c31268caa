// Runs every test suite and exits non-zero if any fails:
//   1. the engine's unit and golden tests under node:test (bundled by `npm run build` into out/test);
//   2. the integration tests in a real VS Code (scripts/test-vscode.mjs, test/vscode/README.md), then
//      the VSIX packed, checked and installed into a fresh VS Code server (test/vscode/vsix/);
//   3. the webview tests in a real browser (test/webview/browser/index.mjs);
//   4. the Python writer's tests with Debian's PyTorch (scripts/test-python.mjs, python/README.md).
// `node scripts/run-tests.mjs <text>…` runs only the unit-test files whose path contains a <text>.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
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

const only = process.argv.slice(2);
const unit = findTests('out/test').filter((f) => only.length === 0 || only.some((o) => f.includes(o)));
const suites = [['node', ['--test', '--test-reporter=spec', ...unit]]];
if (only.length === 0)
  suites.push(
    ['node', ['scripts/test-vscode.mjs']],
    ['node', ['--test', '--test-reporter=spec', 'test/vscode/vsix/vsix.test.mjs']],
    ['node', ['test/webview/browser/index.mjs']],
    ['node', ['scripts/test-python.mjs']],
  );

// On CI the setup step installed lavapipe, so the webgpu path must run there: a missing adapter fails.
const env = { ...process.env };
if (env.CI && env.ATTENTION_DEBUGGER_REQUIRE_WEBGPU === undefined) env.ATTENTION_DEBUGGER_REQUIRE_WEBGPU = '1';

let failed = 0;
for (const [cmd, args] of suites) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', env });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
