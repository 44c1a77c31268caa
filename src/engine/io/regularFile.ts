/**
 * Every file the engine reads is checked first: a regular file (a symbolic link is resolved, then
 * checked the same way) of at most a bound for its kind. A link to /dev/zero would otherwise be read
 * until memory runs out, a FIFO would block the reader (and in `serve`, the whole engine) forever,
 * and a folder would fail with a raw EISDIR. The check is a `stat`, made before any `open`; the
 * open itself does not wait on a FIFO swapped in after it (O_NONBLOCK), and reads no more than the
 * size the check saw. Bounds (docs/RUN_FOLDER.md, "Limits on reading"):
 *   json     64 MiB  config.json, status.json, vocab.json, a --config file, a format-1 snapshot
 *   lines   500 MiB  metrics.jsonl, telemetry.jsonl, events.jsonl (under V8's longest string)
 *   tensors   2 GiB  safetensors: checkpoints, optimizer files, snapshots (the most one read returns)
 *   text      2 GiB  corpus files and gettext catalogs
 */
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
  type Stats,
  statSync,
} from 'node:fs';

const MiB = 1024 * 1024;

export const READ_LIMITS = {
  json: 64 * MiB,
  lines: 500 * MiB,
  tensors: 2 * 1024 * MiB - 1,
  text: 2 * 1024 * MiB - 1,
} as const;

export type ReadKind = keyof typeof READ_LIMITS;

const WHAT: Record<ReadKind, string> = {
  json: 'a JSON file',
  lines: 'a .jsonl file',
  tensors: 'a safetensors file',
  text: 'a text file',
};

/** A file refused before it was opened: not there, not a regular file, or too large. */
export class FileRefused extends Error {
  /** `why` follows the path: `: not found`, ` (a link to /dev/zero): a character device, …`. */
  constructor(
    readonly path: string,
    readonly why: string,
  ) {
    super(`${path}${why}`);
  }

  /** The message without the path, for a report that names the file apart: `a link to /dev/zero: a character device, …`. */
  get reason(): string {
    return this.why.replace(/^: /, '').replace(/^ \((.*?)\): /, '$1: ');
  }
}

/** What a non-regular file is, in words. */
export function kindOf(s: Stats): string {
  if (s.isDirectory()) return 'a folder';
  if (s.isFIFO()) return 'a FIFO (named pipe)';
  if (s.isCharacterDevice()) return 'a character device';
  if (s.isBlockDevice()) return 'a block device';
  if (s.isSocket()) return 'a socket';
  return s.isFile() ? 'a regular file' : 'not a regular file';
}

/** ` (a link to TARGET)` when `path` is a symbolic link, else ''. */
export function linkNote(path: string): string {
  try {
    return lstatSync(path).isSymbolicLink() ? ` (a link to ${readlinkSync(path)})` : '';
  } catch {
    return '';
  }
}

/** `3.2 GB`-style sizes for messages. */
export function bytesText(n: number): string {
  if (n < 1024) return `${n} bytes`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = -1;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[u]}`;
}

/**
 * The stats of `path` if it is a regular file (after resolving links) of at most the bound for
 * `kind`; otherwise a FileRefused naming `path` as given: `PATH: not found`, `PATH (a link to
 * /dev/zero): a character device, not a regular file; …`, `PATH: 3.0 GiB, more than …`.
 */
export function checkRegularFile(path: string, kind: ReadKind): Stats {
  let s: Stats;
  try {
    s = statSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      const dangling = linkNote(path);
      throw new FileRefused(path, `${dangling}: not found${dangling ? ' (the link points nowhere)' : ''}`);
    }
    throw new FileRefused(path, `: cannot be read (${code ?? (err as Error).message})`);
  }
  if (!s.isFile())
    throw new FileRefused(
      path,
      `${linkNote(path)}: ${kindOf(s)}, not a regular file; the engine reads only regular files: ` +
        'put the file itself there',
    );
  const limit = READ_LIMITS[kind];
  if (s.size > limit)
    throw new FileRefused(
      path,
      `: ${bytesText(s.size)}, more than the ${bytesText(limit)} the engine reads of ` +
        `${WHAT[kind]}; is it the right file?`,
    );
  return s;
}

/**
 * The names in a folder, or none when `path` is not there; a `path` that is there but is not a
 * folder (a file named `checkpoints`) is refused by name rather than failing with a raw ENOTDIR.
 */
export function folderEntries(path: string): string[] {
  let s: Stats;
  try {
    s = statSync(path);
  } catch {
    return [];
  }
  if (!s.isDirectory()) throw new FileRefused(path, `${linkNote(path)}: ${kindOf(s)}, not a folder; remove it`);
  return readdirSync(path);
}

/** Opens a checked file for reading; a FIFO swapped in since the check does not block the open. */
function openChecked(path: string): number {
  try {
    return openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new FileRefused(path, `: cannot be read (${code ?? (err as Error).message})`);
  }
}

/**
 * `length` bytes of `path` from `position` (all of it from `position` by default), after
 * checkRegularFile; never more than the file's size as the check saw it.
 */
export function readRegularFile(path: string, kind: ReadKind, position = 0, length?: number): Buffer {
  checkRegularFile(path, kind);
  const fd = openChecked(path);
  try {
    const s = fstatSync(fd);
    if (!s.isFile()) throw new FileRefused(path, `: ${kindOf(s)}, not a regular file (it changed while opened)`);
    const want = Math.max(0, Math.min(length ?? Infinity, s.size - position, READ_LIMITS[kind]));
    const buf = Buffer.allocUnsafe(want);
    let got = 0;
    while (got < want) {
      const n = readSync(fd, buf, got, want - got, position + got);
      if (n === 0) break; // the file shrank since fstat
      got += n;
    }
    return buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}

/** The text of a checked file (UTF-8). */
export function readTextFile(path: string, kind: ReadKind): string {
  return readRegularFile(path, kind).toString('utf8');
}
