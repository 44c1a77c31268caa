/**
 * One writer per run folder (issue 27 #3), with real processes: a `train --resume` that trains holds
 * the run against a second `train --resume` and against the extension's engine (`serve`, driven over
 * JSON-RPC as the extension drives it), and the engine training a run holds it against the CLI; each
 * time the refusal names the holder's pid and host, and once the holder ends (SIGTERM, train/stop,
 * Ctrl-C) the lock is gone and the same request works. Readers (decode, check-run) are not
 * blocked meanwhile. A trainer SIGKILLed mid-run leaves its lock; the next resume takes it over, says
 * so, and the run's steps go on from the checkpoint once each. Engine children run this file with
 * ONE_WRITER_ENGINE=1.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import { runServer } from '../../src/engine/server';
import { REPO } from '../helpers';
import { microConfig, scratch } from '../train/helpers';

if (process.env['ONE_WRITER_ENGINE'] === '1') {
  void runServer({ backend: 'wasm' }).then((code) => (process.exitCode = code));
} else {
  const cliJs = join(REPO, 'dist', 'cli.js');
  const children: ChildProcess[] = [];
  after(() => children.forEach((c) => c.kill('SIGKILL')));

  /** A command of the CLI run to its end. */
  const cli = (args: string[], input = '') =>
    spawnSync(process.execPath, [cliJs, ...args], { encoding: 'utf8', cwd: REPO, input, timeout: 60_000 });
  /** `train --resume` of `run` to a total of `steps`, left running. */
  const trainer = (run: string, steps: number) => {
    const child = spawn(
      process.execPath,
      [cliJs, 'train', '--backend', 'wasm', '--out', run, '--resume', '--steps', String(steps)],
      { cwd: REPO, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    children.push(child);
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    const done = new Promise<{ code: number | null; signal: string | null; stderr: string }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal, stderr })),
    );
    return { child, done };
  };
  const engine = () => {
    const child = spawn(process.execPath, [__filename], {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { ...process.env, ONE_WRITER_ENGINE: '1' },
    });
    children.push(child);
    const conn = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
    const ended: { reason: string; step: number }[] = [];
    conn.onNotification('train/ended', (p: { reason: string; step: number }) => ended.push(p));
    conn.listen();
    return { child, conn, ended };
  };
  const until = async (cond: () => boolean, what: string): Promise<void> => {
    const end = Date.now() + 120_000;
    while (!cond()) {
      if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const steps = (run: string): number[] =>
    readFileSync(join(run, 'metrics.jsonl'), 'utf8')
      .split('\n')
      .slice(0, -1) // after the last \n: a line being written
      .map((l) => JSON.parse(l).step);
  const lockOf = (run: string) => join(run, 'writer.lock');
  const lockHolder = (run: string) => JSON.parse(readFileSync(lockOf(run), 'utf8'));
  /** 1, 2, …, n: what one writer at a time leaves in metrics.jsonl. */
  const upTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

  let dir = '';
  let base = ''; // the copy task, 4 steps, checkpoints at 2 and 4
  before(() => {
    dir = scratch('ad-one-writer-');
    base = join(dir, 'base');
    const config = microConfig(dir, { steps: 4, checkpoint_every: 2, snapshot_every: 0 });
    const r = cli(['train', '--backend', 'wasm', '--task', 'copy', '--config', config, '--out', base]);
    assert.equal(r.status, 0, r.stderr);
  });
  const copyOfBase = (name: string): string => {
    const run = join(dir, name);
    cpSync(base, run, { recursive: true });
    return run;
  };

  test('CLI/CLI: a second train --resume is refused naming the first one’s pid and host; readers are not', async () => {
    const run = copyOfBase('cli-cli');
    const first = trainer(run, 100000);
    await until(() => steps(run).length > 4, 'the first resume trains');
    const second = cli(['train', '--backend', 'wasm', '--out', run, '--resume', '--steps', '100000']);
    assert.equal(second.status, 1, second.stderr);
    assert.match(second.stderr, new RegExp(`is being trained by pid ${first.child.pid} on host ${hostname()} \\(`));
    assert.equal(lockHolder(run).pid, first.child.pid);
    // readers go on: decode and check-run of the live run
    const decoded = cli(['decode', '--backend', 'wasm', '--run', run], '4 5 6\n');
    assert.equal(decoded.status, 0, decoded.stderr);
    const checked = cli(['check-run', run]);
    assert.equal(checked.status, 0, checked.stdout);
    first.child.kill('SIGTERM');
    const r = await first.done;
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!existsSync(lockOf(run)), 'SIGTERM: the lock is gone');
    const done = steps(run).length;
    const again = cli(['train', '--backend', 'wasm', '--out', run, '--resume', '--steps', String(done + 2)]);
    assert.equal(again.status, 0, again.stderr);
    assert.deepEqual(steps(run), upTo(done + 2));
    assert.ok(!existsSync(lockOf(run)), 'a normal end: the lock is gone');
  });

  test('CLI/engine: the engine’s train/resume gets an error naming the CLI’s pid; then it resumes', async () => {
    const run = copyOfBase('cli-engine');
    const cliTrainer = trainer(run, 100000);
    await until(() => steps(run).length > 4, 'the CLI trains');
    const e = engine();
    await assert.rejects(
      e.conn.sendRequest('train/resume', { runDir: run, steps: 100000 }),
      (err: Error) =>
        err.message.includes(`is being trained by pid ${cliTrainer.child.pid} on host ${hostname()}`) &&
        err.message.includes('--resume'),
    );
    // Ctrl-C: the CLI stops after its step, with a checkpoint, and its lock goes with it
    cliTrainer.child.kill('SIGINT');
    const r = await cliTrainer.done;
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!existsSync(lockOf(run)));
    const total = Math.max(...steps(run)) + 4;
    await e.conn.sendRequest('train/resume', { runDir: run, steps: total });
    await until(() => e.ended.length === 1, 'the engine ends the run');
    assert.deepEqual(
      e.ended.map((x) => [x.reason, x.step]),
      [['completed', total]],
    );
    assert.deepEqual(steps(run), upTo(total));
    assert.ok(!existsSync(lockOf(run)));
    e.conn.end();
  });

  test('engine/CLI: a CLI resume is refused while the engine trains the run; after train/stop it works', async () => {
    const run = copyOfBase('engine-cli');
    const e = engine();
    await e.conn.sendRequest('train/resume', { runDir: run, steps: 100000 });
    await until(() => steps(run).length > 4, 'the engine trains');
    const refused = cli(['train', '--backend', 'wasm', '--out', run, '--resume', '--steps', '100000']);
    assert.equal(refused.status, 1, refused.stderr);
    assert.match(
      refused.stderr,
      new RegExp(`is being trained by pid ${e.child.pid} on host ${hostname()} \\(serve \\(the extension's engine\\)`),
    );
    assert.equal(lockHolder(run).pid, e.child.pid);
    const stopped = (await e.conn.sendRequest('train/stop')) as { step: number };
    assert.ok(!existsSync(lockOf(run)), 'train/stop: the lock is gone');
    const r = cli(['train', '--backend', 'wasm', '--out', run, '--resume', '--steps', String(stopped.step + 2)]);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(steps(run), upTo(stopped.step + 2));
    e.conn.end();
  });

  test('a trainer SIGKILLed mid-run leaves its lock; the next resume takes it over, says so, and goes on', async () => {
    const run = copyOfBase('killed');
    const killed = trainer(run, 100000);
    await until(() => steps(run).length > 8, 'it trains past a checkpoint');
    killed.child.kill('SIGKILL');
    await killed.done;
    assert.equal(lockHolder(run).pid, killed.child.pid, 'the dead trainer’s lock is there');
    const r = cli(['train', '--backend', 'wasm', '--out', run, '--resume', '--steps', '40']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`warning: took over .*writer\\.lock from pid ${killed.child.pid} on host `));
    assert.match(r.stderr, /that process is gone/);
    assert.deepEqual(steps(run), upTo(40), 'each step once, from the checkpoint on');
    assert.ok(!existsSync(lockOf(run)));
    const checked = cli(['check-run', run]);
    assert.equal(checked.status, 0, checked.stdout);
  });
}
