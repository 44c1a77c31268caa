/**
 * `report --beam FILE`: the beam tree a file holds, in either of the two shapes the product writes:
 * a BeamTreeView (protocol/beamTree.ts: the engine's `beam/tree` answer, the Beam Tree panel's
 * Export View JSON), or one line of `decode --json --tree` (its `tree` beside the record's source,
 * tokens and checkpoint), turned into the view the panel would draw. Checked as report/write checks
 * one: an error names the field.
 */
import { resolve } from 'node:path';
import type { BeamTreeView, BeamViewNode, EarlyStop } from '../../protocol/beamTree';
import { arrayOf, isFiniteNumber, isIndex, isPositiveInt, isString, object, oneOf } from '../../protocol/check';
import { EARLY_STOPS } from '../../protocol/beamTree';
import { checkReportBeam } from '../../protocol/report';
import { EOS } from '../data/specialTokens';
import { readTextFile } from '../io/regularFile';

/** What `decode --json --tree` prints of a line that the view needs (snake_case, as it prints it). */
interface DecodeTreeLine {
  source: string;
  src_tokens: string[];
  attention: { run: string; step: number; checkpoint: string };
  tree: {
    nodes: (Omit<BeamViewNode, 'logProb' | 'score'> & { logProb: number | null; score: number | null })[];
    n_best: number[];
    greedy: { ids: number[] };
    src_ids: number[];
    beam: number;
    alpha: number;
    early_stop: EarlyStop;
  };
}

/** The fields read here; the nodes themselves are checked as the view's (checkReportBeam). */
const checkDecodeLine = object<Pick<DecodeTreeLine, 'source' | 'src_tokens'>>({
  source: isString,
  src_tokens: arrayOf(isString),
});
const checkDecodeContext = object<DecodeTreeLine['attention']>({ run: isString, step: isIndex, checkpoint: isString });
const checkDecodeTree = object<Omit<DecodeTreeLine['tree'], 'nodes' | 'greedy'>>({
  n_best: arrayOf(isIndex),
  src_ids: arrayOf(isIndex),
  beam: isPositiveInt,
  alpha: isFiniteNumber,
  early_stop: oneOf(EARLY_STOPS),
});

/** JSON has no −∞: decode prints a forced EOS's as null, the view holds −1e30 (as beam/tree sends it). */
const finite = (x: number | null) => (x === null ? -1e30 : Math.max(x, -1e30));

/** One `decode --json --tree` line as the view the Beam Tree panel draws, or why it is not one. */
export function beamTreeOfDecodeLine(line: Record<string, unknown>, path: string): BeamTreeView | string {
  const why =
    checkDecodeLine(line, path) ??
    checkDecodeContext(line.attention, `${path}.attention`) ??
    checkDecodeTree(line.tree, `${path}.tree`);
  if (why) return `${why} (a line of decode --json --tree)`;
  const { source, src_tokens: srcTokens, attention, tree } = line as unknown as DecodeTreeLine;
  if (!Array.isArray(tree.nodes)) return `${path}.tree.nodes must be an array`;
  if (!Array.isArray(tree.greedy?.ids)) return `${path}.tree.greedy.ids must be an array`;
  return {
    runDir: attention.run,
    step: attention.step,
    checkpoint: attention.checkpoint,
    input: source,
    srcIds: tree.src_ids,
    srcTokens,
    beam: tree.beam,
    alpha: tree.alpha,
    earlyStop: tree.early_stop,
    nodes: tree.nodes.map((n) => ({ ...n, logProb: finite(n.logProb), score: finite(n.score) })),
    nBest: tree.n_best,
    greedy: [...tree.greedy.ids, EOS],
  };
}

/** The JSON value(s) of a file: one document, or one per line (decode's output). */
function jsonValues(text: string, file: string): unknown[] {
  try {
    return [JSON.parse(text)];
  } catch (err) {
    const lines = text.split('\n').filter((l) => l.trim());
    if (lines.length < 2) throw new Error(`report: --beam ${file} is not JSON: ${(err as Error).message}`);
    return lines.map((l, i) => {
      try {
        return JSON.parse(l) as unknown;
      } catch (e) {
        throw new Error(`report: --beam ${file} line ${i + 1} is not JSON: ${(e as Error).message}`);
      }
    });
  }
}

/** --beam FILE: the tree it holds, checked as report/write checks one (the error names the field). */
export function beamTreeFile(file: string): BeamTreeView {
  let text: string;
  try {
    // A regular file within the JSON bound, refused unopened otherwise (a FIFO would block, /dev/zero fill memory).
    text = readTextFile(resolve(file), 'json');
  } catch (err) {
    throw new Error(`report: --beam ${file} cannot be read: ${(err as Error).message}`);
  }
  const values = jsonValues(text, file);
  if (values.length > 1)
    throw new Error(
      `report: --beam ${file} holds ${values.length} lines of decode output: --beam shows one sentence's tree, ` +
        'keep its line (e.g. sed -n 1p)',
    );
  const [value] = values;
  const fromDecode =
    typeof value === 'object' && value !== null && 'tree' in value && !('nodes' in value)
      ? beamTreeOfDecodeLine(value as Record<string, unknown>, 'beam')
      : undefined;
  if (typeof fromDecode === 'string') throw new Error(`report: --beam ${file} is not a beam tree: ${fromDecode}`);
  const beam = fromDecode ?? value;
  const why = checkReportBeam(beam, 'beam');
  if (why)
    throw new Error(
      `report: --beam ${file} is not a beam tree (the Beam Tree panel's JSON export, beam/tree's answer, ` +
        `or a line of decode --json --tree): ${why}`,
    );
  return beam as BeamTreeView;
}
