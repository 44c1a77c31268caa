/**
 * Files written whole or not at all, for every writer of a run folder (checkpoints, config.json,
 * the vocabulary, snapshots): a reader or a process killed mid-write never sees half a file.
 */
import { closeSync, fsyncSync, openSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { kindOf, linkNote } from './regularFile';

/** Marks the temp files of writeFileAtomic: `<file>.tmp-<pid>-<time>`. */
export const TEMP_SUFFIX = /\.tmp-\d+-\d+$/;

/** The pause halfway through every atomic write, in ms: 0 in every real run (pauseWritesHalfway). */
let slowWriteMs = 0;

/**
 * Test hook (test/README.md): every atomic write from now on stops for `ms` halfway through its temp
 * file, so a test can kill the process while a half-written temp file is on disk. Only a test's own
 * entry calls it (test/server/kill-in-write.test.ts, before it starts the server); nothing the
 * product runs does, and the engine reads no environment variable for it.
 */
export function pauseWritesHalfway(ms: number): void {
  slowWriteMs = Math.max(0, ms) || 0;
}

/** Blocks the thread for `ms` (the writes are synchronous, so the pause must be too). */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Writes the chunks in order; with the test hook, pauses once half the bytes are written. */
function writeChunks(fd: number, chunks: Uint8Array[]): void {
  if (!slowWriteMs) {
    for (const c of chunks) writeSync(fd, c);
    return;
  }
  let left = Math.floor(chunks.reduce((n, c) => n + c.byteLength, 0) / 2);
  let paused = false;
  for (const c of chunks) {
    const head = paused ? 0 : Math.min(left, c.byteLength);
    if (head > 0) writeSync(fd, c.subarray(0, head));
    left -= head;
    if (!paused && left === 0) {
      fsyncSync(fd); // the half is on disk while the writer waits
      pause(slowWriteMs);
      paused = true;
    }
    if (head < c.byteLength) writeSync(fd, c.subarray(head));
  }
}

/** What an errno means for a file being written, in words. */
const WRITE_ERRORS: Record<string, string> = {
  ENOENT: 'its folder does not exist',
  ENOTDIR: 'a part of its path is not a folder',
  EISDIR: 'it is a folder',
  EACCES: 'permission denied',
  EPERM: 'not permitted',
  EROFS: 'the file system is read-only',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'over the disk quota',
};

/** An error of a write, naming the file being written (never its temp file) and what went wrong. */
export function writeError(path: string, err: unknown): Error {
  const code = (err as NodeJS.ErrnoException).code;
  if (!code) return err as Error;
  return new Error(`${path}: cannot be written (${WRITE_ERRORS[code] ?? code})`);
}

/**
 * Refuses to replace or append to what is not a regular file: a rename over a folder, a FIFO or a
 * device (or a link to one) would fail, or replace a device node with a file; an append to a FIFO
 * would block.
 */
export function checkReplaceable(path: string): void {
  let s;
  try {
    s = statSync(path);
  } catch {
    return; // not there (or a link to nothing): the rename creates it
  }
  if (!s.isFile())
    throw new Error(
      `${path}${linkNote(path)}: ${kindOf(s)}, not a regular file; the engine writes only regular files: remove it`,
    );
}

/**
 * Writes the file whole or not at all: a temp file in the same folder, fsync, then rename. Errors
 * name `path`, never the temp file, which is removed.
 */
export function writeFileAtomic(path: string, chunks: Uint8Array[]): void {
  checkReplaceable(path);
  const tmp = `${path}.tmp-${process.pid}-${Date.now()}`;
  let fd: number;
  try {
    fd = openSync(tmp, 'w');
  } catch (err) {
    throw writeError(path, err);
  }
  try {
    writeChunks(fd, chunks);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    unlinkSync(tmp);
    throw writeError(path, err);
  }
  closeSync(fd);
  try {
    renameSync(tmp, path);
  } catch (err) {
    unlinkSync(tmp);
    throw writeError(path, err);
  }
}
