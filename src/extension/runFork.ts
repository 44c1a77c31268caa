/**
 * A run's fork origin, read from its config.json's `fork` (docs/RUN_FOLDER.md): the Runs tree's
 * link to the parent run, and the note the views' header shows. A leaf that views.ts and viewer.ts
 * both import, so neither imports the other for it.
 */
import * as path from 'node:path';
import { readJsonFile } from '../engine/io/json';
import { describeForkChanges } from '../protocol/fork';
import type { ForkOrigin } from '../protocol/panelState';
import { RUN_FILES } from '../protocol/runFolder';

/** A fork's parent run, step and changes, from its config.json (`fork`); undefined for a run that is no fork. */
export function forkOf(runDir: string): { parent: string; step: number; changes: Record<string, unknown> } | undefined {
  try {
    const c = readJsonFile(path.join(runDir, RUN_FILES.config)) as { fork?: unknown };
    const f = c.fork as { parent?: unknown; step?: unknown; changes?: unknown } | undefined;
    const changes = typeof f?.changes === 'object' && f.changes !== null ? (f.changes as Record<string, unknown>) : {};
    return typeof f?.parent === 'string' && typeof f.step === 'number'
      ? { parent: f.parent, step: f.step, changes }
      : undefined;
  } catch {
    return undefined; // no config.json yet, or one being written
  }
}

/** The header's note on a fork (ViewHeader.fork): its parent, step and edits in words; {} for a run that is no fork. */
export function forkHeader(runDir: string): { fork?: ForkOrigin } {
  const f = runDir ? forkOf(runDir) : undefined;
  return f ? { fork: { parent: f.parent, step: f.step, edits: describeForkChanges(f.changes) } } : {};
}
