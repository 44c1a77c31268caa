/**
 * README's "Do the role rules agree with a person?" figure, checked: scripts/role-agreement.mjs run
 * on the stored last telemetry rows of its two runs (test/fixtures/role-agreement/, no training)
 * compares the rules' roles (src/protocol/roles.ts) with scripts/hand-roles.json, and the count it
 * prints is the one README states.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO } from '../helpers';

test('role-agreement on the stored runs prints the agreement README states', () => {
  const runs = mkdtempSync(join(tmpdir(), 'role-agreement-test-'));
  try {
    for (const run of ['seed-1', 'sort-seed-1']) {
      cpSync(join(REPO, 'test', 'fixtures', 'role-agreement', run), join(runs, run), { recursive: true });
      // A finished run: the script trains none.
      writeFileSync(join(runs, run, 'status.json'), JSON.stringify({ state: 'completed', step: 600 }));
    }
    const r = spawnSync(process.execPath, [join(REPO, 'scripts', 'role-agreement.mjs'), '--runs', runs], {
      cwd: REPO,
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stderr);
    const printed = /role-agreement: (\d+) of (\d+) heads agree \((\d+\.\d)%\)/.exec(r.stdout);
    assert.ok(printed, r.stdout);
    assert.doesNotMatch(r.stdout, /training/, 'the stored runs are read, not trained again');
    const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
    const stated = /agree on \*\*(\d+) of (\d+)\s+heads \((\d+\.\d)%\)/.exec(readme);
    assert.ok(stated, 'README states the agreement');
    assert.deepEqual(stated.slice(1), printed.slice(1), 'README states what the script prints');
  } finally {
    rmSync(runs, { recursive: true, force: true });
  }
});
