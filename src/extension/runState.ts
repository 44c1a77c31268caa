/**
 * A run folder's state as the side bar shows it: status.json's end marker (docs/RUN_FOLDER.md),
 * read whole each time (it is a few bytes, rewritten whole by its writer).
 */
import * as path from 'node:path';
import { readJsonFile } from '../engine/io/json';
import { RUN_FILES, RUN_STATES, type RunState } from '../protocol/runFolder';

/** How each state reads in the Runs tree and the Current Run view. */
export const STATE_LABELS: Record<RunState, string> = {
  running: 'running',
  paused: 'paused at a breakpoint',
  completed: 'completed',
  stopped: 'stopped',
  failed: 'failed',
  diverged: 'diverged',
};

/** The icon of a run in the Runs tree by its state (codicons). */
export const STATE_ICONS: Partial<Record<RunState, string>> = {
  paused: 'debug-pause',
  diverged: 'warning',
  failed: 'error',
};

/** status.json's state and step, or undefined (none yet, a format-1 folder, one being replaced, an unknown state). */
export function readRunState(runDir: string): { state: RunState; step: number | undefined } | undefined {
  const file = path.join(runDir, RUN_FILES.status);
  try {
    // A FIFO, a device or a file past the JSON bound is refused unopened (engine/io/regularFile.ts).
    const s = readJsonFile(file) as { state?: unknown; step?: unknown };
    const state = RUN_STATES.find((k) => k === s.state);
    if (!state) return undefined;
    return { state, step: Number.isInteger(s.step) ? (s.step as number) : undefined };
  } catch {
    return undefined;
  }
}
