/** The `attention` command through bin/attention-debugger, against PyTorch's numbers for the same checkpoint. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { GOLDEN, maxAbsDiff, readJson, REPO } from '../helpers';

const bin = join(REPO, 'bin', 'attention-debugger');
const run = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', cwd: REPO });

/** What tfjs and Dawn print about themselves, which a user has no use for. */
function assertNoLibraryNoise(stderr: string): void {
  assert.doesNotMatch(stderr, /Platform node has already been set/);
  assert.doesNotMatch(stderr, /artificially reduced/);
  assert.doesNotMatch(stderr, /already registered/);
}

test("attention --json prints PyTorch's weights and log-probs for sentence 0 of a fixture", () => {
  const dir = join(GOLDEN, 'pre_ln_sinusoidal_final_norm');
  const e = readJson<{
    src: number[][];
    tgt: number[][];
    encoder_self: unknown[];
    decoder_self: unknown[];
    cross: unknown[];
    log_probs: unknown[];
  }>(join(dir, 'expected.json'));
  const r = run(
    'attention',
    '--checkpoint',
    dir,
    '--src-ids',
    e.src[0].join(','),
    '--tgt-ids',
    e.tgt[0].join(','),
    '--json',
    '--backend',
    'wasm',
  );
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /backend: wasm/);
  assertNoLibraryNoise(r.stderr);
  const out = JSON.parse(r.stdout);
  // What it shows first (the one export format), then the weights.
  assert.deepEqual(Object.keys(out), [
    'run',
    'checkpoint',
    'step',
    'input',
    'src_tokens',
    'tgt_tokens',
    'encoder_self',
    'decoder_self',
    'cross',
    'log_probs',
  ]);
  assert.equal(out.checkpoint, join(dir, 'model.safetensors'));
  assert.deepEqual(out.src_tokens, e.src[0].map(String));
  for (const key of ['encoder_self', 'decoder_self', 'cross', 'log_probs'] as const) {
    assert.ok(maxAbsDiff(out[key], e[key][0]) < 1e-4, key);
  }
});

test('bad input gives a message and a non-zero exit, never a stack trace', () => {
  const dir = join(GOLDEN, 'post_ln_sinusoidal');
  const cases: [string[], RegExp][] = [
    [
      ['attention', '--checkpoint', dir, '--src-ids', '5,6', '--tgt-ids', '1,x'],
      /--tgt-ids: expected comma-separated token ids/,
    ],
    [
      ['attention', '--checkpoint', dir, '--src-ids', '5,600', '--tgt-ids', '1'],
      /token id 600 is outside the vocabulary \[0, 23\)/,
    ],
    [
      ['attention', '--checkpoint', '/nonexistent', '--src-ids', '5', '--tgt-ids', '1'],
      /\/nonexistent: no such file or folder/,
    ],
    [['attention', '--src-ids', '5'], /--checkpoint is required/],
    [
      ['attention', '--checkpoint', dir, '--src-ids', '5', '--tgt-ids', '1', '--backend', 'tensorflow'],
      /backend "tensorflow" is not available/,
    ],
    [
      ['attention', '--checkpoint', dir, '--src-ids', '5', '--tgt-ids', '1', '--ablate', 'cross:7.0'],
      /cross:7\.0 does not exist: cross has layers 0–1 and heads 0–3/,
    ],
    [
      [
        'attention',
        '--checkpoint',
        dir,
        '--src-ids',
        '5',
        '--tgt-ids',
        '1',
        '--ablate',
        'cross:0.0',
        '--ablate-mode',
        'mean',
      ],
      /--ablate-mode mean averages head outputs over a run’s probe batch: give --run RUN/,
    ],
    [
      ['attention', '--checkpoint', dir, '--src-ids', '5', '--tgt-ids', '1', '--ablate', 'cross'],
      /"cross" is not a head id like cross:0\.1/,
    ],
    [['attention', '--bogus'], /unknown option --bogus/],
    [['nope'], /unknown command "nope"/],
  ];
  for (const [args, message] of cases) {
    const r = run(...args);
    assert.notEqual(r.status, 0, args.join(' '));
    assert.match(r.stderr, message);
    assert.doesNotMatch(r.stderr, /^\s+at /m, 'no stack trace');
  }
});

test('attention --ablate prints PyTorch’s log-probs with those heads zeroed before W^O', () => {
  const dir = join(GOLDEN, 'post_ln_sinusoidal');
  const e = readJson<{ src: number[][]; tgt: number[][]; ablations: { heads: string[]; log_probs: number[][][] }[] }>(
    join(dir, 'ablated.json'),
  );
  const a = e.ablations[1]!;
  const args = ['attention', '--checkpoint', dir, '--src-ids', e.src[0].join(','), '--tgt-ids', e.tgt[0].join(',')];
  const r = run(...args, '--ablate', a.heads.join(','), '--json', '--backend', 'wasm');
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.deepEqual(out.ablation, { heads: a.heads, mode: 'zero' });
  assert.ok(maxAbsDiff(out.log_probs, a.log_probs[0]) < 1e-4);
});

test('attention --value-weighted prints PyTorch’s value-weighted norms beside the weights', () => {
  const dir = join(GOLDEN, 'post_ln_sinusoidal');
  type Kinds = Record<'encoder_self' | 'decoder_self' | 'cross', number[][][][][]>;
  const e = readJson<{ src: number[][]; tgt: number[][]; tolerance: number } & Kinds>(join(dir, 'value_weighted.json'));
  const args = ['attention', '--checkpoint', dir, '--src-ids', e.src[0].join(','), '--tgt-ids', e.tgt[0].join(',')];
  const r = run(...args, '--value-weighted', '--json', '--backend', 'wasm');
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { value_weighted: Record<keyof Kinds, number[][][][]> };
  for (const kind of ['encoder_self', 'decoder_self', 'cross'] as const)
    assert.ok(maxAbsDiff(out.value_weighted[kind], e[kind][0]) <= e.tolerance, kind);
  const plain = JSON.parse(run(...args, '--json', '--backend', 'wasm').stdout) as object;
  assert.equal('value_weighted' in plain, false);
});

test('a tfjs-node that brings its own tfjs adds no tfjs notices to stderr', () => {
  // `backends` tries every backend: tensorflow loads the stand-in (a second tfjs-core and cpu backend),
  // then cpu registers the engine's own cpu kernels over the stand-in's.
  const r = spawnSync(process.execPath, [bin, 'backends'], {
    encoding: 'utf8',
    cwd: REPO,
    env: { ...process.env, NODE_PATH: join(REPO, 'test', 'fixtures', 'tfjs-node-standin') },
  });
  assert.equal(r.status, 0, r.stderr);
  assert.doesNotMatch(r.stdout, /^tensorflow/m, 'the stand-in throws, so tensorflow is not available');
  assert.match(r.stdout, /^cpu$/m);
  assertNoLibraryNoise(r.stderr);
});
