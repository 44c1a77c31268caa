/**
 * The run report's beam tree (issue 33 item 1), through the real `serve` process and the CLI: a tree
 * the engine answered for beam/tree is given to report/write and comes back whole in the file's
 * data; a report without one holds none; a malformed tree (a node's status, a parent after its
 * child, a missing field) or one past REPORT_MAX_BEAM_NODES is refused with a message naming the
 * field, and no file is written; a tree of another run folder is noted. The CLI's `report --beam
 * FILE` embeds a saved tree and refuses a malformed one the same way.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { BeamTreeView } from '../../src/protocol/beamTree';
import { REPORT_DATA_ID, REPORT_MAX_BEAM_NODES, type RunReportData } from '../../src/protocol/report';
import { REPO } from '../helpers';
import { micro } from '../cli/malformed-plants';
import { scratch } from '../train/helpers';
import { RawEngine } from './rawEngine';

const cliJs = join(REPO, 'dist', 'cli.js');
const dir = scratch('ad-report-beam-');
const run = join(dir, 'run');
let engine: RawEngine;
let tree: BeamTreeView;

before(async () => {
  writeFileSync(join(dir, 'micro.json'), micro({}, { steps: 4, snapshot_every: 2 }));
  const args = ['train', '--backend', 'wasm', '--task', 'copy', '--config', join(dir, 'micro.json'), '--out', run];
  const r = spawnSync(process.execPath, [cliJs, ...args], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  engine = new RawEngine();
  const answer = await engine.ask('beam/tree', { runDir: run, input: { kind: 'text', src: '4 5 6' }, beam: 3 });
  assert.equal(answer.error, undefined);
  tree = answer.result as BeamTreeView;
  assert.ok(tree.nodes.length > 3, `a tree of ${tree.nodes.length} nodes`);
});

after(() => engine.proc.kill());

/** The data a report file holds (its JSON script element). */
function dataOf(file: string): RunReportData {
  const html = readFileSync(file, 'utf8');
  const json = new RegExp(`<script type="application/json" id="${REPORT_DATA_ID}">(.*?)</script>`, 's').exec(html);
  assert.ok(json, 'the report holds its data');
  return JSON.parse(json[1]!) as RunReportData;
}

let n = 0;
const outFile = () => join(dir, `report-${++n}.html`);

test('report/write embeds the beam tree it is given, whole; without one the report holds none', async () => {
  const out = outFile();
  const r = await engine.ask('report/write', { runDir: run, out, beam: tree });
  assert.equal(r.error, undefined);
  const data = dataOf(out);
  assert.deepEqual(data.beam, tree);
  assert.deepEqual(data.notes, []);
  const plain = outFile();
  assert.equal((await engine.ask('report/write', { runDir: run, out: plain })).error, undefined);
  assert.equal(dataOf(plain).beam, null);
});

test('report/write refuses a malformed beam tree with a message naming the field, and writes nothing', async () => {
  const copy = () => structuredClone(tree) as unknown as Record<string, unknown> & { nodes: Record<string, unknown>[] };
  const badStatus = copy();
  badStatus.nodes[2]!.status = 'lost';
  const lateParent = copy();
  lateParent.nodes[1]!.parent = 3;
  const noGreedy = copy();
  delete noGreedy.greedy;
  const huge = copy();
  huge.nodes = Array.from({ length: REPORT_MAX_BEAM_NODES + 1 }, () => ({}));
  for (const [beam, why] of [
    [badStatus, /beam\.nodes\[2\]\.status must be one of expanded, finished, pruned, open/],
    [lateParent, /beam\.nodes\[1\]\.parent must be an earlier node, got 3/],
    [noGreedy, /beam\.greedy must be an array/],
    [
      huge,
      new RegExp(`beam\\.nodes must list at most ${REPORT_MAX_BEAM_NODES} values, got ${REPORT_MAX_BEAM_NODES + 1}`),
    ],
    ['a tree', /beam must be an object/],
  ] as const) {
    const out = outFile();
    const r = await engine.ask('report/write', { runDir: run, out, beam });
    assert.match(r.error ?? '(no error)', why);
    assert.equal(existsSync(out), false, `no file is written for ${why}`);
  }
});

test('a beam tree of another run folder is embedded and noted', async () => {
  const out = outFile();
  const r = await engine.ask('report/write', { runDir: run, out, beam: { ...tree, runDir: '/elsewhere/run' } });
  assert.equal(r.error, undefined);
  assert.match(dataOf(out).notes.join(' '), /The beam tree was searched in another run folder, \/elsewhere\/run\./);
});

