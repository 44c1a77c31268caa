/**
 * README's "Do the role rules agree with a person?" figures, checked: scripts/role-agreement.mjs run
 * with --stored on the stored last telemetry rows of the labelled runs (test/fixtures/role-agreement/,
 * a folder per day they were trained on, read in place, nothing trained) compares the rules' roles
 * (src/protocol/roles.ts) with each labelling (scripts/*-roles.json) and the labellings of a run with
 * each other, and every count it prints is the one README states beside its name.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO } from '../helpers';

const SCRIPT = join(REPO, 'scripts', 'role-agreement.mjs');
const STORED = join(REPO, 'test', 'fixtures', 'role-agreement');

/** What role-agreement.mjs prints on the runs stored in `day`: [who, agreeing, heads, share]. */
function agreement(day: string): string[][] {
  const r = spawnSync(process.execPath, [SCRIPT, '--runs', join(STORED, day), '--stored'], {
    cwd: REPO,
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  assert.doesNotMatch(r.stdout, /training/, `${day}: the stored runs are read, none trained`);
  return [...r.stdout.matchAll(/^role-agreement: (.+?): (\d+) of (\d+) heads agree \((\d+\.\d)%\)$/gm)].map((m) =>
    m.slice(1),
  );
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
  // README's paragraphs and list items, each read as one line: a figure counts only beside its name.
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8')
    .split(/\n\s*\n|\n(?=\s*- )/)
    .map((chunk) => chunk.replace(/\s+/g, ' '));
  for (const [who, ...counts] of printed) {
    // README: "- **<who, without 'the rules and '>**… **N of M heads agree (P%)**"
    const name = `**${who.replace(/^the rules and /, '')}**`;
    const chunk = readme.find((c) => c.includes(name));
    assert.ok(chunk, `README names ${name}`);
    const stated = /\*\*(\d+) of (\d+) heads agree \((\d+\.\d)%\)\*\*/.exec(chunk.slice(chunk.indexOf(name)));
    assert.ok(stated, `README states the agreement of ${who} in the same item: ${chunk}`);
    assert.deepEqual(stated.slice(1), counts, `README states what the script prints for ${who}`);
  }
});

test('role-agreement --stored on a folder without the runs says so and fails, training none', () => {
  const r = spawnSync(process.execPath, [SCRIPT, '--runs', join(STORED, 'no-such-day'), '--stored'], {
    cwd: REPO,
    encoding: 'utf8',
  });
  assert.equal(r.status, 1);
  assert.match(r.stdout, /no run .*seed-1 \(--stored trains none\)/);
  assert.match(r.stderr, /no labelling was compared/);
  assert.doesNotMatch(r.stdout, /training/);
  const bare = spawnSync(process.execPath, [SCRIPT, '--runs'], { cwd: REPO, encoding: 'utf8' });
  assert.equal(bare.status, 2);
  assert.equal(bare.stderr.trim(), 'role-agreement: --runs takes a path');
});
