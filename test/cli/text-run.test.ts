/**
 * Training on text through a run, as a user does it with the CLI: `train --data` on a small parallel
 * corpus (helpers.ts writeTextCorpus: the target is the source with its final . and ! swapped, and
 * punctuation sits against the words, so only detokenized text equals a target). The run learns its
 * BPE into its own folder, decode prints plain text, and the validation BLEU it logs while training
 * equals BLEU computed here (helpers.ts sacreBleu, checked against sacreBLEU's own numbers in
 * decode.test.ts) on that checkpoint's greedy output.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { REPO, sacreBleu, textConfig, writeTextCorpus } from '../helpers';
import { scratch } from '../train/helpers';

const bin = join(REPO, 'bin', 'attention-debugger');
const cli = (args: string[], input?: string) =>
  spawnSync(process.execPath, [bin, ...args, '--backend', 'wasm'], {
    encoding: 'utf8',
    cwd: REPO,
    ...(input !== undefined ? { input } : {}),
  });
const STEPS = 1000;
const EVERY = 250; // validation with BLEU, and a checkpoint, at 250, 500, 750 and 1000
let data = '';
let run = '';
let corpus: ReturnType<typeof writeTextCorpus>;

before(async () => {
  const dir = scratch('ad-text-');
  data = join(dir, 'data');
  run = join(dir, 'run');
  mkdirSync(data);
  corpus = writeTextCorpus(data);
  const config = textConfig(dir, {
    steps: STEPS,
    warmup: 100,
    eval_every: EVERY,
    checkpoint_every: EVERY,
    bleu_sentences: 20,
    vocab_size: 60,
  });
  assert.ok(!existsSync(join(data, 'vocab.json')), 'no vocabulary is given to the run');
  // Asynchronous, so that node:test's own timers keep running during the ~30 s of training.
  const child = spawn(process.execPath, [bin, 'train', '--data', data, '--config', config, '--out', run], {
    cwd: REPO,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  assert.equal(code, 0, stderr.slice(-2000));
});

test('a run trained on text learns its BPE in its folder, and decode prints detokenized text', (t) => {
  const bpe = JSON.parse(readFileSync(join(run, 'vocab.json'), 'utf8')) as { format: string; vocab: string[] };
  assert.equal(bpe.format, 'attention-debugger-bpe');
  // Learned from this corpus: each of its 8 words, frequent, has become one symbol ending a word,
  // and the punctuation is a symbol glued to the word before it (the joiner ￭).
  for (const w of ['red', 'blue', 'cat', 'dog', 'sees', 'runs', 'big', 'small'])
    assert.ok(bpe.vocab.includes(`${w}</w>`), `${w}</w> in the run's BPE`);
  for (const p of [',', '.', '!']) assert.ok(bpe.vocab.includes(`\uffed${p}</w>`), `￭${p}</w> in the run's BPE`);
  assert.ok(bpe.vocab.length <= 60, `vocabulary of ${bpe.vocab.length} (vocab_size 60)`);
  assert.deepEqual(readdirSync(data).sort(), ['test.en', 'test.xx', 'train.en', 'train.xx', 'valid.en', 'valid.xx']);

  const r = cli(['decode', '--run', run], corpus.test.map((p) => `${p.src}\n`).join(''));
  assert.equal(r.status, 0, r.stderr);
  const out = r.stdout.split('\n').slice(0, -1);
  assert.equal(out.length, 20);
  for (const line of out) {
    assert.doesNotMatch(line, /<\/w>|\uffed|<unk>|<\/?s>/, `no BPE or special marks in “${line}”`);
    assert.doesNotMatch(line, / [,.!]|^ | $/, `punctuation against its word in “${line}”`);
  }
  const exact = out.filter((l, i) => l === corpus.test[i]!.tgt).length;
  t.diagnostic(`${exact}/20 test sentences translated exactly`);
  assert.ok(exact >= 15, `${exact}/20 test sentences translated exactly:\n${out.join('\n')}`);
});

test('validation BLEU is logged at each evaluation and equals BLEU of that checkpoint’s greedy output', (t) => {
  const rows = readFileSync(join(run, 'metrics.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { step: number; val_bleu?: number });
  assert.equal(rows.length, STEPS);
  const logged = rows.filter((r) => r.val_bleu !== undefined);
  assert.deepEqual(
    logged.map((r) => r.step),
    [250, 500, 750, 1000],
  );
  for (const { step, val_bleu: bleu } of logged) {
    // The checkpoint of that step decoded greedily on the 20 validation sentences (bleu_sentences).
    const checkpoint = join(run, 'checkpoints', `step-${step}.safetensors`);
    const ev = cli([
      'evaluate',
      '--run',
      run,
      '--split',
      'valid',
      '--limit',
      '20',
      '--beam',
      '1',
      '--checkpoint',
      checkpoint,
    ]);
    assert.equal(ev.status, 0, ev.stderr);
    const lines = (f: string) =>
      readFileSync(join(run, 'eval', f), 'utf8')
        .split('\n')
        .slice(0, -1);
    const refs = corpus.valid.map((p) => p.tgt);
    assert.deepEqual(lines('valid.ref'), refs, 'the references are the corpus’s valid.xx');
    const mine = sacreBleu(lines('valid.hyp'), [refs]);
    t.diagnostic(`step ${step}: ${mine.formatted}`);
    assert.ok(
      Math.abs(bleu! - mine.score) <= 1e-9 * Math.max(1, mine.score),
      `step ${step}: logged ${bleu}, here ${mine.score}`,
    );
    assert.equal(ev.stdout, `${mine.formatted}\n`, 'evaluate prints the same');
    if (step === 250) assert.ok(bleu! > 5 && bleu! < 95, `step 250: BLEU ${bleu} is neither nothing nor everything`);
  }
  assert.ok(logged[3]!.val_bleu! > logged[0]!.val_bleu!, 'BLEU rises as the run learns');
});
