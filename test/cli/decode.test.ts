/**
 * decode, evaluate, average and bleu as processes, on a run that learned the copy task (600 steps of
 * a d_model-32 model, ~190 of 200 test sequences exact): decode must print the input back, and
 * evaluate's BLEU and exact matches are recomputed here from its output files.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { initBackend } from '../../src/engine/backend';
import { readSafetensors } from '../../src/engine/checkpoint/safetensors';
import { taskSpec } from '../../src/engine/data/dataset';
import { createRun, openRun } from '../../src/engine/run/setup';
import { startTrainer } from '../../src/engine/train/start';
import { copyConfig, readJson, REPO, sacreBleu } from '../helpers';
import { scratch } from '../train/helpers';

const bin = join(REPO, 'bin', 'attention-debugger');
const run = (args: string[], input?: string) =>
  spawnSync(process.execPath, [bin, ...args], {
    encoding: 'utf8',
    cwd: REPO,
    ...(input !== undefined ? { input } : {}),
  });
let runDir = '';

before(async () => {
  await initBackend('wasm');
  const dir = scratch('ad-decode-');
  runDir = join(dir, 'run');
  const o = createRun({
    out: runDir,
    data: taskSpec('copy', { valid: 20, test: 200 }),
    config: copyConfig(dir, { steps: 600, checkpoint_every: 150 }),
    overrides: {},
  });
  const t = startTrainer(o, { resume: false }).trainer;
  await t.train();
  t.dispose();
});

test('decode translates stdin line by line; --json carries tokens, score and attention of the chosen hypothesis', () => {
  const plain = run(['decode', '--run', runDir, '--beam', '2', '--backend', 'wasm'], '4 5 6\n7 8\n');
  assert.equal(plain.status, 0, plain.stderr);
  // The copy task's answer is its input; the task vocabulary prints symbols as their numbers.
  assert.equal(plain.stdout, '4 5 6\n7 8\n');
  const json = run(['decode', '--run', runDir, '--json', '--beam', '1', '--backend', 'wasm'], '4 5 6\n');
  assert.equal(json.status, 0, json.stderr);
  const r = JSON.parse(json.stdout);
  assert.deepEqual(r.src_tokens, ['4', '5', '6', '</s>']);
  assert.deepEqual(r.ids, [4, 5, 6], 'symbol k is id k');
  assert.equal(r.text, '4 5 6');
  const t = r.ids.length + 1; // BOS + tokens
  assert.equal(r.attention.cross[0][0].length, t, 'cross rows = target positions');
  assert.equal(r.attention.cross[0][0][0].length, 4, 'cross columns = source tokens');
  assert.ok(r.log_prob <= 0 && Number.isFinite(r.score));
  const bad = run(['decode', '--run', runDir, '--beam', '0'], '');
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /--beam: expected a whole number ≥ 1, got "0"/);
});

test('decode --json --tree prints the search tree, its n-best and greedy’s output; bad options are named', () => {
  const r = run(['decode', '--run', runDir, '--json', '--tree', '--beam', '3', '--backend', 'wasm'], '4 5 6\n');
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  const { nodes, n_best: nBest, greedy } = out.tree;
  assert.equal(nodes[0].parent, -1);
  assert.equal(nodes[0].text, '<s>');
  assert.ok(nBest.length >= 1 && nBest.length <= 3);
  const leaf = nodes[nBest[0]];
  assert.equal(leaf.status, 'finished');
  assert.equal(leaf.text, '</s>');
  assert.equal(leaf.logProb, out.log_prob);
  const path: number[] = [];
  for (let n = leaf.parent; n > 0; n = nodes[n].parent) path.unshift(nodes[n].token);
  assert.deepEqual(path, out.ids);
  assert.ok(nodes.every((n: { parent: number; id: number }) => n.parent < n.id));
  assert.ok(greedy.score <= out.score + 1e-9, 'beam scores at least what greedy scores here');
  assert.deepEqual(greedy.tokens, greedy.ids.map(String));

  const bad: [string[], RegExp][] = [
    [['--tree'], /--tree prints JSON: add --json/],
    [['--early-stop', 'soon'], /--early-stop must be one of exact, first-k, got "soon"/],
  ];
  for (const [args, message] of bad) {
    const b = run(['decode', '--run', runDir, ...args, '--backend', 'wasm'], '4 5\n');
    assert.equal(b.status, 2, args.join(' '));
    assert.match(b.stderr, message);
  }
});

test('average writes the element-wise mean of the last n checkpoints', () => {
  const r = run(['average', '--run', runDir, '--last', '2']);
  assert.equal(r.status, 0, r.stderr);
  const { out, steps } = JSON.parse(r.stdout);
  assert.deepEqual(steps, [450, 600]);
  const a = readSafetensors(join(runDir, 'checkpoints', 'step-450.safetensors')).tensors;
  const b = readSafetensors(join(runDir, 'checkpoints', 'step-600.safetensors')).tensors;
  const m = readSafetensors(out).tensors;
  for (const name of ['generator.bias', 'encoder.layers.0.linear1.weight']) {
    const x = a.get(name)!.data;
    const y = b.get(name)!.data;
    m.get(name)!.data.forEach((v, i) => assert.ok(Math.abs(v - (x[i] + y[i]) / 2) < 1e-7, `${name}[${i}]`));
  }
  const ev = run(['evaluate', '--run', runDir, '--checkpoint', out, '--beam', '1', '--backend', 'wasm']);
  assert.equal(ev.status, 0, ev.stderr);
  // Its numbers, recomputed here: a copy's reference is its source (the run's test split, read back
  // from the source ids), BLEU by the tests' own sacreBLEU (helpers.ts), exact = identical lines.
  const lines = (f: string) =>
    readFileSync(join(runDir, 'eval', f), 'utf8')
      .split('\n')
      .slice(0, -1);
  const hyps = lines('test.hyp');
  const refs = openRun(runDir).data.test.map((p) => p.src.slice(0, -1).join(' ')); // without EOS
  assert.equal(refs.length, 200);
  assert.deepEqual(lines('test.ref'), refs, 'the references are the sources');
  assert.equal(hyps.length, 200);
  const exact = hyps.filter((h, i) => h === refs[i]).length;
  assert.ok(exact >= 150, `the averaged model copies ${exact}/200 exactly`);
  assert.equal(ev.stdout, `${sacreBleu(hyps, [refs]).formatted}\n`);
  assert.match(ev.stderr, new RegExp(`exact matches: ${exact}/200;`));
});

test('bleu prints what sacreBLEU printed for the committed cases', () => {
  const dir = join(REPO, 'test', 'metrics', 'bleu-cases');
  const ref = readJson<{ cases: { case: string; refs: string[]; options: object; formatted: string }[] }>(
    join(dir, 'reference.json'),
  );
  const cases = ref.cases.filter((c) => Object.keys(c.options).length === 0).slice(0, 4);
  assert.ok(cases.length === 4);
  for (const c of cases) {
    const r = run(['bleu', '--hyp', join(dir, `${c.case}.hyp`), '--ref', c.refs.map((f) => join(dir, f)).join(',')]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), c.formatted, c.case);
  }
});

test('the tests’ own BLEU (helpers.ts) gives what sacreBLEU printed, on the committed cases it can read', () => {
  const dir = join(REPO, 'test', 'metrics', 'bleu-cases');
  const ref = readJson<{ cases: { case: string; refs: string[]; options: object; formatted: string }[] }>(
    join(dir, 'reference.json'),
  );
  const lines = (f: string) => readFileSync(join(dir, f), 'utf8').split('\n').slice(0, -1);
  const readable = ref.cases.filter(
    (c) =>
      Object.keys(c.options).length === 0 &&
      [`${c.case}.hyp`, ...c.refs].every((f) => /^[A-Za-z0-9 ,.!?;:\n]*$/.test(readFileSync(join(dir, f), 'utf8'))),
  );
  assert.deepEqual(
    readable.map((c) => c.case),
    [
      'all-empty',
      'empty-lines',
      'half-even-ratio',
      'half-even',
      'multi-ref',
      'no-match',
      'no-trigrams',
      'perfect',
    ].concat(['short-hyps', 'zero-4gram']),
  );
  for (const c of readable)
    assert.equal(sacreBleu(lines(`${c.case}.hyp`), c.refs.map(lines)).formatted, c.formatted, c.case);
});

test('heads --json: importance ascending, pruning curves from the intact model, and how many heads can go', () => {
  const r = run(['heads', '--run', runDir, '--json', '--pairs', '20', '--limit', '10', '--backend', 'wasm']);
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.metric, 'exact_match_percent', 'a task run is scored by exact match');
  const values = Object.values(out.importance) as number[];
  assert.equal(values.length, 6, 'micro: 1 encoder + 1 decoder layer × 2 heads × 3 kinds');
  assert.ok(
    values.every((v, i) => i === 0 || v >= values[i - 1]!),
    'ascending',
  );
  assert.deepEqual(
    out.byImportance.map((p: { head: string | null }) => p.head),
    [null, ...Object.keys(out.importance)],
    'pruned in increasing importance',
  );
  assert.equal(out.random.points.length, 7);
  assert.equal(out.random.points[0].metric, out.byImportance[0].metric, 'both start from the intact model');
  const ev = run(['evaluate', '--run', runDir, '--beam', '1', '--limit', '10', '--backend', 'wasm']);
  const exact = Number(/exact matches: (\d+)\/10/.exec(ev.stderr)![1]);
  assert.equal(out.byImportance[0].metric, exact * 10, 'the intact point is evaluate’s exact match, in %');
  assert.equal(out.byImportance[6].metric, 0, 'with every head gone nothing is exact');
  // As text, the last line says how many heads can go, or, at no more than 1 point of exact match
  // with every head, that pruning says nothing yet (worked from the JSON's intact point).
  const text = run(['heads', '--run', runDir, '--pairs', '20', '--limit', '10', '--backend', 'wasm']);
  const last = text.stdout.trim().split('\n').at(-1)!;
  if (out.byImportance[0].metric <= 1)
    assert.match(last, /^Step \d+: with every head the model scores \d+\.00 exact match % on 10 test sentences/);
  else assert.match(last, new RegExp(`^${out.prunable.byImportance} of 6 heads can go for ≤ 1 exact match % lost`));
  const bad = run(['heads', '--run', runDir, '--up-to', '99', '--backend', 'wasm']);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--up-to: the model has 6 heads, got 99/);
});

test('decode and evaluate --ablate: the ablation is applied, said and recorded', () => {
  const all = 'encoder_self:0.0,encoder_self:0.1,decoder_self:0.0,decoder_self:0.1,cross:0.0,cross:0.1';
  const ev = run(['evaluate', '--run', runDir, '--beam', '1', '--limit', '10', '--ablate', all, '--backend', 'wasm']);
  assert.equal(ev.status, 0, ev.stderr);
  assert.match(ev.stderr, /ablation: encoder_self:0\.0, .* zero-ablated/);
  assert.match(ev.stderr, /exact matches: 0\/10/, 'with every head gone nothing is exact');
  const plain = JSON.parse(run(['decode', '--run', runDir, '--json', '--backend', 'wasm'], '4 5 6\n').stdout);
  const args = ['decode', '--run', runDir, '--json', '--ablate', 'cross:0.1', '--ablate-mode', 'mean'];
  const r = run([...args, '--backend', 'wasm'], '4 5 6\n');
  assert.equal(r.status, 0, r.stderr);
  const ablated = JSON.parse(r.stdout);
  assert.deepEqual(ablated.ablation, { heads: ['cross:0.1'], mode: 'mean' });
  assert.notEqual(ablated.log_prob, plain.log_prob, 'the head’s mean output changes the score');
});
