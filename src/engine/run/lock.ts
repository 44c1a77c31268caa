/**
 * One writer per run folder (docs/RUN_FOLDER.md, "writer.lock"). A trainer takes RUN/writer.lock
 * before it writes the run and removes it when it ends: the file is created with O_EXCL (open 'wx'),
 * so of two trainers that try at once exactly one succeeds, and it holds the owner's pid, host,
 * start time and command. A second writer is refused with who holds the run. A lock whose process
 * is gone (same host, `kill(pid, 0)` says ESRCH: SIGKILLed, crashed) is taken over, and the taker
 * is told so; a lock from another host is never taken over (this host cannot tell whether that
 * process lives), and the message says to delete it when sure. Readers (decode, attention,
 * check-run, a follower of a live run) never look at the lock.
 */
import { closeSync, fsyncSync, linkSync, lstatSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { RUN_FILES } from '../../protocol/runFolder';
import { writeError } from '../io/atomicFile';
import { FileRefused, readTextFile } from '../io/regularFile';

/** What writer.lock holds: one JSON object. */
export interface LockHolder {
  pid: number;
  host: string;
  /** Milliseconds since 1970 when the lock was taken. */
  started: number;
  /** The command that took it: `train --out runs/a --resume`, `serve train/resume`. */
  command: string;
}

/** A lock file this large is not one (a lock is a line of JSON): it is not read. */
const MAX_LOCK_BYTES = 4096;
/** An empty lock younger than this is being written by the writer that just created it. */
const BEING_TAKEN_MS = 5000;

/** `pid 123 on host box (train --out r --resume, since 2026-01-02T03:04:05.000Z)`. */
export function describeHolder(h: LockHolder): string {
  return `pid ${h.pid} on host ${h.host} (${h.command}, since ${new Date(h.started).toISOString()})`;
}

/** Whether a process of this host lives: signal 0 only asks (EPERM: it lives, under another user). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** The locks this process holds; the exit handler removes them (process.exit, a second Ctrl-C). */
const held = new Set<RunLock>();
let exitHandler = false;

export class RunLock {
  private released = false;

  constructor(
    readonly path: string,
    readonly holder: LockHolder,
    /** Set when a dead writer's lock was taken over: what the user is told. */
    readonly tookOver?: string,
  ) {
    held.add(this);
    if (!exitHandler) {
      process.on('exit', () => held.forEach((l) => l.release()));
      exitHandler = true;
    }
  }

  /** Removes the lock file, if it still is this one (never another writer's); calling again does nothing. */
  release(): void {
    if (this.released) return;
    this.released = true;
    held.delete(this);
    const now = readHolder(this.path);
    if (now.kind !== 'holder' || now.holder.pid !== this.holder.pid || now.holder.started !== this.holder.started)
      return;
    try {
      unlinkSync(this.path);
    } catch {
      // already gone: nothing to release
    }
  }
}

type Read =
  | { kind: 'absent' }
  | { kind: 'holder'; holder: LockHolder }
  | { kind: 'empty'; age: number }
  | { kind: 'invalid'; why: string };

/** What the lock file says, without following a link or opening a FIFO or device. */
function readHolder(path: string): Read {
  let text: string;
  try {
    const s = lstatSync(path);
    if (!s.isFile()) return { kind: 'invalid', why: 'is not a regular file' };
    if (s.size > MAX_LOCK_BYTES) return { kind: 'invalid', why: `holds ${s.size} bytes, not a lock` };
    if (s.size === 0) return { kind: 'empty', age: Date.now() - s.mtimeMs };
    text = readTextFile(path, 'json'); // bounded, and a FIFO swapped in since lstat does not block
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'absent' };
    if (err instanceof FileRefused)
      return err.reason === 'not found' ? { kind: 'absent' } : { kind: 'invalid', why: err.reason };
    return { kind: 'invalid', why: `cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return { kind: 'invalid', why: 'is not JSON' };
  }
  const o = v as Partial<LockHolder> | null;
  if (
    typeof o !== 'object' ||
    o === null ||
    !Number.isInteger(o.pid) ||
    (o.pid as number) <= 0 ||
    typeof o.host !== 'string' ||
    typeof o.started !== 'number' ||
    typeof o.command !== 'string'
  )
    return { kind: 'invalid', why: 'is not {"pid", "host", "started", "command"}' };
  return { kind: 'holder', holder: o as LockHolder };
}

/** Creates the lock file with O_EXCL; false when it exists. */
function create(path: string, holder: LockHolder): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    throw new Error(
      `${path}: cannot create the run's lock (${code === 'EACCES' || code === 'EPERM' ? 'permission denied' : code}); ` +
        'a trainer needs to write in the run folder: check its permissions',
    );
  }
  try {
    writeSync(fd, `${JSON.stringify(holder)}\n`);
    fsyncSync(fd);
  } catch (err) {
    // An empty lock left here would refuse every later trainer: remove it (a disk full, a quota).
    closeSync(fd);
    unlinkSync(path);
    throw writeError(path, err);
  }
  closeSync(fd);
  return true;
}

