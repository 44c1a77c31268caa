/**
 * One writer per run folder (issue 27, item 3): rows of bad input for malformed.test.ts, in the form malformed-plants.ts describes.
 *
 * A resume is refused while RUN/writer.lock names a writer that may live (a live process of this
 * host: this test's own; any process of another host), or names none (empty: being taken; a FIFO;
 * not JSON), and the lock is left as it was; a resume that fails after taking the lock leaves none
 * behind (the folder is byte-identical after every row).
 */
import { hostname } from 'node:os';
import { fifo } from './hostile-files';
import { CKPT, type MalformedCase, poison, resume } from './malformed-plants';

/** A lock file's text (docs/RUN_FOLDER.md, writer.lock), taken on 2 January 2026 at 03:04:05 UTC. */
const lock = (pid: number, host: string): string =>
  `${JSON.stringify({ pid, host, started: Date.UTC(2026, 0, 2, 3, 4, 5), command: 'train --out run --resume' })}\n`;

export const ONE_WRITER: MalformedCase[] = [
  {
    name: 'a resume while a live process of this host holds the run (this test)',
    issue: 27,
    item: 3,
    run: true,
    files: { 'run/writer.lock': lock(process.pid, hostname()) },
    args: resume('--steps', '8'),
    code: 1,
    error:
      `{case}/run is being trained by pid ${process.pid} on host ${hostname()} ` +
      `(train --out run --resume, since 2026-01-02T03:04:05.000Z): one writer per run folder`,
  },
  {
    name: 'a resume while a process of another host holds the run (alive or not: this host cannot tell)',
    issue: 27,
    item: 3,
    run: true,
    files: { 'run/writer.lock': lock(1, 'build-7.example.org') },
    args: resume('--steps', '8'),
    code: 1,
    error:
      '{case}/run is locked by pid 1 on host build-7.example.org (train --out run --resume, since ' +
      '2026-01-02T03:04:05.000Z): another host, so this one cannot tell whether that trainer still runs; ' +
      'if you are sure it does not, delete {case}/run/writer.lock and try again',
  },
  {
    name: 'a resume while another trainer is taking the run (an empty lock, just created)',
    issue: 27,
    item: 3,
    run: true,
    files: { 'run/writer.lock': '' },
    args: resume('--steps', '8'),
    code: 1,
    error: '{case}/run: another trainer is taking this run right now ({case}/run/writer.lock)',
  },
  {
    name: 'a lock that is a FIFO names no writer (and is not opened)',
    issue: 27,
    item: 3,
    run: true,
    files: { 'run/writer.lock': fifo },
    args: resume('--steps', '8'),
    code: 1,
    error:
      '{case}/run/writer.lock: is not a regular file, so it names no writer; if no trainer writes this run, delete it',
  },
  {
    name: 'a lock that is not JSON names no writer',
    issue: 27,
    item: 3,
    run: true,
    files: { 'run/writer.lock': 'locked by Bob\n' },
    args: resume('--steps', '8'),
    code: 1,
    error: '{case}/run/writer.lock: is not JSON, so it names no writer',
  },
  {
    name: 'a resume that fails after taking the lock (NaN in its checkpoint) leaves no lock behind',
    issue: 27,
    item: 3,
    run: true,
    files: { [CKPT]: poison('decoder.layers.0.norm3.weight') },
    args: resume('--steps', '8'),
    code: 1,
    error: `{case}/${CKPT}: tensor "decoder.layers.0.norm3.weight" holds NaN at index 0`,
  },
];
