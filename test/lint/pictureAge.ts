/**
 * How old a README picture is beside the code it shows, in git's times (a clean clone resets every
 * file's mtime, so mtimes say nothing): the newest commit that touched the picture against the
 * newest that touched any of the folders or files it shows (scripts/pictures.json `shows`).
 *
 * A shallow clone (CI's `--depth 1`) holds only its newest commits: its boundary commits have no
 * parents there, so every file untouched since reads as last changed by one of them, a time that is
 * only an upper bound of the true one. The verdict uses only what that bounds soundly: a picture
 * changed after the boundary is exact; code last read at a boundary is older than any picture changed
 * after it (fresh); a picture last read at a boundary is too old when code changed after the boundary
 * more than the margin after it; anything else cannot be told, and says why.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The verdict on one picture. */
export type Age =
  | { verdict: 'fresh' }
  | { verdict: 'stale'; days: number; newest: string }
  | { verdict: 'unknown'; why: string };

const git = (repo: string, ...args: string[]): string =>
  execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8' }).trim();

/** The newest commit touching `paths` at HEAD: its hash and committer time (s), or undefined when none. */
function newest(repo: string, paths: string[]): { hash: string; time: number } | undefined {
  const line = git(repo, 'log', '-1', '--format=%H %ct', 'HEAD', '--', ...paths);
  if (!line) return undefined;
  const [hash, time] = line.split(' ');
  return { hash: hash!, time: Number(time) };
}

/** The boundary commits of a shallow clone (none in a whole one). */
export function shallowBoundary(repo: string): Set<string> {
  const file = join(repo, git(repo, 'rev-parse', '--git-path', 'shallow'));
  const path = existsSync(file) ? file : join(repo, '.git', 'shallow');
  return new Set(existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : []);
}

/**
 * Whether `picture` (a path in `repo`) is older than the newest change to `shows` by more than
 * `marginDays`. A picture not committed yet is being made now: fresh.
 */
export function pictureAge(repo: string, picture: string, shows: string[], marginDays: number): Age {
  const boundary = shallowBoundary(repo);
  const pic = newest(repo, [picture]);
  const code = newest(repo, shows);
  if (!pic || !code) return { verdict: 'fresh' };
  const days = (code.time - pic.time) / 86_400;
  const picExact = !boundary.has(pic.hash);
  const codeExact = !boundary.has(code.hash);
  const stale = { verdict: 'stale', days, newest: code.hash } as const;
  if (picExact) return codeExact && days > marginDays ? stale : { verdict: 'fresh' };
  if (codeExact && days > marginDays) return stale;
  return {
    verdict: 'unknown',
    why:
      `shallow: this is a shallow clone and ${picture} was last changed before its oldest commit, so its age is ` +
      `not known (git fetch --unshallow tells it)`,
  };
}
