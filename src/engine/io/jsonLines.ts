/** A run's JSON-lines files (metrics.jsonl, telemetry.jsonl, events.jsonl: docs/RUN_FOLDER.md), read. */
import { existsSync } from 'node:fs';
import { readTextFile } from './regularFile';

/**
 * Every complete line of a .jsonl file; a torn last line (a kill mid-write) is ignored. A path that
 * is there but not a regular file (a FIFO, a link to /dev/zero) is refused by name (regularFile.ts).
 */
export function readJsonLines<T>(path: string): T[] {
  if (!existsSync(path)) return [];
  const rows: T[] = [];
  for (const line of readTextFile(path, 'lines').split('\n')) {
    if (!line.trim()) continue;
    try {
      rows.push(JSON.parse(line) as T);
    } catch {
      // a partial line from an interrupted append: the step is redone after resuming
    }
  }
  return rows;
}
