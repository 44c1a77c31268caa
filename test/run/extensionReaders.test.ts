/**
 * The extension host reads a run's small JSON files itself (the Runs tree's state and fork link, the
 * Ablate Heads picker's shape, the Ablation Results and Head Importance panels) with the engine's
 * readers: a FIFO, a link to /dev/zero or a folder where a file should be is refused, never read.
 * A plain readFileSync on that FIFO blocks the extension host forever; on /dev/zero it reads until
 * memory runs out.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { forkOf } from '../../src/extension/runFork';
import { readRunState } from '../../src/extension/runState';

const work = mkdtempSync(join(tmpdir(), 'extension-readers-'));
after(() => rmSync(work, { recursive: true, force: true }));

/** A run folder whose config.json and status.json are made by `make(path)`. */
function runWith(name: string, make: (path: string) => void): string {
  const dir = join(work, name);
  mkdirSync(dir);
  make(join(dir, 'config.json'));
  make(join(dir, 'status.json'));
  return dir;
}

test('a FIFO, a link to /dev/zero or a folder as config.json and status.json is refused, not read', () => {
  const hostile = [
    runWith('fifo', (p) => assert.equal(spawnSync('mkfifo', [p]).status, 0)),
    runWith('zero', (p) => symlinkSync('/dev/zero', p)),
    runWith('folder', (p) => mkdirSync(p)),
  ];
  for (const dir of hostile) {
    assert.equal(forkOf(dir), undefined, dir);
    assert.equal(readRunState(dir), undefined, dir);
  }
});

test('the same readers read a real fork and status', () => {
  const dir = runWith('real', (p) =>
    writeFileSync(
      p,
      p.endsWith('config.json')
        ? JSON.stringify({ fork: { parent: '/runs/a', step: 40, changes: {} } })
        : JSON.stringify({ state: 'paused', step: 41, time: 1 }),
    ),
  );
  assert.deepEqual(forkOf(dir), { parent: '/runs/a', step: 40, changes: {} });
  assert.deepEqual(readRunState(dir), { state: 'paused', step: 41 });
});
