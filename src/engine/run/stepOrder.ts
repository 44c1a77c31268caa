/**
 * Whether metrics.jsonl's steps come in an order one writer at a time can leave (docs/RUN_FOLDER.md,
 * metrics.jsonl). Steps ascend; a resume may go back, but only to the first step logged after a
 * checkpoint the folder holds (or after step 0, the initialisation), since it trains again from
 * there. The engine drops the lines past its checkpoint when it resumes, so an engine run never
 * goes back at all. Two trainers appending to one folder at once (what a run's lock now prevents)
 * interleave their steps: 101, 101, 102, 102, … ; that is what this finds.
 */
import { RUN_FILES } from '../../protocol/runFolder';
import type { RunProblem } from './checkTensors';

/** A complete metrics line with a valid step: its line number (from 1) and step. */
export interface StepLine {
  line: number;
  step: number;
}

/**
 * The first line whose step no single writer could have written there, as one problem that also
 * counts the others; undefined when the order is one a writer (and its resumes) leaves.
 * `checkpoints`: the steps of the folder's checkpoints/step-N.safetensors.
 */
export function stepOrderProblem(
  lines: StepLine[],
  writer: unknown,
  checkpoints: Iterable<number>,
): RunProblem | undefined {
  const engine = writer === 'engine';
  const saved = [...checkpoints].sort((a, b) => a - b);
  const logged: number[] = []; // the distinct steps logged so far, ascending
  const lastLineOf = new Map<number, number>(); // step → the line that last logged it
  let first: RunProblem | undefined;
  let count = 0;
  for (let i = 0; i < lines.length; i++) {
    const { line, step } = lines[i]!;
    const prev = lines[i - 1];
    if (prev && step <= prev.step && (engine || !resumed(step, logged, saved))) {
      count++;
      if (!first) {
        const again = lastLineOf.get(step);
        const what =
          again !== undefined ? `step ${step} again (line ${again} has it)` : `step ${step} after step ${prev.step}`;
        const why = engine
          ? 'the engine writes each step once (a resume first drops the lines past its checkpoint)'
          : `a resume goes back only to the first step after a checkpoint it holds, and checkpoints/ has none ` +
            `from which step ${step} comes next`;
        first = { file: RUN_FILES.metrics, line, field: 'step', message: `${what}: ${why}` };
      }
    }
    if (!lastLineOf.has(step)) logged.splice(firstAtLeast(logged, step), 0, step);
    lastLineOf.set(step, line);
  }
  if (!first) return undefined;
  const others = count > 1 ? `; ${count} lines go back in all` : '';
  return { ...first, message: `${first.message}${others}; two trainers wrote this run at once` };
}

/** The index of the first element of ascending `xs` that is ≥ x (xs.length when none). */
function firstAtLeast(xs: readonly number[], x: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Whether a line going back to `step` is a resume: the highest step logged before it below `step`
 * (none: the run started over from its initialisation) is at or before a checkpoint that comes
 * before `step`.
 */
function resumed(step: number, logged: readonly number[], saved: readonly number[]): boolean {
  const at = firstAtLeast(logged, step);
  if (at === 0) return true;
  const below = logged[at - 1]!;
  const c = firstAtLeast(saved, below);
  return c < saved.length && saved[c]! < step;
}
