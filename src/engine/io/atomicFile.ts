/**
 * Files written whole or not at all, for every writer of a run folder (checkpoints, config.json,
 * the vocabulary, snapshots): a reader or a process killed mid-write never sees half a file.
 */
import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';

/** Marks the temp files of writeFileAtomic: `<file>.tmp-<pid>-<time>`. */
export const TEMP_SUFFIX = /\.tmp-\d+-\d+$/;

/** Writes the file whole or not at all: a temp file in the same folder, fsync, then rename. */
export function writeFileAtomic(path: string, chunks: Uint8Array[]): void {
  const tmp = `${path}.tmp-${process.pid}-${Date.now()}`;
  const fd = openSync(tmp, 'w');
  try {
    for (const c of chunks) writeSync(fd, c);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    unlinkSync(tmp);
    throw err;
  }
  closeSync(fd);
  renameSync(tmp, path);
}
