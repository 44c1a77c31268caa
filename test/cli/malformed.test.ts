/**
 * The command line under bad input (issue 12): every row of malformed-inputs.ts through the built
 * CLI (`node dist/cli.js`), its folder hashed before and after (byte-identical: nothing saved is lost
 * or half-written); then what must go on rather than fail: a retry after a failed train, the
 * direction of a corpus folder, a resume whose optimizer files are gone, stale temp files of dead
 * writers, and decode --truncate.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { before, test } from 'node:test';
import { REPO } from '../helpers';
import { scratch } from '../train/helpers';
import { BOUNDED_SIZES } from './bounded-sizes';
import { HOSTILE_FILES } from './hostile-files';
import { MALFORMED } from './malformed-inputs';
import { micro, type MalformedCase } from './malformed-plants';
import { ONE_WRITER } from './one-writer';
import { SILENT_INPUTS } from './silent-inputs';

const cliJs = join(REPO, 'dist', 'cli.js');
const cli = (args: string[], input?: string) =>
  spawnSync(process.execPath, [cliJs, ...args], { encoding: 'utf8', cwd: REPO, input: input ?? '' });

/**
 * Every file and folder under `root` with a hash of its bytes, in a stable order ('absent' when none).
 * Links are hashed as their target's name and special files (FIFOs, devices) as their kind, never
 * followed or opened, so a row may plant a FIFO or a link to /dev/zero.
 */
function hashTree(root: string): string {
  if (!existsSync(root)) return 'absent';
  const h = createHash('sha256');
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      const at = relative(root, path);
      const s = lstatSync(path);
      if (s.isDirectory()) {
        h.update(`dir ${at}\n`);
        walk(path);
      } else if (s.isSymbolicLink()) h.update(`link ${at} → ${readlinkSync(path)}\n`);
      else if (!s.isFile()) h.update(`special ${at} ${s.mode} ${s.rdev}\n`);
      else h.update(`file ${at} ${createHash('sha256').update(readFileSync(path)).digest('hex')}\n`);
    }
  };
  walk(root);
  return h.digest('hex');
}

