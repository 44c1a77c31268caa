/** `bleu`: corpus BLEU of a hypothesis file against reference files, printed as sacreBLEU prints it. */
import { readLines } from '../data/corpus';
import { corpusBleu, formatBleu } from '../metrics/bleu';
import { type OptionSpec, parseCommand, UsageError } from './args';

const specs: Record<string, OptionSpec> = {
  hyp: { type: 'string', help: 'hypotheses, one a line' },
  ref: { type: 'string', help: 'references, one a line (comma-separate several files for multiple references)' },
  json: { type: 'boolean', help: 'print the score and its statistics as JSON instead' },
};

export async function bleuCommand(argv: string[]): Promise<number> {
  const options = parseCommand(
    argv,
    'bleu',
    "Corpus BLEU with sacreBLEU's defaults (13a tokenization, exp smoothing).",
    specs,
  );
  if (!options) return 0;
  if (!options.hyp || !options.ref) throw new UsageError('bleu: --hyp and --ref are required');
  const hypFile = options.hyp as string;
  const hyps = readLines(hypFile);
  if (hyps.length === 0)
    throw new UsageError(`bleu: --hyp ${hypFile} has no lines: nothing to score; give one hypothesis a line`);
  const refFiles = (options.ref as string).split(',');
  const refs = refFiles.map((f) => {
    const lines = readLines(f);
    if (lines.length !== hyps.length)
      throw new UsageError(`bleu: ${f} has ${lines.length} lines, ${hypFile} has ${hyps.length}`);
    return lines;
  });
  const score = corpusBleu(hyps, refs);
  process.stdout.write(options.json ? `${JSON.stringify(score)}\n` : `${formatBleu(score)}\n`);
  return 0;
}
