/**
 * Ablate Heads… on a run's test split (issue 13): the scores ablation/score reports equal the exact
 * matches counted here from the hypothesis files `evaluate` writes (the CLI, intact and with
 * --ablate). With every cross-attention head removed the decoder cannot see the source, so every
 * greedy hypothesis is one sequence cut at each sentence's length limit: a prefix of the longest.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { scoreAblation } from '../../src/engine/ablate/score';
import { initBackend } from '../../src/engine/backend';
import { taskSpec } from '../../src/engine/data/dataset';
import { createRun } from '../../src/engine/run/setup';
import { startTrainer } from '../../src/engine/train/start';
import { REPO } from '../helpers';
import { microConfig, scratch } from '../train/helpers';

before(async () => {
  await initBackend('wasm');
});

const LIMIT = 40;
const CROSS = ['cross:0.0', 'cross:0.1'];

/** `evaluate`'s hypotheses and references (one a line), and the percent of lines that match. */
function evaluate(run: string, ...extra: string[]): { hyps: string[]; percent: number } {
  const args = ['evaluate', '--run', run, '--split', 'test', '--limit', String(LIMIT), '--beam', '1', ...extra];
  const r = spawnSync(process.execPath, [join(REPO, 'bin', 'attention-debugger'), ...args, '--backend', 'wasm'], {
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  const lines = (f: string) =>
    readFileSync(join(run, 'eval', f), 'utf8')
      .split('\n')
      .slice(0, -1);
  const [hyps, refs] = [lines('test.hyp'), lines('test.ref')];
  assert.equal(hyps.length, LIMIT);
  return { hyps, percent: (100 * hyps.filter((h, i) => h === refs[i]).length) / LIMIT };
}

test('ablation/score reports the exact matches evaluate’s files hold, intact and without the cross heads', async () => {
  const dir = scratch('ad-ablate-');
  const out = join(dir, 'run');
  const opened = createRun({
    out,
    data: taskSpec('copy', { train: 250, valid: 10, test: LIMIT, maxLength: 4, vocabSize: 8 }),
    config: microConfig(dir, { steps: 400, warmup: 50, checkpoint_every: 400, snapshot_every: 0, label_smoothing: 0 }),
    overrides: {},
  });
  const { trainer } = startTrainer(opened, { resume: false });
  await trainer.train();
  trainer.dispose();

  const checkpoint = join(out, 'checkpoints', 'step-400.safetensors');
  const score = await scoreAblation(out, checkpoint, { heads: CROSS, mode: 'zero' }, LIMIT);
  assert.equal(score.metric, 'exact_match_percent');
  assert.equal(score.sentences, LIMIT);
  assert.equal(score.step, 400);
  const intact = evaluate(out);
  const ablated = evaluate(out, '--ablate', CROSS.join(','));
  assert.equal(score.intact, intact.percent);
  assert.equal(score.ablated, ablated.percent);
  const longest = ablated.hyps.reduce((a, b) => (b.length > a.length ? b : a));
  assert.ok(
    ablated.hyps.every((h) => longest.startsWith(h)),
    `without cross-attention the source is not seen: ${ablated.hyps.slice(0, 3).join(' | ')}`,
  );
  assert.ok(score.intact >= 25, `the intact model copies some sources (${score.intact}%): the scores can differ`);
});
