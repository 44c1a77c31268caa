/**
 * README's "Do the role rules agree with a person?" figures, checked: scripts/role-agreement.mjs run
 * on the stored last telemetry rows of the labelled runs (test/fixtures/role-agreement/, a folder per
 * day they were trained on, no training) compares the rules' roles (src/protocol/roles.ts) with each
 * labelling (scripts/*-roles.json) and the labellings of a run with each other, and every count it
 * prints is the one README states.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO } from '../helpers';

const STORED = join(REPO, 'test', 'fixtures', 'role-agreement');

/** What role-agreement.mjs prints on the runs stored in `day`: [who, agreeing, heads, share]. */
function agreement(day: string): string[][] {
  const runs = mkdtempSync(join(tmpdir(), 'role-agreement-test-'));
  try {
    for (const run of readdirSync(join(STORED, day))) {
      cpSync(join(STORED, day, run), join(runs, run), { recursive: true });
      writeFileSync(join(runs, run, 'status.json'), JSON.stringify({ state: 'completed', step: 600 }));
    }
    const script = join(REPO, 'scripts', 'role-agreement.mjs');
    const r = spawnSync(process.execPath, [script, '--runs', runs, '--stored'], { cwd: REPO, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /training/, `${day}: the stored runs are read, none trained`);
    return [...r.stdout.matchAll(/^role-agreement: (.+?): (\d+) of (\d+) heads agree \((\d+\.\d)%\)$/gm)].map((m) =>
      m.slice(1),
    );
  } finally {
    rmSync(runs, { recursive: true, force: true });
  }
}

test('role-agreement on the stored runs prints the agreement README states', () => {
  const printed = [...agreement('2026-11-27'), ...agreement('2026-11-28')];
  assert.deepEqual(
    printed.map((m) => m[0]),
    [
      'the rules and by hand from one pair',
      'the rules and blind from 32 pairs',
      'by hand from one pair and blind from 32 pairs',
      'the rules and where by hand from one pair and blind from 32 pairs agree',
      'the rules and reviewer A',
      'the rules and reviewer B',
      'reviewer A and reviewer B',
      'the rules and where reviewer A and reviewer B agree',
    ],
  );
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8').replace(/\s+/g, ' '); // as read, not as wrapped
  for (const [who, ...counts] of printed) {
    // README: "**<who, without 'the rules and '>**… **N of M heads agree (P%)**"
    const name = who.replace(/^the rules and /, '');
    const at = readme.indexOf(`**${name}**`);
    assert.ok(at >= 0, `README names "${name}"`);
    const stated = /\*\*(\d+) of (\d+) heads agree\s+\((\d+\.\d)%\)/.exec(readme.slice(at));
    assert.ok(stated, `README states the agreement of ${who}`);
    assert.deepEqual(stated.slice(1), counts, `README states what the script prints for ${who}`);
  }
});
