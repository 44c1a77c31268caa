/**
 * Issue 12: a SIGKILL that lands inside a write. The engine (`serve`, a real child process on stdio:
 * this file run with ENGINE_SERVER_CHILD=1 and `--slow-write <ms>`, a test-only entry that sets the
 * hook of io/atomicFile.ts before it starts the server) stops every atomic write halfway through its
 * temp file; the test kills it there, twice:
 *   1. training, inside checkpoints/step-20's write (step 10 complete): a torn temp in checkpoints/;
 *   2. resuming with a raised step budget, inside config.json's rewrite: a torn temp in the run root.
 * Each next resume removes the dead engine's temp files, goes on from step 10 (whose files never
 * change), and the run ends with every step logged once, in order.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import { pauseWritesHalfway } from '../../src/engine/io/atomicFile';
import { runServer } from '../../src/engine/server';
import type { RunSummary } from '../../src/protocol/training';
import { microConfig, scratch } from '../train/helpers';

if (process.env['ENGINE_SERVER_CHILD'] === '1') {
  const slow = process.argv.indexOf('--slow-write');
  if (slow >= 0) pauseWritesHalfway(Number(process.argv[slow + 1]));
  void runServer({ backend: 'wasm' }).then((code) => (process.exitCode = code));
} else {
  const engines: ChildProcess[] = [];
  after(() => engines.forEach((c) => c.kill('SIGKILL')));
  /** An engine; `slowWriteMs` sets the test hook (docs: test/README.md). */
  const start = (slowWriteMs?: number) => {
    const env: NodeJS.ProcessEnv = { ...process.env, ENGINE_SERVER_CHILD: '1' };
    const args = slowWriteMs ? ['--slow-write', String(slowWriteMs)] : [];
    const child = spawn(process.execPath, [__filename, ...args], { stdio: ['pipe', 'pipe', 'inherit'], env });
    const conn = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
    const ended: { reason: string; step: number }[] = [];
    conn.onNotification('train/ended', (p: { reason: string; step: number }) => ended.push(p));
    conn.onError(() => undefined); // the killed engine's pipe breaks
    conn.listen();
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, signal) => resolve(signal)),
    );
    engines.push(child);
    /** SIGKILL, then the signal it died of. */
    const kill = async (): Promise<NodeJS.Signals | null> => {
      child.kill('SIGKILL');
      const signal = await exited;
      conn.dispose();
      return signal;
    };
    return { conn, ended, exited, kill, pid: child.pid! };
  };
  const until = async (cond: () => boolean): Promise<void> => {
    const end = Date.now() + 120_000;
    while (!cond()) {
      if (Date.now() > end) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  const temps = (dir: string): string[] =>
    existsSync(dir) ? readdirSync(dir).filter((f) => /\.tmp-\d+-\d+$/.test(f)) : [];
  const sha = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');
  const loggedSteps = (run: string): number[] =>
    readFileSync(join(run, 'metrics.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { step: number }).step);
  const range = (a: number, b: number): number[] => Array.from({ length: b - a + 1 }, (_, i) => a + i);

  test('an engine killed inside a checkpoint write and inside a config.json write: each resume removes the torn temp files and goes on from the newest whole checkpoint', async () => {
    const dir = scratch('ad-kill-write-');
    const run = join(dir, 'run');
    const ckpts = join(run, 'checkpoints');
    const config = microConfig(dir, { steps: 30, checkpoint_every: 10, eval_every: 10, snapshot_every: 0 });

    // 1. Killed halfway through step 20's optimizer file, with step 10 whole.
    const a = start(1000);
    await a.conn.sendRequest('train/start', { runDir: run, data: { kind: 'task', task: 'copy' }, config });
    await until(() => existsSync(join(ckpts, 'step-10.safetensors')));
    const step10 = ['step-10.safetensors', 'step-10.optim.safetensors'];
    const hashes = step10.map((f) => sha(join(ckpts, f)));
    await until(() => temps(ckpts).length > 0);
    assert.equal(await a.kill(), 'SIGKILL');
    const torn = temps(ckpts);
    assert.equal(torn.length, 1);
    assert.match(torn[0]!, new RegExp(`^step-20\\.optim\\.safetensors\\.tmp-${a.pid}-\\d+$`));
    const size = (d: string, f: string) => statSync(join(d, f)).size;
    assert.ok(size(ckpts, torn[0]!) < size(ckpts, 'step-10.optim.safetensors'), 'the temp file is half written');
    assert.ok(!existsSync(join(ckpts, 'step-20.optim.safetensors')), 'step 20 never committed');
    assert.deepEqual(temps(run), [], 'nothing torn in the root yet');
    assert.deepEqual(loggedSteps(run), range(1, 20));
    const configBefore = readFileSync(join(run, 'config.json'), 'utf8');

    // 2. Resumed for 40 steps and killed halfway through the rewrite of config.json (steps 30 → 40).
    // (its reply comes after the writes of the resume, so the test does not wait for it)
    const b = start(1000);
    void b.conn.sendRequest('train/resume', { runDir: run, steps: 40 }).catch(() => undefined);
    await until(() => temps(run).some((f) => f.startsWith('config.json.')));
    assert.equal(await b.kill(), 'SIGKILL');
    const rootTorn = temps(run);
    assert.equal(rootTorn.length, 1);
    assert.match(rootTorn[0]!, new RegExp(`^config\\.json\\.tmp-${b.pid}-\\d+$`));
    assert.equal(
      readFileSync(join(run, 'config.json'), 'utf8'),
      configBefore,
      'config.json still whole, still 30 steps',
    );
    assert.deepEqual(temps(ckpts), [], "the first engine's torn checkpoint is gone");
    assert.deepEqual(
      loggedSteps(run),
      range(1, 10),
      'the steps past the checkpoint are dropped before they are redone',
    );

    // 3. Resumed again without the hook: the root's torn config.json is gone; the run completes.
    const c = start();
    const resumedC = (await c.conn.sendRequest('train/resume', { runDir: run, steps: 40 })) as RunSummary;
    assert.equal(resumedC.step, 10, 'from the newest whole checkpoint');
    assert.deepEqual(temps(run), [], "the second engine's torn config.json is gone");
    await until(() => c.ended.length === 1);
    assert.deepEqual(c.ended[0], { runDir: run, step: 40, reason: 'completed' });
    c.conn.end();
    assert.equal(await c.exited, null);
    assert.deepEqual(
      step10.map((f) => sha(join(ckpts, f))),
      hashes,
      'step 10 unchanged through both kills and resumes',
    );
    assert.deepEqual(loggedSteps(run), range(1, 40), 'every step once, in order');
    for (const d of [run, ckpts, join(run, 'snapshots')]) assert.deepEqual(temps(d), [], d);
    const written = JSON.parse(readFileSync(join(run, 'config.json'), 'utf8')) as { training: { steps: number } };
    assert.equal(written.training.steps, 40);
  });
}
