/**
 * `heads`: which heads matter (issue 11). Head importance I_h = E|∂L/∂ξ_h| on held-out pairs
 * (Michel et al. 2019), then pruning curves: heads removed one more at a time in increasing
 * importance and in a random order, with exact match (built-in tasks) or BLEU (corpora) on the
 * test split after each removal, and how many heads can go for at most 1 point (0.5 BLEU) lost, or,
 * where the intact model scores no more than that, that pruning says nothing yet (nothingToLose).
 */
import { HEAD_METRIC, type HeadReport, nothingToLose } from '../../protocol/heads';
import { headReport } from '../ablate/headReport';
import { initBackend } from '../backend';
import { runCheckpoint } from '../checkpoint';
import { loadVocabulary } from '../data/vocabulary';
import { RunDir } from '../run/runDir';
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
  const upTo =
    options['up-to'] === undefined
      ? undefined
      : numberOption(options['up-to'], 'up-to', 0, whole(0), 'a whole number ≥ 0');
  const backend = await initBackend(options.backend as string | undefined);
  // The checkpoint is checked against the run (shapes, vocabulary, finite values) before any work.
  const run = new RunDir(options.run as string);
  const vocab = loadVocabulary(run.vocabPath);
  const checkpoint = runCheckpoint(run.path, options.checkpoint as string | undefined, vocab.size).weightsPath;
  const log = (line: string) => process.stderr.write(`${line}\n`);
  log(`backend ${backend}; ${checkpoint}; importance on ${pairs} held-out pairs, metric on ${limit} test sentences`);
  let report: HeadReport;
  try {
    report = await headReport(options.run as string, {
      checkpoint,
      pairs,
      limit,
      seed,
      decoding,
      ...(upTo !== undefined ? { upTo } : {}),
      onPoint: (order, p) =>
        log(`  ${order}: ${p.removed} removed${p.head ? ` (${p.head})` : ''}: ${p.metric.toFixed(2)}`),
    });
  } catch (err) {
    if (err instanceof RangeError && err.message.startsWith('upTo:'))
      throw new UsageError(`--up-to${err.message.slice(4)}`);
    throw err;
  }
  process.stdout.write(options.json ? `${JSON.stringify(report)}\n` : tables(report));
  return 0;
}

function tables(r: HeadReport): string {
  const name = HEAD_METRIC[r.metric];
  const none = nothingToLose(r);
  const total = Object.keys(r.importance).length;
  const out: string[] = ['head importance I_h = E|∂L/∂ξ_h| (ascending: the order heads are pruned in)'];
  for (const [id, v] of Object.entries(r.importance)) out.push(`  ${id.padEnd(18)} ${v.toExponential(3)}`);
  out.push('', `pruning curve: ${name} on ${r.sentences} test sentences with n heads removed`);
  out.push(`  ${'n'.padStart(3)}  ${'by importance'.padEnd(30)}  random (seed ${r.random.seed})`);
  r.byImportance.forEach((p, i) => {
    const q = r.random.points[i]!;
    const a = `${p.metric.toFixed(2)}${p.head ? ` (${p.head})` : ''}`;
    out.push(
      `  ${String(p.removed).padStart(3)}  ${a.padEnd(30)}  ${q.metric.toFixed(2)}${q.head ? ` (${q.head})` : ''}`,
    );
  });
  out.push(
    '',
    none
      ? `Step ${r.step}: ${none}`
      : `${r.prunable.byImportance} of ${total} heads can go for ≤ ${r.tolerance} ${name} lost ` +
          `(random order: ${r.prunable.random})`,
  );
  return `${out.join('\n')}\n`;
}
