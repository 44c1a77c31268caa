/**
 * The real `serve` process (dist/cli.js) asked to read run folders whose files are hostile (issue 27
 * #1): a link to /dev/zero where config.json, metrics.jsonl or a checkpoint should be, a FIFO as
 * vocab.json, status.json, metrics.jsonl or a snapshot. Reading /dev/zero would take the engine's
 * memory, opening a FIFO would block it for good; each request must instead get an error naming the
 * file, and the next request, on a sound run, must still be answered (the engine neither dies nor
 * blocks). A link to a regular file is sound and must be read.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { REPO } from '../helpers';
import { fifo, linkTo } from '../cli/hostile-files';
import { micro } from '../cli/malformed-plants';
import { scratch } from '../train/helpers';
import { RawEngine } from './rawEngine';

const cliJs = join(REPO, 'dist', 'cli.js');
const dir = scratch('ad-hostile-serve-');
const base = join(dir, 'base'); // the copy task, 6 steps: checkpoints at 3 and 6, a snapshot at 5

let engine: RawEngine;

before(() => {
  writeFileSync(join(dir, 'micro.json'), micro());
  const r = spawnSync(
    process.execPath,
    [cliJs, 'train', '--backend', 'wasm', '--task', 'copy', '--config', join(dir, 'micro.json'), '--out', base],
    { encoding: 'utf8' },
  );
  assert.equal(r.status, 0, r.stderr);
  engine = new RawEngine();
});

after(() => engine.proc.kill());

/** A request's error message, or its result; no reply in 20 s means the engine blocked (the test fails). */
const ask = (method: string, params: object) => engine.ask(method, params, 20_000);

/** A copy of the base run with one file replaced by what `plant` makes at its path. */
function hostileRun(name: string, file: string, plant: (path: string) => void): string {
  const run = join(dir, name);
  cpSync(base, run, { recursive: true });
  plant(join(run, file));
  return run;
}

const toZero = linkTo('/dev/zero');
const attention = (runDir: string) => ({ runDir, input: { kind: 'text', src: '4 5 6', tgt: '4 5 6' } });

/** The sound run is still served: run/open and attention/get answer. */
async function stillServes(after: string): Promise<void> {
  const opened = await ask('run/open', { runDir: base });
  assert.equal(opened.error, undefined, `run/open of the sound run after ${after}`);
  assert.deepEqual((opened.result as { follow: { step: number } }).follow.step, 6);
  const a = await ask('attention/get', attention(base));
  assert.equal(a.error, undefined, `attention/get of the sound run after ${after}`);
}

const CASES: { name: string; file: string; plant: (path: string) => void; method: string; kind: RegExp }[] = [
  { name: 'config.json a link to /dev/zero', file: 'config.json', plant: toZero, method: 'run/open', kind: /device/ },
  {
    name: 'metrics.jsonl a link to /dev/zero',
    file: 'metrics.jsonl',
    plant: toZero,
    method: 'run/open',
    kind: /device/,
  },
  { name: 'metrics.jsonl a FIFO', file: 'metrics.jsonl', plant: fifo, method: 'run/poll', kind: /FIFO/ },
  { name: 'status.json a FIFO', file: 'status.json', plant: fifo, method: 'run/open', kind: /FIFO/ },
  {
    name: 'the newest checkpoint a link to /dev/zero',
    file: 'checkpoints/step-6.safetensors',
    plant: toZero,
    method: 'attention/get',
    kind: /device/,
  },
  { name: 'vocab.json a FIFO', file: 'vocab.json', plant: fifo, method: 'attention/get', kind: /FIFO/ },
  {
    name: 'a snapshot a FIFO',
    file: 'snapshots/step-5.safetensors',
    plant: fifo,
    method: 'snapshots/get',
    kind: /FIFO/,
  },
];

const FIRST = {
  files: { metrics: { offset: 0, ino: 0 }, telemetry: { offset: 0, ino: 0 }, events: { offset: 0, ino: 0 } },
  lastSnapshot: -1,
};

CASES.forEach((c, i) => {
  test(`serve: ${c.method} of a run whose ${c.name} is refused by name; the engine goes on`, async () => {
    const run = hostileRun(`case-${i}`, c.file, c.plant);
    const params =
      c.method === 'attention/get'
        ? attention(run)
        : c.method === 'run/poll'
          ? { runDir: run, ...FIRST }
          : { runDir: run };
    const r = await ask(c.method, params);
    assert.ok(r.error, `${c.method} must fail, got ${JSON.stringify(r.result)?.slice(0, 200)}`);
    assert.ok(r.error.includes(join(run, c.file)), `the error names ${c.file}: ${r.error}`);
    assert.match(r.error, c.kind);
    assert.match(r.error, /not a regular file/);
    await stillServes(c.name);
  });
});

test('serve: a run whose config.json and vocab.json are links to regular files is read as any other', async () => {
  const run = join(dir, 'linked');
  cpSync(base, run, { recursive: true });
  for (const file of ['config.json', 'vocab.json']) {
    renameSync(join(run, file), join(dir, `linked-${file}`));
    symlinkSync(join(dir, `linked-${file}`), join(run, file));
  }
  const opened = await ask('run/open', { runDir: run });
  assert.equal(opened.error, undefined, opened.error);
  const a = await ask('attention/get', attention(run));
  assert.equal(a.error, undefined, a.error);
});
