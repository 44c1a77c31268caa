/**
 * Reading a JSON file with an error a person can act on: the file, and where its JSON breaks, but
 * never the file's contents (V8's message quotes them: `"root:x:0:0:"... is not valid JSON` for a
 * config pointed at /etc/passwd), and a missing file called missing.
 */
import { readTextFile } from './regularFile';

/** V8's JSON.parse message without the text it quotes from the input. */
function jsonErrorText(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message
    .replace(/"(?:[^"\\]|\\.)*"(\.\.\.)?/g, '…')
    .replace(/^Unexpected token '.', … is not valid JSON$/, 'not JSON from its first character')
    .replace(/ is not valid JSON$/, '');
}

/**
 * The parsed contents of `path`, or an error `PATH: not found` / `PATH:LINE: not valid JSON at column C (why)`;
 * a path that is not a regular file of at most READ_LIMITS.json is refused unopened (regularFile.ts).
 */
export function readJsonFile(path: string): unknown {
  const text = readTextFile(path, 'json');
  try {
    return JSON.parse(text);
  } catch (err) {
    const why = jsonErrorText(err);
    const at = /at position (\d+)/.exec(why);
    if (!at) throw new Error(`${path}: not valid JSON (${why})`);
    const before = text.slice(0, Number(at[1])).split('\n');
    const column = before[before.length - 1]!.length + 1;
    const what = why.replace(/ in JSON at position \d+/, '');
    throw new Error(`${path}:${before.length}: not valid JSON at column ${column} (${what})`);
  }
}
