/**
 * README's reproduction (scripts/alignment-study.mjs) reads a run as worked by hand: a run folder
 * written here (no training), whose loss falls 3 → 2 over steps 1–20, holds 2 to step 59, falls
 * 0.2 a step over 60–64 and holds 1 to step 100; whose last layer's smallest align_err is 0.9 at
 * steps 10–50, 0.78 at 60, 0.6 at 70, 0.45 at 80; and whose first layer's cross head is aligned
 * from the start (0.1), which the study must ignore.
 * - alignment formed: the first row under 0.5 in the last layer, step 80 (layer 0 would give 10);
 * - align_err falls from: the first row 0.1 below the first five rows' median (0.9), step 60;
 * - the plateau's end: the start of the drop after the initial fall. lossPhases smooths over
 *   h = ⌊100 / 50⌋ = 2 rows and rates row i by s[i−2] − s[i+2]; s[j] first moves at j = 58 (its
 *   window reaches step 60), so the drop starts at a row from 56 to 60, never at the initial fall.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO } from '../helpers';

const loss = (step: number): number =>
  step <= 20 ? 3 - (step - 1) / 19 : step < 60 ? 2 : step <= 64 ? 2 - 0.2 * (step - 59) : 1;
const lastLayer = [0.9, 0.9, 0.9, 0.9, 0.9, 0.78, 0.6, 0.45, 0.3, 0.2]; // steps 10, 20, …, 100

test('the alignment study finds the plateau end, the fall and the alignment step of a hand-made run', () => {
  const runs = mkdtempSync(join(tmpdir(), 'alignment-study-test-'));
  try {
    const run = join(runs, 'seed-1');
    mkdirSync(run);
    writeFileSync(join(run, 'status.json'), JSON.stringify({ state: 'completed', step: 100 }));
    const metrics = Array.from({ length: 100 }, (_, i) => JSON.stringify({ step: i + 1, loss: loss(i + 1) }));
    writeFileSync(join(run, 'metrics.jsonl'), `${metrics.join('\n')}\n`);
    const heads = ['cross:0.0', 'cross:1.0', 'cross:1.1'];
    const telemetry = lastLayer.map((err, i) =>
      JSON.stringify({ step: 10 * (i + 1), pairs: 1, heads, stats: { align_err: [0.1, err + 0.05, err] } }),
    );
    writeFileSync(join(run, 'telemetry.jsonl'), `${telemetry.join('\n')}\n`);
    const out = join(runs, 'figure.png');
    const r = spawnSync(
      process.execPath,
      [join(REPO, 'scripts', 'alignment-study.mjs'), '--seeds', '1', '--steps', '100', '--runs', runs, '--out', out],
      { cwd: REPO, encoding: 'utf8' },
    );
    assert.equal(r.status, 0, r.stderr);
    const [seed1] = JSON.parse(readFileSync(join(runs, 'alignment-study.json'), 'utf8')) as {
      plateauEnd: number;
      starts: number;
      formed: number;
    }[];
    assert.equal(seed1!.formed, 80);
    assert.equal(seed1!.starts, 60);
    assert.ok(seed1!.plateauEnd >= 56 && seed1!.plateauEnd <= 60, `plateau end ${seed1!.plateauEnd}`);
    assert.ok(readFileSync(out).subarray(1, 4).toString() === 'PNG', 'the figure is a PNG');
  } finally {
    rmSync(runs, { recursive: true, force: true });
  }
});

test("README's table is what the study reads from the three seeds' stored runs", () => {
  // test/fixtures/alignment-study: each seed's loss and cross heads' align_err, as trained on 2026-11-27.
  const runs = mkdtempSync(join(tmpdir(), 'alignment-study-readme-'));
  try {
    for (const seed of [1, 2, 3]) {
      const run = join(runs, `seed-${seed}`);
      cpSync(join(REPO, 'test', 'fixtures', 'alignment-study', `seed-${seed}`), run, { recursive: true });
      writeFileSync(join(run, 'status.json'), JSON.stringify({ state: 'completed', step: 600 }));
    }
    const r = spawnSync(
      process.execPath,
      [join(REPO, 'scripts', 'alignment-study.mjs'), '--runs', runs, '--out', join(runs, 'figure.png')],
      { cwd: REPO, encoding: 'utf8' },
    );
    assert.equal(r.status, 0, r.stderr);
    const results = JSON.parse(readFileSync(join(runs, 'alignment-study.json'), 'utf8')) as {
      seed: number;
      plateauEnd: number;
      drop: { from: number; at: number; to: number };
      starts: number;
      formed: number;
    }[];
    const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
    assert.equal(results.length, 3);
    for (const x of results) {
      const row = `| ${x.seed} | ${x.plateauEnd} | ${x.drop.from} … ${x.drop.at} … ${x.drop.to} | ${x.starts} | ${x.formed} | ${x.formed - x.plateauEnd} |`;
      assert.ok(readme.includes(row), `README lacks the row ${row}`);
    }
  } finally {
    rmSync(runs, { recursive: true, force: true });
  }
});
