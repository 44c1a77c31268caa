/** `evaluate`: decode a run's held-out split and score it: BLEU as sacreBLEU prints it, and exact matches. */
import { mkdirSync } from 'node:fs';
import { writeFileAtomic } from '../io/atomicFile';
import { join } from 'node:path';
import { initBackend } from '../backend';
import { loadRunCheckpoint } from '../checkpoint';
import { formatBleu } from '../metrics/bleu';
import { scoreHeldOut } from '../metrics/heldOut';
import { describeAblation } from '../../protocol/ablation';
import { ABLATION_SPECS, ablationGatesOption } from './ablateOptions';
import { openRun } from '../run/setup';
import { DECODING_SPECS, decodingOptions, numberOption, type OptionSpec, parseCommand, UsageError } from './args';

const specs: Record<string, OptionSpec> = {
  run: { type: 'string', help: 'run folder' },
  split: { type: 'string', help: 'test | valid (default test)' },
  ...DECODING_SPECS,
  ...ABLATION_SPECS,
  limit: { type: 'string', help: 'only the first N sentences' },
};

export async function evaluateCommand(argv: string[]): Promise<number> {
  const options = parseCommand(
    argv,
    'evaluate',
    'Decodes the run’s test (or validation) split and prints BLEU; hypotheses and references go to RUN/eval/.',
    specs,
  );
  if (!options) return 0;
  if (!options.run) throw new UsageError('evaluate: --run RUN is required');
  const split = (options.split as string) ?? 'test';
  if (split !== 'test' && split !== 'valid') throw new UsageError(`--split: expected test or valid, got "${split}"`);
  const { beamSize, alpha, earlyStop } = decodingOptions(options);
  const limit = numberOption(
    options.limit,
    'limit',
    Infinity,
    (n) => Number.isInteger(n) && n >= 1,
    'a whole number ≥ 1',
  );
  const { run, data } = openRun(options.run as string, {}, 'read');
  const ids = (split === 'test' ? data.test : data.valid).slice(0, limit);
  const text = (split === 'test' ? data.testText : data.validText).slice(0, limit);
  if (ids.length === 0) throw new UsageError(`evaluate: ${run.path} has no ${split} split`);
  const backend = await initBackend(options.backend as string | undefined);
  const { model, weightsPath: weights } = loadRunCheckpoint(
    run.path,
    options.checkpoint as string | undefined,
    data.vocab.size,
  );
  process.stderr.write(
    `backend ${backend}; decoding ${ids.length} ${split} sentences with ${weights}, beam ${beamSize}, α ${alpha}\n`,
  );
  const ablated = ablationGatesOption(options, model, run.path);
  if (ablated) process.stderr.write(`ablation: ${describeAblation(ablated.ablation)}\n`);
  try {
    const refs = text.length ? text.map((p) => p.tgt) : ids.map((p) => data.vocab.decode(p.tgt));
    const heads = ablated ? { heads: ablated.gates.heads } : {};
    const { hyps, bleu, exact } = await scoreHeldOut(model, ids, refs, data.vocab, {
      beamSize,
      alpha,
      earlyStop,
      ...heads,
    });
    const dir = join(run.path, 'eval');
    mkdirSync(dir, { recursive: true });
    // atomic writes: a FIFO or a device in RUN/eval is refused by name, never opened (io/atomicFile.ts)
    writeFileAtomic(join(dir, `${split}.hyp`), [Buffer.from(hyps.map((h) => `${h}\n`).join(''))]);
    writeFileAtomic(join(dir, `${split}.ref`), [Buffer.from(refs.map((r) => `${r}\n`).join(''))]);
    process.stdout.write(`${formatBleu(bleu)}\n`);
    process.stderr.write(`exact matches: ${exact}/${ids.length}; hypotheses in ${join(dir, `${split}.hyp`)}\n`);
    return 0;
  } finally {
    ablated?.gates.dispose();
    model.dispose();
  }
}