test('the CLI report --beam FILE embeds a saved tree and refuses a malformed one naming the field', () => {
  const good = join(dir, 'tree.json');
  writeFileSync(good, JSON.stringify(tree));
  const out = outFile();
  const r = spawnSync(process.execPath, [cliJs, 'report', run, '--out', out, '--beam', good], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(dataOf(out).beam, tree);
  const bad = join(dir, 'bad-tree.json');
  writeFileSync(bad, JSON.stringify({ ...tree, nBest: [tree.nodes.length] }));
  const refused = outFile();
  const b = spawnSync(process.execPath, [cliJs, 'report', run, '--out', refused, '--beam', bad], { encoding: 'utf8' });
  assert.notEqual(b.status, 0);
  assert.match(b.stderr, new RegExp(`beam\\.nBest\\[0\\] must be a node id, got ${tree.nodes.length}`));
  assert.equal(existsSync(refused), false);
});

test('the CLI report --beam takes a line of decode --json --tree: the same tree beam/tree answers', () => {
  const args = ['decode', '--run', run, '--json', '--tree', '--beam', '3', '--backend', 'wasm'];
  const d = spawnSync(process.execPath, [cliJs, ...args], { input: '4 5 6\n', encoding: 'utf8' });
  assert.equal(d.status, 0, d.stderr);
  const line = join(dir, 'decode-tree.jsonl');
  writeFileSync(line, d.stdout);
  const out = outFile();
  const r = spawnSync(process.execPath, [cliJs, 'report', run, '--out', out, '--beam', line], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const beam = dataOf(out).beam!;
  // The same search, node for node: only the input's wording differs (beam/tree describes its input,
  // decode keeps the line as given), and the scores by the backends' rounding (serve's is not wasm).
  const bare = (t: BeamTreeView) => ({ ...t, input: '', nodes: t.nodes.map((n) => ({ ...n, logProb: 0, score: 0 })) });
  assert.deepEqual(bare(beam), bare(tree));
  for (const [i, n] of beam.nodes.entries()) {
    assert.ok(Math.abs(n.logProb - tree.nodes[i]!.logProb) < 1e-4, `node ${i}'s log-prob`);
    assert.ok(Math.abs(n.score - tree.nodes[i]!.score) < 1e-4, `node ${i}'s score`);
  }
  assert.equal(beam.input, '4 5 6');

  // Two sentences' lines: --beam shows one tree and says which to keep; an older line (no src_ids) is named.
  const two = join(dir, 'decode-two.jsonl');
  writeFileSync(two, d.stdout + d.stdout);
  const old = join(dir, 'decode-old.jsonl');
  const record = JSON.parse(d.stdout) as { tree: Record<string, unknown> };
  delete record.tree.src_ids;
  writeFileSync(old, JSON.stringify(record));
  for (const [file, message] of [
    [two, /holds 2 lines of decode output: --beam shows one sentence's tree/],
    [old, /beam\.tree\.src_ids must be an array, got undefined \(a line of decode --json --tree\)/],
  ] as const) {
    const refused = outFile();
    const b = spawnSync(process.execPath, [cliJs, 'report', run, '--out', refused, '--beam', file], {
      encoding: 'utf8',
    });
    assert.notEqual(b.status, 0);
    assert.match(b.stderr, message);
    assert.equal(existsSync(refused), false);
  }
});

test('the CLI report --beam refuses a FIFO and a link to /dev/zero unopened, naming the file', () => {
  const fifo = join(dir, 'beam-fifo.json');
  assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
  const zero = join(dir, 'beam-zero.json');
  symlinkSync('/dev/zero', zero);
  for (const [file, what] of [
    [fifo, /a FIFO/],
    [zero, /a character device/],
  ] as const) {
    const refused = outFile();
    // A reader that opens the FIFO waits for a writer forever: the timeout makes that a failure.
    const b = spawnSync(process.execPath, [cliJs, 'report', run, '--out', refused, '--beam', file], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.notEqual(b.status, 0, `refused: ${b.stderr}`);
    assert.notEqual(b.status, null, 'the report ended by itself');
    assert.match(b.stderr, new RegExp(`--beam ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} cannot be read`));
    assert.match(b.stderr, what);
    assert.equal(existsSync(refused), false);
  }
});
