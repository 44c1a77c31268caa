/** `average`: a checkpoint whose every weight is the mean of the run's last n checkpoints (§6.1: 5 for base, 20 for big). */
import { join } from 'node:path';
import { listCheckpoints } from '../checkpoint';
import { averageCheckpoints } from '../checkpoint/average';
import { writeSafetensors } from '../checkpoint/safetensors';
import { checkOutputFile } from '../io/outputFile';
import { overLimit } from '../run/limits';
import { numberOption, type OptionSpec, parseCommand, UsageError } from './args';

const specs: Record<string, OptionSpec> = {
  run: { type: 'string', help: 'run folder' },
  last: { type: 'string', help: 'how many of the newest checkpoints (default 5)' },
  out: { type: 'string', help: 'file to write (default RUN/checkpoints/average-last-N.safetensors); a new file' },
  force: { type: 'boolean', help: 'replace --out if it is a regular file already (never a file of a run)' },
};

export async function averageCommand(argv: string[]): Promise<number> {
  const options = parseCommand(argv, 'average', 'Averages the newest checkpoints of a run into one.', specs);
  if (!options) return 0;
  if (!options.run) throw new UsageError('average: --run RUN is required');
  const n = numberOption(options.last, 'last', 5, (x) => Number.isInteger(x) && x >= 1, 'a whole number ≥ 1');
  const all = listCheckpoints(options.run as string);
  if (all.length === 0) throw new UsageError(`average: ${options.run} has no checkpoints`);
  // The default takes what there is; a --last past the run's checkpoints asks for ones it does not hold.
  const held = { max: all.length, why: `the checkpoints ${options.run} holds` };
  const over = options.last !== undefined && overLimit('--last', n, held);
  if (over) throw new UsageError(over);
  const chosen = all.slice(-n);
  const out =
    (options.out as string) ?? join(options.run as string, 'checkpoints', `average-last-${chosen.length}.safetensors`);
  const target = checkOutputFile(out, options.force === true);
  writeSafetensors(target, averageCheckpoints(chosen.map((c) => c.path)), {
    averaged_steps: chosen.map((c) => c.step).join(','),
  });
  process.stdout.write(`${JSON.stringify({ out, steps: chosen.map((c) => c.step) })}\n`);
  if (chosen.length < n) process.stderr.write(`average: only ${chosen.length} checkpoints in ${options.run}\n`);
  return 0;
}
