/**
 * The real `serve` process (dist/cli.js) asked to read run folders whose files are hostile (issue 27
 * #1): a link to /dev/zero where config.json, metrics.jsonl or a checkpoint should be, a FIFO as
 * vocab.json, status.json, metrics.jsonl or a snapshot. Reading /dev/zero would take the engine's
 * memory, opening a FIFO would block it for good; each request must instead get an error naming the
 * file, and the next request, on a sound run, must still be answered (the engine neither dies nor
 * blocks). A link to a regular file is sound and must be read.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { cpSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import {
  createMessageConnection,
  type MessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
} from 'vscode-jsonrpc/node';
import { REPO } from '../helpers';
import { micro } from '../cli/malformed-plants';
import { scratch } from '../train/helpers';

const cliJs = join(REPO, 'dist', 'cli.js');
const dir = scratch('ad-hostile-serve-');
const base = join(dir, 'base'); // the copy task, 6 steps: checkpoints at 3 and 6, a snapshot at 5

let child: ChildProcess;
let conn: MessageConnection;
let exited: number | null | undefined;

/** mkfifo(1): node:fs has no mkfifo. */
function mkfifo(path: string): void {
  const r = spawnSync('mkfifo', [path]);
  assert.equal(r.status, 0, `mkfifo ${path}: ${r.stderr}`);
}

before(() => {
  writeFileSync(join(dir, 'micro.json'), micro());
  const r = spawnSync(
    process.execPath,
    [cliJs, 'train', '--backend', 'wasm', '--task', 'copy', '--config', join(dir, 'micro.json'), '--out', base],
    { encoding: 'utf8' },
  );
  assert.equal(r.status, 0, r.stderr);
  child = spawn(process.execPath, [cliJs, 'serve', '--backend', 'cpu'], { stdio: ['pipe', 'pipe', 'pipe'] });
  child.on('exit', (code) => (exited = code));
  conn = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  conn.listen();
});

after(() => {
  conn.dispose();
  child.kill();
});

/** A request's error message, or its result; a reply slower than 20 s means the engine blocked. */
async function ask(method: string, params: object): Promise<{ error?: string; result?: unknown }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${method}: no reply in 20 s: the engine blocked`)), 20_000);
  });
  try {
    const result = await Promise.race([conn.sendRequest(method, params), timeout]);
    return { result };
  } catch (err) {
    if (exited !== undefined) throw new Error(`${method}: the engine died (exit ${exited})`);
    if (/no reply in 20 s/.test((err as Error).message)) throw err;
    return { error: (err as Error).message };
  } finally {
    clearTimeout(timer);
  }
}

/** A copy of the base run with one file replaced by what `plant` makes at its path. */
function hostileRun(name: string, file: string, plant: (path: string) => void): string {
  const run = join(dir, name);
  cpSync(base, run, { recursive: true });
  rmSync(join(run, file), { force: true });
  plant(join(run, file));
  return run;
}

const toZero = (path: string) => symlinkSync('/dev/zero', path);
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
  { name: 'metrics.jsonl a FIFO', file: 'metrics.jsonl', plant: mkfifo, method: 'run/poll', kind: /FIFO/ },
  { name: 'status.json a FIFO', file: 'status.json', plant: mkfifo, method: 'run/open', kind: /FIFO/ },
  {
    name: 'the newest checkpoint a link to /dev/zero',
    file: 'checkpoints/step-6.safetensors',
    plant: toZero,
    method: 'attention/get',
    kind: /device/,
  },
  { name: 'vocab.json a FIFO', file: 'vocab.json', plant: mkfifo, method: 'attention/get', kind: /FIFO/ },
  {
    name: 'a snapshot a FIFO',
    file: 'snapshots/step-5.safetensors',
    plant: mkfifo,
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
