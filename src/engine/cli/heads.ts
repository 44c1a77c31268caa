/**
 * `heads`: which heads matter (issue 11). Head importance I_h = E|∂L/∂ξ_h| on held-out pairs
 * (Michel et al. 2019), then pruning curves: heads removed one more at a time in increasing
 * importance and in a random order, with exact match (built-in tasks) or BLEU (corpora) on the
 * test split after each removal, and how many heads can go for at most 1 point (0.5 BLEU) lost.
 */
import { allHeads, byImportance, prunable, pruningCurve, randomOrder, type PruningPoint } from '../ablate/pruning';
import { initBackend } from '../backend';
import { checkpointStep, loadCheckpoint, resolveCheckpoint } from '../checkpoint';
import { toBatch } from '../data/batchStream';
import { scoreHeldOut } from '../metrics/heldOut';
import { openRun } from '../run/setup';
import { headImportance } from '../telemetry/importance';
import { DECODING_SPECS, decodingOptions, numberOption, type OptionSpec, parseCommand, UsageError } from './args';

const specs: Record<string, OptionSpec> = {
  run: { type: 'string', help: 'run folder' },
  ...DECODING_SPECS,
  pairs: { type: 'string', help: 'validation pairs the importance is averaged over (default 256)' },
  limit: { type: 'string', help: 'test sentences the metric is taken on (default 200)' },
  'up-to': { type: 'string', help: 'heads to remove at most (default all)' },
  seed: { type: 'string', help: 'seed of the random removal order (default 1)' },
  json: { type: 'boolean', help: 'print one JSON object instead of tables' },
};

const whole = (min: number) => (n: number) => Number.isInteger(n) && n >= min;

export async function headsCommand(argv: string[]): Promise<number> {
  const options = parseCommand(
    argv,
    'heads',
    'Ranks heads by importance (Michel et al.) and prunes them in that order and at random, scoring the test split.',
    specs,
  );
  if (!options) return 0;
  if (!options.run) throw new UsageError('heads: --run RUN is required');
  const decoding = decodingOptions({ ...options, beam: options.beam ?? '1' });
  const pairs = numberOption(options.pairs, 'pairs', 256, whole(1), 'a whole number ≥ 1');
  const limit = numberOption(options.limit, 'limit', 200, whole(1), 'a whole number ≥ 1');
  const seed = numberOption(options.seed, 'seed', 1, whole(0), 'a whole number ≥ 0');
  const { run, data, dataSpec } = openRun(options.run as string);
  const held = (data.valid.length ? data.valid : data.train).slice(0, pairs);
  const test = data.test.slice(0, limit);
  if (!test.length) throw new UsageError(`heads: ${run.path} has no test split to score`);
  const task = dataSpec.kind === 'task';
  const refs = task ? test.map((p) => data.vocab.decode(p.tgt)) : data.testText.slice(0, limit).map((p) => p.tgt);
  const backend = await initBackend(options.backend as string | undefined);
  const weights = resolveCheckpoint((options.checkpoint as string) ?? run.path).weightsPath;
  const model = loadCheckpoint(weights);
  try {
    const total = allHeads(model).length;
    const upTo = numberOption(options['up-to'], 'up-to', total, whole(0), 'a whole number ≥ 0');
    if (upTo > total) throw new UsageError(`--up-to: the model has ${total} heads, got ${upTo}`);
    const metricName = task ? 'exact match %' : 'BLEU';
    const tolerance = task ? 1 : 0.5;
    const log = (line: string) => process.stderr.write(`${line}\n`);
    log(
      `backend ${backend}; ${weights}; importance on ${held.length} held-out pairs; ` +
        `${metricName} on ${test.length} test sentences (beam ${decoding.beamSize})`,
    );
    const batches = Array.from({ length: Math.ceil(held.length / 32) }, (_, i) =>
      toBatch(held.slice(i * 32, (i + 1) * 32)),
    );
    const importance = await headImportance(model, batches);
    const order = byImportance(importance, model);
    const metric = async (heads: Parameters<typeof scoreHeldOut>[4]['heads']) => {
      const s = await scoreHeldOut(model, test, refs, data.vocab, { ...decoding, ...(heads ? { heads } : {}) });
      return task ? (100 * s.exact) / test.length : s.bleu.score;
    };
    const progress = (which: string) => (p: PruningPoint) =>
      log(`  ${which}: ${p.removed} removed${p.head ? ` (${p.head})` : ''}: ${metricName} ${p.metric.toFixed(2)}`);
    const ranked = await pruningCurve(model, order, metric, upTo, progress('by importance'));
    const random = await pruningCurve(model, randomOrder(model, seed), metric, upTo, progress(`random (seed ${seed})`));
    const result = {
      run: run.path,
      checkpoint: weights,
      step: checkpointStep(weights),
      metric: task ? 'exact_match_percent' : 'bleu',
      tolerance,
      importance: Object.fromEntries(order.map((id) => [id, importanceOf(importance, id, model.config.heads)])),
      by_importance: ranked,
      random: { seed, points: random },
      prunable: { by_importance: prunable(ranked, tolerance), random: prunable(random, tolerance) },
    };
    if (options.json) {
      process.stdout.write(`${JSON.stringify(result)}\n`);
      return 0;
    }
    printTables(result, metricName, total);
    return 0;
  } finally {
    model.dispose();
  }
}

function importanceOf(importance: Record<string, Float32Array>, id: string, H: number): number {
  const [kind, rest] = id.split(':') as [string, string];
  const [l, h] = rest.split('.').map(Number) as [number, number];
  return importance[kind]![l * H + h]!;
}

function printTables(
  r: {
    importance: Record<string, number>;
    by_importance: PruningPoint[];
    random: { seed: number; points: PruningPoint[] };
    prunable: { by_importance: number; random: number };
    tolerance: number;
  },
  metricName: string,
  total: number,
): void {
  const out: string[] = ['head importance I_h = E|∂L/∂ξ_h| (ascending: the order heads are pruned in)'];
  for (const [id, v] of Object.entries(r.importance)) out.push(`  ${id.padEnd(18)} ${v.toExponential(3)}`);
  out.push('', `pruning curve: ${metricName} with n heads removed`);
  out.push(`  ${'n'.padStart(3)}  ${'by importance'.padEnd(30)}  random (seed ${r.random.seed})`);
  r.by_importance.forEach((p, i) => {
    const q = r.random.points[i]!;
    const a = `${p.metric.toFixed(2)}${p.head ? ` (${p.head})` : ''}`;
    out.push(
      `  ${String(p.removed).padStart(3)}  ${a.padEnd(30)}  ${q.metric.toFixed(2)}${q.head ? ` (${q.head})` : ''}`,
    );
  });
  out.push(
    '',
    `${r.prunable.by_importance} of ${total} heads can go for ≤ ${r.tolerance} ${metricName} lost ` +
      `(random order: ${r.prunable.random})`,
  );
  process.stdout.write(`${out.join('\n')}\n`);
}
