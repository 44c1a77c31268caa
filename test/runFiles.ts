/**
 * A run folder read as the tests' independent source: its JSON-lines logs (metrics.jsonl,
 * telemetry.jsonl) row by row, a step's newest row, and the sha256 of every file under it (to show
 * a folder unchanged byte for byte).
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Every row of a JSON-lines file. */
export const jsonLines = <T>(path: string): T[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as T);

/** The newest row of a step (a resume logs the steps past its checkpoint again). */
export const rowAt = <T extends { step: number }>(path: string, step: number): T =>
  jsonLines<T>(path)
    .filter((r) => r.step === step)
    .at(-1)!;

/** Every file under a folder, by its path relative to it, and the sha256 of its bytes. */
export function folderHashes(dir: string, under = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(join(dir, under)).sort()) {
    const rel = join(under, name);
    if (statSync(join(dir, rel)).isDirectory()) Object.assign(out, folderHashes(dir, rel));
    else
      out[rel] = createHash('sha256')
        .update(readFileSync(join(dir, rel)))
        .digest('hex');
  }
  return out;
}
