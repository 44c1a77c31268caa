/**
 * The WebAssembly the pages run is the text beside it: each webview/lib/<name>.wat, compiled again
 * by scripts/build-wasm.mjs (wabt), equals the committed <name>Wasm.ts byte for byte.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO } from '../helpers';

test('every webview .wat is compiled into its committed module', () => {
  const r = spawnSync(process.execPath, [join(REPO, 'scripts', 'build-wasm.mjs'), '--check'], {
    cwd: REPO,
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
});
