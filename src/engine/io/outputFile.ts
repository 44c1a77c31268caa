/**
 * An output file a user names (`average --out`, `batches --out`), checked before anything is
 * computed or written: it must be a new file in a folder that exists, or a regular file the user
 * chose to replace (`--force`); never a folder, a FIFO, a device or a socket (a rename over
 * /dev/null would replace the device node with a file), and never a file of a run folder (its
 * config.json, vocabulary, metrics, status, checkpoints or snapshots: `average --out` onto the run's
 * newest checkpoint would overwrite it). Errors name the path as the user gave it.
 */
import { existsSync, lstatSync, realpathSync, type Stats, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { CHECKPOINT_FILE, OPTIMIZER_FILE, RUN_FILES, SNAPSHOT_FILE } from '../../protocol/runFolder';
import { kindOf } from './regularFile';

const isRunFolder = (dir: string): boolean => existsSync(join(dir, RUN_FILES.config));

/** The run folder `path` (absolute, links resolved) is a file of, if any: a name the run format gives a file. */
export function runOwning(path: string): string | undefined {
  const name = basename(path);
  const dir = dirname(path);
  const top = dirname(dir);
  if ((Object.values(RUN_FILES) as string[]).includes(name) && isRunFolder(dir)) return dir;
  if (name === 'model.safetensors' && isRunFolder(dir)) return dir; // a checkpoint folder
  if (basename(dir) === RUN_FILES.checkpoints && (CHECKPOINT_FILE.test(name) || OPTIMIZER_FILE.test(name)))
    return isRunFolder(top) ? top : undefined;
  if (basename(dir) === RUN_FILES.snapshots && SNAPSHOT_FILE.test(name)) return isRunFolder(top) ? top : undefined;
  return undefined;
}

function statOrUndefined(path: string, follow: boolean): Stats | undefined {
  try {
    return follow ? statSync(path) : lstatSync(path);
  } catch {
    return undefined;
  }
}

/**
 * Checks `path` as an output file for `flag` (`--out`) and returns the path to write: `path`
 * itself, or, for a link to a regular file, the file it links to (so that the link stays). Refuses,
 * naming `flag path`: a missing folder, a folder, a special file, an existing file without `force`,
 * and a file of a run folder even with `force`.
 */
export function checkOutputFile(path: string, force: boolean, flag = '--out'): string {
  const named = `${flag} ${path}`;
  const parent = dirname(resolve(path));
  const folder = statOrUndefined(parent, true);
  if (!folder)
    throw new Error(`${named}: the folder ${dirname(path)} does not exist; create it first or choose another ${flag}`);
  if (!folder.isDirectory())
    throw new Error(`${named}: ${dirname(path)} is ${kindOf(folder)}, not a folder; choose another ${flag}`);
  const link = statOrUndefined(path, false);
  const target = link ? statOrUndefined(path, true) : undefined;
  if (link && !target)
    throw new Error(`${named}: a link to a path that does not exist; name the file itself, or choose another ${flag}`);
  const real = target ? realpathSync(path) : join(realpathSync(parent), basename(path));
  const run = runOwning(real);
  if (run)
    throw new Error(
      `${named}: is the run ${run}'s own ${basename(real)}; an output never replaces or adds a file of a run: ` +
        `choose another ${flag}`,
    );
  if (!target) return path;
  if (!target.isFile())
    throw new Error(
      `${named}${link?.isSymbolicLink() ? ' (a link)' : ''}: is ${kindOf(target)}, not a regular file; ` +
        `${flag} must name a new file, or a regular file with --force`,
    );
  if (!force) throw new Error(`${named}: already exists; give --force to replace it, or choose another ${flag}`);
  return real;
}
