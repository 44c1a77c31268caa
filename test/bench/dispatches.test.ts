/**
 * bench/gpu/dispatches.mjs stops at once, saying what to run instead, where it cannot count what was
 * asked: an engine at `--before <commit>` that does not bundle with this tree's bench/lib/engine.ts
 * (198c3d2, the webgpu benches' old "before", lacks files it imports; in a shallow clone the commit
 * is missing, which fails the same way), and `--child` without the bundle a parent names.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO } from '../helpers';

const bench = (args: string[]) =>
  spawnSync(process.execPath, [join(REPO, 'bench', 'gpu', 'dispatches.mjs'), ...args], {
    cwd: REPO,
    encoding: 'utf8',
    env: { ...process.env, BENCH_ENGINE_BUNDLE: '' },
  });

test('--before a commit that does not bundle: exit 2 before counting, naming the plain command', () => {
  // Older engines bundle with what they lack stubbed (bench/lib/olderEntry.mjs); a commit the
  // repository does not have cannot.
  const r = bench(['--before', 'f00dfeed', '--configs', 'tiny']);
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /the engine at f00dfeed does not bundle with this tree's bench\/lib\/engine\.ts/);
  assert.match(r.stderr, /Run `node bench\/gpu\/dispatches\.mjs` without --before to count this tree alone/);
  assert.equal(r.stdout, ''); // no table: nothing was counted
  assert.doesNotMatch(r.stderr, /this tree: \{/); // nor a row of this tree's
});

test('--child alone (no bundle named): exit 2, saying to run without it', () => {
  const r = bench(['--child']);
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /run without --child to count this tree/);
});
