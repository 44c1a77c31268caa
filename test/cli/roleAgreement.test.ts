/**
 * README's "Do the role rules agree with a person?" figure, checked: scripts/role-agreement.mjs run
 * on the stored last telemetry rows of its two runs (test/fixtures/role-agreement/, no training)
 * compares the rules' roles (src/protocol/roles.ts) with scripts/hand-roles.json and
 * scripts/blind-roles.json, and the counts it prints are the ones README states.
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
    const printed = [...r.stdout.matchAll(/the rules and (.+?): (\d+) of (\d+) heads agree \((\d+\.\d)%\)/g)];
    assert.deepEqual(
      printed.map((m) => m[1]),
      ['by hand from one pair', 'blind from 32 pairs'],
      r.stdout,
    );
    assert.doesNotMatch(r.stdout, /training/, 'the stored runs are read, not trained again');
    const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
    for (const m of printed) {
      // README: "- **<labelling>** (`scripts/…json`): … **N of M heads agree (P%)**"
      const at = readme.indexOf(`**${m[1]}**`);
      assert.ok(at >= 0, `README names the labelling "${m[1]}"`);
      const stated = /\*\*(\d+) of (\d+) heads agree\s+\((\d+\.\d)%\)/.exec(readme.slice(at));
      assert.ok(stated, `README states the agreement with ${m[1]}`);
      assert.deepEqual(stated.slice(1), m.slice(2), `README states what the script prints for ${m[1]}`);
    }
  } finally {
    rmSync(runs, { recursive: true, force: true });
  }
});
