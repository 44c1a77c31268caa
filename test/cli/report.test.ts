/**
 * `report RUN --out FILE` (issue 33 item 1): a micro run's report is one HTML file with the run's
 * name, steps and every snapshot inlined and nothing loaded from outside; a bad run folder, a
 * missing snapshot step, a malformed --steps and a file of the run as --out are refused with an
 * error naming what to fix and exit code 1 (2 for usage), leaving no file behind.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { REPO } from '../helpers';
import { scratch } from '../train/helpers';
import { micro } from './malformed-plants';

const cli = (...args: string[]) =>
  spawnSync(process.execPath, [join(REPO, 'dist', 'cli.js'), ...args], { encoding: 'utf8', input: '' });

const dir = scratch('ad-report-');
const run = join(dir, 'run');

before(() => {
  writeFileSync(join(dir, 'micro.json'), micro({}, { snapshot_every: 2 }));
  const r = cli('train', '--backend', 'wasm', '--task', 'copy', '--config', join(dir, 'micro.json'), '--out', run);
  assert.equal(r.status, 0, r.stderr);
});

/** The report's inlined data (the JSON script element). */
const dataOf = (html: string) =>
  JSON.parse(/<script type="application\/json" id="report-data">([^]*?)<\/script>/.exec(html)![1]!) as {
    header: { run: string; step: number };
    snapshots: { step: number }[];
    rows: { step: number; loss: number }[];
  };

test('report writes one self-contained HTML file with the run, its steps and every snapshot', () => {
  const out = join(dir, 'run.html');
  const r = cli('report', run, '--out', out);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout).out, out);
  const html = readFileSync(out, 'utf8');
  const d = dataOf(html);
  const snapshots = readdirSync(join(run, 'snapshots')).length;
  const metrics = readFileSync(join(run, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.equal(d.header.run, 'run');
  assert.equal(d.header.step, metrics.at(-1).step);
  assert.equal(d.snapshots.length, snapshots, 'every snapshot');
  assert.deepEqual(
    d.rows.map((x) => x.loss),
    metrics.map((x) => x.loss),
  );
  // Nothing is loaded from elsewhere: no src=, no href=, no url(), and a CSP that forbids the rest.
  assert.ok(!/<script[^>]* src=|<link |url\(http/i.test(html), 'the report names no file or URL to load');
  assert.ok(/content="default-src &#39;none&#39;;/.test(html), 'a CSP that forbids loading anything');
  assert.deepEqual(
    readdirSync(dir).filter((f) => f.includes('.tmp-')),
    [],
    'no temp file left',
  );
});

test('report --steps and --pairs choose what it holds; a step without a snapshot is named', () => {
  const out = join(dir, 'two.html');
  const r = cli('report', run, '--out', out, '--steps', '2,4', '--pairs', '0');
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(
    dataOf(readFileSync(out, 'utf8')).snapshots.map((s) => s.step),
    [2, 4],
  );
  const bad = cli('report', run, '--out', join(dir, 'three.html'), '--steps', '3');
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /no snapshot at step 3; its snapshots are at 2, 4, 6/);
  assert.ok(!existsSync(join(dir, 'three.html')));
  const malformed = cli('report', run, '--steps', 'two');
  assert.equal(malformed.status, 2);
  assert.match(malformed.stderr, /--steps takes whole numbers/);
});

test('report of a bad run folder says which folder and what to do, exit code 1', () => {
  const missing = join(dir, 'nope');
  const r = cli('report', missing, '--out', join(dir, 'nope.html'));
  assert.equal(r.status, 1);
  assert.match(r.stderr, new RegExp(`${missing}: no such folder; name a run folder`));
  const empty = join(dir, 'empty');
  mkdirSync(empty);
  const e = cli('report', empty, '--out', join(dir, 'empty.html'));
  assert.equal(e.status, 1);
  assert.match(e.stderr, new RegExp(`${empty}: not a run folder \\(no config.json\\)`));
  assert.ok(!existsSync(join(dir, 'empty.html')) && !existsSync(join(dir, 'nope.html')), 'nothing written');
  const none = cli('report');
  assert.equal(none.status, 2);
  assert.match(none.stderr, /report: expected one run folder/);
});

test('report never writes over a file of the run, nor over a file without --force', () => {
  const own = cli('report', run, '--out', join(run, 'metrics.jsonl'), '--force');
  assert.equal(own.status, 1);
  assert.match(own.stderr, /is the run .*'s own metrics\.jsonl/);
  const out = join(dir, 'kept.html');
  writeFileSync(out, 'mine\n');
  const refused = cli('report', run, '--out', out);
  assert.equal(refused.status, 1);
  assert.match(refused.stderr, /already exists; give --force to replace it/);
  assert.equal(readFileSync(out, 'utf8'), 'mine\n');
  assert.equal(cli('report', run, '--out', out, '--force').status, 0);
  assert.match(readFileSync(out, 'utf8'), /^<!DOCTYPE html>/);
});
