/**
 * The run folder's lock (src/engine/run/lock.ts, docs/RUN_FOLDER.md "writer.lock") on a real file
 * system, against real processes: what the file holds, who is refused (a live process of this host,
 * any process of another host, an empty or broken lock), what is taken over (a dead process's lock),
 * that of processes racing for it exactly one wins, and that process.exit removes it. Child processes
 * run this file with LOCK_CHILD set.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { RunLockedError, takeRunLock } from '../../src/engine/run/lock';
import { scratch } from '../train/helpers';

const child = process.env['LOCK_CHILD'];
if (child) {
  // `race DIR`: take the lock, say whether it was taken, hold it a while; `exit DIR`: take it, then process.exit.
  const [what, dir] = child.split(' ') as [string, string];
  try {
    takeRunLock(dir, `lock.test ${what}`);
    process.stdout.write('took\n');
    if (what === 'exit') process.exit(3);
    setTimeout(() => undefined, 5000);
  } catch (err) {
    process.stdout.write(err instanceof RunLockedError ? 'refused\n' : `error ${(err as Error).message}\n`);
  }
} else {
  const work = scratch('ad-lock-');
  const folder = (name: string): string => {
    const dir = join(work, name);
    mkdirSync(dir, { recursive: true });
    return dir;
  };
  const lockOf = (dir: string): string => join(dir, 'writer.lock');
  const held = (dir: string) => JSON.parse(readFileSync(lockOf(dir), 'utf8'));
  const plant = (dir: string, holder: object): string => {
    const text = `${JSON.stringify({ started: Date.UTC(2026, 0, 2, 3, 4, 5), command: 'train --resume', ...holder })}\n`;
    writeFileSync(lockOf(dir), text);
    return text;
  };
  /** A pid that named a process a moment ago and names none now. */
  const deadPid = (): number => spawnSync(process.execPath, ['-e', '0']).pid!;

  const sleepers: ReturnType<typeof spawn>[] = [];
  after(() => {
    sleepers.forEach((c) => c.kill('SIGKILL'));
    rmSync(work, { recursive: true, force: true });
  });

  test('the lock holds this pid, this host, the start time and the command; release removes it', () => {
    const dir = folder('plain');
    const before = Date.now();
    const lock = takeRunLock(dir, 'train --out plain --resume');
    const h = held(dir);
    assert.deepEqual(Object.keys(h).sort(), ['command', 'host', 'pid', 'started']);
    assert.equal(h.pid, process.pid);
    assert.equal(h.host, hostname());
    assert.equal(h.command, 'train --out plain --resume');
    assert.ok(h.started >= before && h.started <= Date.now(), `started ${h.started}`);
    assert.equal(lock.tookOver, undefined);
    // this process holds it already: a second take is refused
    assert.throws(() => takeRunLock(dir, 'again'), RunLockedError);
    lock.release();
    assert.ok(!existsSync(lockOf(dir)));
    lock.release(); // twice: nothing happens
    takeRunLock(dir, 'after').release();
  });

  test("a live process's lock on this host is refused, naming its pid, host and command, and left as it was", () => {
    const dir = folder('live');
    const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    sleepers.push(sleeper);
    const text = plant(dir, { pid: sleeper.pid, host: hostname() });
    assert.throws(
      () => takeRunLock(dir, 'second'),
      (err: Error) =>
        err instanceof RunLockedError &&
        err.message.includes(`is being trained by pid ${sleeper.pid} on host ${hostname()} (train --resume, since `) &&
        err.message.includes(`2026-01-02T03:04:05.000Z`) &&
        err.message.includes(`kill ${sleeper.pid}`),
    );
    assert.equal(readFileSync(lockOf(dir), 'utf8'), text);
    sleeper.kill('SIGKILL');
  });

  test("a dead process's lock on this host is taken over, and the taker is told whose it was", () => {
    const dir = folder('stale');
    const dead = deadPid();
    plant(dir, { pid: dead, host: hostname() });
    const lock = takeRunLock(dir, 'taker');
    assert.match(lock.tookOver ?? '', new RegExp(`from pid ${dead} on host .* that process is gone`));
    assert.equal(held(dir).pid, process.pid);
    assert.equal(held(dir).command, 'taker');
    lock.release();
  });

  test('a lock from another host is refused, whatever its pid: the host is named, and what to do', () => {
    const dir = folder('remote');
    const text = plant(dir, { pid: deadPid(), host: 'build-7.example.org' });
    assert.throws(
      () => takeRunLock(dir, 'here'),
      (err: Error) =>
        err instanceof RunLockedError &&
        err.message.includes('on host build-7.example.org') &&
        err.message.includes(`if you are sure it does not, delete ${lockOf(dir)} and try again`),
    );
    assert.equal(readFileSync(lockOf(dir), 'utf8'), text);
  });

  test('an empty lock is being taken (refused); an old empty, broken or special lock names no writer', () => {
    const dir = folder('odd');
    writeFileSync(lockOf(dir), '');
    assert.throws(() => takeRunLock(dir, 'x'), /another trainer is taking this run right now/);
    utimesSync(lockOf(dir), new Date(2020, 0, 1), new Date(2020, 0, 1));
    assert.throws(() => takeRunLock(dir, 'x'), /writer\.lock: is empty, so it names no writer; if no trainer/);
    writeFileSync(lockOf(dir), '{"pid": "many"}');
    assert.throws(() => takeRunLock(dir, 'x'), /writer\.lock: is not \{"pid", "host", "started", "command"\}/);
    const link = folder('link');
    symlinkSync('/dev/zero', lockOf(link));
    assert.throws(() => takeRunLock(link, 'x'), /writer\.lock: is not a regular file, so it names no writer/);
    const fifo = folder('fifo');
    assert.equal(spawnSync('mkfifo', [lockOf(fifo)]).status, 0);
    assert.throws(() => takeRunLock(fifo, 'x'), /writer\.lock: is not a regular file/);
  });

  const runChild = (what: string, dir: string) =>
    new Promise<{ out: string; code: number | null }>((resolve) => {
      const c = spawn(process.execPath, [__filename], { env: { ...process.env, LOCK_CHILD: `${what} ${dir}` } });
      let out = '';
      c.stdout.on('data', (d) => (out += d));
      c.stderr.on('data', (d) => (out += d));
      c.on('exit', (code) => resolve({ out: out.trim(), code }));
    });

  test('of six processes that take one lock at once, exactly one gets it', async () => {
    const dir = folder('race');
    const results = await Promise.all(Array.from({ length: 6 }, () => runChild('race', dir)));
    const outs = results.map((r) => r.out).sort();
    assert.deepEqual(outs, ['refused', 'refused', 'refused', 'refused', 'refused', 'took'], outs.join('\n'));
    assert.ok(!existsSync(lockOf(dir)), 'the winner removed it at exit');
  });

  test('process.exit removes the lock (a second Ctrl-C, a command that fails)', async () => {
    const dir = folder('exit');
    const r = await runChild('exit', dir);
    assert.deepEqual([r.out, r.code], ['took', 3]);
    assert.ok(!existsSync(lockOf(dir)));
  });
}
