/**
 * The run's steps as a source the debugger shows (`<run>.steps`, one line per training step: line N
 * is step N), so a paused step has a place in an editor: the call stack's frames point at the step's
 * line, a breakpoint set on a line in its gutter is a `step N` breakpoint, and Run to Cursor on a
 * line runs to that step. The adapter serves the text (DAP `source`); nothing is written to disk.
 */
import type { DebugProtocol } from '@vscode/debugprotocol';
import { type FunctionBreakpoint, readFunctionBreakpoint } from './breakpoints';

/** The steps source's reference in every session (the adapter serves no other source). */
export const STEPS_REFERENCE = 1;

/** The steps source of the run `name` (its extension gives the editor its language: package.json). */
export function stepsSource(name: string): DebugProtocol.Source {
  return { name: `${name}.steps`, sourceReference: STEPS_REFERENCE };
}

/** The line of step `step` (1-based; step 0, before training, shows on step 1's line). */
export const stepLine = (step: number): number => Math.max(1, step);

/** The source's text: `step 1` … `step total`, one per line. */
export function stepsText(total: number): string {
  return Array.from({ length: Math.max(1, total) }, (_, i) => `step ${i + 1}`).join('\n') + '\n';
}

/** Whether a breakpoint request's source is the steps source (by reference, or by name when the client kept only that). */
export const isStepsSource = (s: DebugProtocol.Source): boolean =>
  s.sourceReference === STEPS_REFERENCE || (s.name ?? s.path ?? '').endsWith('.steps');

/**
 * The line breakpoints of a source as the adapter keeps them: on the steps source, line N is
 * `step N` (pause after it); anywhere else a breakpoint has no meaning and is refused, saying where
 * breakpoints go.
 */
export function readLineBreakpoints(
  nextId: () => number,
  source: DebugProtocol.Source,
  lines: DebugProtocol.SourceBreakpoint[],
): FunctionBreakpoint[] {
  const where =
    'a training run has no source lines: set breakpoints on the lines of the run’s .steps source ' +
    '(the call stack opens it), or as `step N` or a watch condition in the Breakpoints view';
  return lines.map((bp) => {
    const id = nextId();
    return isStepsSource(source)
      ? readFunctionBreakpoint(id, { name: `step ${bp.line}` }, undefined)
      : { id, error: where };
  });
}
