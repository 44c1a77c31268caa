/**
 * `report RUN [--out FILE]`: the run's report as one self-contained HTML file (issue 33): header,
 * curves, the attention grid with a step slider over its snapshots, the Heads panel's telemetry map,
 * findings and the saved head report, and a beam tree given with --beam; it opens offline in any
 * browser. Prints {out, bytes, steps}.
 */
import { basename, dirname, join, resolve } from 'node:path';
import { writeRunReport } from '../server/report';
import { beamTreeFile } from './beamFile';
import { type OptionSpec, parseArgs, usage, UsageError } from './args';

const summary =
  'Writes a run’s report as one self-contained HTML file (plotly and the data inlined, no network) that opens in any browser.';
const specs: Record<string, OptionSpec> = {
  out: { type: 'string', help: 'file to write (default RUN-report.html beside the run folder); a new file' },
  steps: { type: 'string', help: 'snapshot steps to include, comma-separated (default every snapshot)' },
  pairs: { type: 'string', help: 'probe pairs to include, by index from 0, comma-separated (default 0)' },
  beam: {
    type: 'string',
    help: 'a beam search tree of the run to show, as JSON: the Beam Tree panel’s Export View JSON (the engine’s beam/tree answer, protocol/beamTree.ts BeamTreeView) or one line of decode --json --tree',
  },
  force: { type: 'boolean', help: 'replace --out if it is a regular file already (never a file of a run)' },
  help: { type: 'boolean', help: 'show this help' },
};

/** "25,50" → [25, 50], with an error naming the option. */
function wholeNumbers(value: string | boolean | undefined, option: string): number[] | undefined {
  if (value === undefined) return undefined;
  const parts = String(value)
    .split(',')
    .map((s) => s.trim());
  if (parts.some((s) => !/^\d+$/.test(s)))
    throw new UsageError(`report: --${option} takes whole numbers separated by commas, e.g. 0,25,50; got "${value}"`);
  return parts.map(Number);
}

export async function reportCommand(argv: string[]): Promise<number> {
  const { options, positional } = parseArgs(argv, specs, 'report');
  if (options.help) {
    process.stdout.write(usage('report RUN', summary, specs));
    return 0;
  }
  if (positional.length !== 1)
    throw new UsageError(
      `report: expected one run folder (attention-debugger report RUN --out FILE), got ${positional.length}`,
    );
  const runDir = resolve(positional[0]!);
  const out = resolve((options.out as string | undefined) ?? join(dirname(runDir), `${basename(runDir)}-report.html`));
  const steps = wholeNumbers(options.steps, 'steps');
  const pairs = wholeNumbers(options.pairs, 'pairs');
  const beam = options.beam === undefined ? undefined : beamTreeFile(String(options.beam));
  const r = writeRunReport(
    {
      runDir,
      out,
      ...(steps ? { steps } : {}),
      ...(pairs ? { pairs } : {}),
      ...(beam ? { beam } : {}),
      force: options.force === true,
    },
    '--out',
  );
  process.stdout.write(`${JSON.stringify(r)}\n`);
  process.stderr.write(`report: ${r.out} (${(r.bytes / 1e6).toFixed(1)} MB, ${r.steps.length} snapshots)\n`);
  return 0;
}