/**
 * Moves a dead writer's lock aside and deletes it, unless another writer replaced it meanwhile
 * (then that lock is put back). True when the dead lock is gone.
 */
function removeDead(path: string, dead: LockHolder): boolean {
  const aside = `${path}.tmp-${process.pid}-${Date.now()}`; // TEMP_SUFFIX: a leftover is a torn write
  try {
    renameSync(path, aside);
  } catch {
    return false; // another writer moved or took it first: look again
  }
  const moved = readHolder(aside);
  if (moved.kind === 'holder' && moved.holder.pid === dead.pid && moved.holder.started === dead.started) {
    unlinkSync(aside);
    return true;
  }
  try {
    linkSync(aside, path); // a live writer's lock, moved by mistake: back (unless one took the name)
  } catch {
    // the name was taken again: that writer holds the run
  }
  unlinkSync(aside);
  return false;
}

/** Thrown when another writer holds the run. */
export class RunLockedError extends Error {}

/**
 * Takes the run folder's lock for `command`, or throws RunLockedError saying who holds it and what
 * to do. A lock of a dead process of this host is taken over (`tookOver` says whose it was).
 */
export function takeRunLock(runDir: string, command: string): RunLock {
  const path = join(runDir, RUN_FILES.lock);
  const mine: LockHolder = { pid: process.pid, host: hostname(), started: Date.now(), command };
  let tookOver: string | undefined;
  for (let attempt = 0; attempt < 10; attempt++) {
    if (create(path, mine)) return new RunLock(path, mine, tookOver);
    const read = readHolder(path);
    if (read.kind === 'absent') continue; // released between the two calls
    if (read.kind === 'empty' && read.age < BEING_TAKEN_MS)
      throw new RunLockedError(`${runDir}: another trainer is taking this run right now (${path}); one writer per run`);
    if (read.kind !== 'holder')
      throw new RunLockedError(
        `${path}: ${read.kind === 'empty' ? 'is empty' : read.why}, so it names no writer; ` +
          'if no trainer writes this run, delete it and try again',
      );
    const h = read.holder;
    if (h.host !== mine.host)
      throw new RunLockedError(
        `${runDir} is locked by ${describeHolder(h)}: another host, so this one cannot tell whether that trainer ` +
          `still runs; if you are sure it does not, delete ${path} and try again`,
      );
    const mineAlready = [...held].some((l) => l.path === path);
    if (mineAlready || (h.pid !== process.pid && alive(h.pid)))
      throw new RunLockedError(
        `${runDir} is being trained by ${describeHolder(h)}: one writer per run folder; ` +
          `wait for it to end or stop it${h.pid === process.pid ? '' : ` (kill ${h.pid})`}, then try again`,
      );
    if (removeDead(path, h))
      tookOver = `took over ${path} from ${describeHolder(h)}: that process is gone (killed or crashed)`;
  }
  throw new RunLockedError(`${path}: other trainers kept taking the lock; try again`);
}