const metricsSteps = (run: string): number[] =>
  readFileSync(join(run, 'metrics.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l).step);

let dir = '';
let base = ''; // the copy task trained 6 steps, checkpoints at 3 and 6

before(() => {
  dir = scratch('ad-malformed-');
  base = join(dir, 'base');
  writeFileSync(join(dir, 'micro.json'), micro());
  const r = cli(['train', '--backend', 'wasm', '--task', 'copy', '--config', join(dir, 'micro.json'), '--out', base]);
  assert.equal(r.status, 0, r.stderr);
});

function plant(c: MalformedCase, folder: string): void {
  if (c.run) cpSync(base, join(folder, 'run'), { recursive: true });
  for (const [path, what] of Object.entries(c.files ?? {})) {
    const target = join(folder, path);
    if (typeof what === 'string') {
      mkdirSync(join(target, '..'), { recursive: true });
      writeFileSync(target, what.replaceAll('{case}', folder));
    } else what(target);
  }
}

const ROWS = [...MALFORMED, ...HOSTILE_FILES, ...ONE_WRITER, ...BOUNDED_SIZES, ...SILENT_INPUTS];

ROWS.forEach((c, i) => {
  const item = c.item === 'fork' ? 'issue 13, fork' : `issue ${c.issue ?? 12} #${c.item}`;
  test(`malformed input (${item}): ${c.name}`, () => {
    const folder = join(dir, `case-${i}`);
    mkdirSync(folder);
    plant(c, folder);
    const before = hashTree(folder);
    const r = cli(
      c.args.map((a) => a.replaceAll('{case}', folder)),
      c.stdin,
    );
    const error = c.error.replaceAll('{case}', folder);
    assert.ok(r.stderr.includes(error), `stderr names the fault: expected "${error}" in:\n${r.stderr}`);
    assert.equal(r.status, c.code, `exit code (stderr: ${r.stderr})`);
    assert.equal(hashTree(folder), before, 'the folder is byte-identical after the failed command');
    assert.deepEqual(
      readdirSync(folder).filter((f) => f.includes('.tmp-')),
      [],
      'no staging folder is left',
    );
  });
});

test('a retry after a failed train builds its own vocabulary (issue 12 #1)', () => {
  const folder = join(dir, 'retry');
  const data = join(folder, 'data');
  mkdirSync(data, { recursive: true });
  writeFileSync(join(data, 'train.en'), 'the cat sees the dog\nthe dog runs\n'.repeat(20));
  writeFileSync(join(data, 'train.de'), 'die katze sieht den hund\nder hund rennt\n'.repeat(20));
  writeFileSync(join(folder, 'heads3.json'), micro({ heads: 3 }));
  writeFileSync(join(folder, 'micro.json'), micro({}, { steps: 1, batch_tokens: 400 }));
  const out = join(folder, 'run');
  const failed = cli([
    'train',
    '--backend',
    'wasm',
    '--task',
    'copy',
    '--config',
    join(folder, 'heads3.json'),
    '--out',
    out,
  ]);
  assert.equal(failed.status, 1, failed.stderr);
  assert.ok(!existsSync(out), 'the failed run left no folder');
  const r = cli(['train', '--backend', 'wasm', '--data', data, '--config', join(folder, 'micro.json'), '--out', out]);
  assert.equal(r.status, 0, r.stderr);
  const size = Number(/BPE vocabulary of (\d+)/.exec(r.stderr)?.[1]);
  assert.ok(size > 11, `a BPE vocabulary learned on the corpus, not the task's 11 tokens (${r.stderr})`);
  assert.equal(JSON.parse(readFileSync(join(out, 'vocab.json'), 'utf8')).format, 'attention-debugger-bpe');
});

test('--data translates English first by default, says so at start and records it (issue 12 #2)', () => {
  const folder = join(dir, 'direction');
  const data = join(folder, 'data');
  mkdirSync(data, { recursive: true });
  writeFileSync(join(data, 'train.en'), 'the cat\nthe dog\n'.repeat(20));
  writeFileSync(join(data, 'train.de'), 'die katze\nder hund\n'.repeat(20));
  writeFileSync(join(folder, 'micro.json'), micro({}, { steps: 1 }));
  const train = (out: string, ...args: string[]) =>
    cli(['train', '--backend', 'wasm', '--data', data, '--config', join(folder, 'micro.json'), '--out', out, ...args]);
  const recorded = (out: string) => JSON.parse(readFileSync(join(out, 'config.json'), 'utf8')).data;

  const byDefault = train(join(folder, 'default'));
  assert.equal(byDefault.status, 0, byDefault.stderr);
  assert.match(byDefault.stderr, /en→de \(train\.en → train\.de\)/);
  assert.deepEqual(recorded(join(folder, 'default')), { kind: 'files', dir: data, srcLang: 'en', tgtLang: 'de' });

  const named = train(join(folder, 'named'), '--src-lang', 'de');
  assert.equal(named.status, 0, named.stderr);
  assert.match(named.stderr, /de→en \(train\.de → train\.en\)/);
  assert.deepEqual(recorded(join(folder, 'named')), { kind: 'files', dir: data, srcLang: 'de', tgtLang: 'en' });
});

test('a resume without optimizer files goes on from the newest weights, keeping the history (issue 12 #3)', () => {
  const run = join(dir, 'no-optim');
  cpSync(base, run, { recursive: true });
  for (const f of readdirSync(join(run, 'checkpoints')))
    if (f.endsWith('.optim.safetensors')) rmSync(join(run, 'checkpoints', f));
  const history = readFileSync(join(run, 'metrics.jsonl'), 'utf8');
  const r = cli(['train', '--backend', 'wasm', '--out', run, '--resume', '--steps', '8']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(
    r.stderr,
    /warning: .*step-6\.optim\.safetensors is missing: resuming from the weights of step 6 with fresh optimizer/,
  );
  assert.match(r.stderr, /resuming .* at step 6/);
  assert.ok(readFileSync(join(run, 'metrics.jsonl'), 'utf8').startsWith(history), 'steps 1–6 kept as they were');
  assert.deepEqual(metricsSteps(run), [1, 2, 3, 4, 5, 6, 7, 8]);
  assert.equal(
    JSON.parse(readFileSync(join(run, 'config.json'), 'utf8')).training.steps,
    8,
    'the new total is recorded',
  );
});

test('a resume removes temp files of dead writers from the run, and keeps a live writer’s (issue 12 #12)', () => {
  const run = join(dir, 'temps');
  cpSync(base, run, { recursive: true });
  const dead = spawnSync(process.execPath, ['-e', '0']).pid; // exited: its pid names no process now
  const stale = [
    `config.json.tmp-${dead}-1`,
    `metrics.jsonl.tmp-${dead}-2`,
    `checkpoints/step-9.safetensors.tmp-${dead}-3`,
  ];
  const live = `status.json.tmp-${process.pid}-4`; // this test's process is alive
  for (const f of [...stale, live]) writeFileSync(join(run, f), 'half a file');
  const r = cli(['train', '--backend', 'wasm', '--out', run, '--resume', '--steps', '7']);
  assert.equal(r.status, 0, r.stderr);
  for (const f of stale) assert.ok(!existsSync(join(run, f)), `${f} removed`);
  assert.ok(existsSync(join(run, live)), `${live} kept: its writer is alive`);
});

test('decode --truncate cuts a long line to the model’s positions and says so (issue 12 #4)', () => {
  const long = Array.from({ length: 40 }, (_, i) => 4 + (i % 7)).join(' ');
  const r = cli(['decode', '--backend', 'wasm', '--run', base, '--beam', '1', '--truncate'], `4 5\n${long}\n`);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /decode: stdin line 2: cut from 41 to 32 tokens \(--truncate\)/);
  assert.doesNotMatch(r.stderr, /stdin line 1/);
  assert.equal(r.stdout.split('\n').length, 3, 'one translation a line');
});
