/** `check-run RUN`: checks a run folder against its format (docs/RUN_FOLDER.md); exit 0 when valid, 1 with the problems. */
import { join } from 'node:path';
import { checkRunFolder, formatProblem } from '../run/checkFolder';
import { type OptionSpec, parseArgs, usage, UsageError } from './args';

const summary = 'Checks a run folder (any writer: the engine, the PyTorch RunWriter) against docs/RUN_FOLDER.md.';
const specs: Record<string, OptionSpec> = {
  json: { type: 'boolean', help: 'print the problems as a JSON array of {file, line, field, message}' },
  help: { type: 'boolean', help: 'show this help' },
};

export async function checkRunCommand(argv: string[]): Promise<number> {
  const { options, positional } = parseArgs(argv, specs, 'check-run');
  if (options.help) {
    process.stdout.write(usage('check-run RUN', summary, specs));
    return 0;
  }
  if (positional.length !== 1)
    throw new UsageError(
      `check-run: expected one run folder (attention-debugger check-run RUN), got ${positional.length}`,
    );
  const run = positional[0]!;
  const problems = checkRunFolder(run);
  if (options.json) process.stdout.write(`${JSON.stringify(problems)}\n`);
  else if (problems.length === 0) process.stdout.write(`${run}: a valid run folder\n`);
  else {
    for (const p of problems)
      process.stdout.write(`${p.file === '.' ? p.message : formatProblem({ ...p, file: join(run, p.file) })}\n`);
    process.stdout.write(`${run}: ${problems.length} problem${problems.length === 1 ? '' : 's'}\n`);
  }
  return problems.length === 0 ? 0 : 1;
}
