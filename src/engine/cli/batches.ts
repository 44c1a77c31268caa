/**
 * `batches`: a run's validation batches and its first N training batches, as token ids, to a binary
 * file (train/batchFile.ts has the format), so that another trainer (the PyTorch peer of
 * bench/equal-time.mjs) trains on the very batches the engine's trainer takes, in its order.
 */
import { checkOutputFile } from '../io/outputFile';
import { batchFileStepsLimit, overLimit } from '../run/limits';
import { openRun } from '../run/setup';
import { writeRunBatches } from '../train/batchFile';
import { numberOption, type OptionSpec, parseCommand, UsageError } from './args';

const specs: Record<string, OptionSpec> = {
  run: { type: 'string', help: 'run folder (its data, vocabulary, batch_tokens and seed decide the batches)' },
  steps: { type: 'string', help: 'how many training batches: those of steps 1…N of a new run' },
  out: { type: 'string', help: 'file to write (int32 ids; format in src/engine/train/batchFile.ts); a new file' },
  force: { type: 'boolean', help: 'replace --out if it is a regular file already (never a file of a run)' },
};

export async function batchesCommand(argv: string[]): Promise<number> {
  const options = parseCommand(
    argv,
    'batches',
    "Writes a run's validation batches and the training batches of its first N steps (token ids after BPE) to a file.",
    specs,
  );
  if (!options) return 0;
  if (!options.run) throw new UsageError('batches: --run RUN is required');
  if (!options.out) throw new UsageError('batches: --out FILE is required');
  if (options.steps === undefined) throw new UsageError('batches: --steps N is required');
  const steps = numberOption(options.steps, 'steps', 0, (n) => Number.isInteger(n) && n >= 1, 'a whole number ≥ 1');
  const target = checkOutputFile(options.out as string, options.force === true);
  const { run, settings, data } = openRun(options.run as string);
  const long = overLimit('--steps', steps, batchFileStepsLimit(settings.batch_tokens));
  if (long) throw new UsageError(long);
  const written = writeRunBatches(data, settings, steps, target);
  process.stdout.write(
    `${JSON.stringify({ run: run.path, out: options.out, steps, validation: written.validation, bytes: written.bytes })}\n`,
  );
  return 0;
}
