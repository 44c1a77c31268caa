// Runs every test suite: the engine's unit and golden tests under node:test (compiled by tsc to
// out/), then any further suites registered in SUITES (integration tests in a real VS Code, webview
// tests in a real browser) once they exist. Exits non-zero if any suite fails.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, existsSync } from 'node:fs';
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
for (const extra of ['scripts/test-vscode.mjs', 'scripts/test-webview.mjs', 'scripts/test-python.mjs']) {
  if (only.length === 0 && existsSync(extra)) suites.push(['node', [extra]]);
}

// On CI the setup step installed lavapipe, so the webgpu path must run there: a missing adapter fails.
const env = { ...process.env };
if (env.CI && env.ATTENTION_DEBUGGER_REQUIRE_WEBGPU === undefined) env.ATTENTION_DEBUGGER_REQUIRE_WEBGPU = '1';

let failed = 0;
for (const [cmd, args] of suites) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', env });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
