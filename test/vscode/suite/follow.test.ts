/**
 * A run trained elsewhere, followed live: the README's PyTorch example under torchrun (two CPU
 * processes, gloo) writes a run folder while Follow Run Folder shows it. Metrics reach the
 * dashboard while the script runs, then snapshots, then a checkpoint; the headers say the run is
 * written live and then finished; the Heads panel gets rows computed from the snapshots; the
 * engine computes attention for an input at the run's checkpoint.
 */
import * as assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { activateExtension } from './api';
import { test } from './harness';
import { drawnIn, until } from './runs';
import { screenshot } from './screenshot';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-follow-'));
const runDir = path.join(tmp, 'torch-reverse');
process.once('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

/** Debian's torchrun (python3 -m torch.distributed.run; its --redirects/--tee cannot be "0" there). */
function torchrun(repo: string, steps: number): ChildProcess {
  const args = ['-m', 'torch.distributed.run', '--standalone', '--nproc_per_node', '2', '--redirects', '2'];
  const script = path.join(repo, 'python', 'examples', 'train_reverse.py');
  const logs = path.join(tmp, 'torchrun-logs');
  return spawn(
    '/usr/bin/python3',
    [...args, '--tee', '2', '--log_dir', logs, script, '--out', runDir, '--steps', `${steps}`],
    {
      env: { ...process.env, PYTHONPATH: path.join(repo, 'python'), OMP_NUM_THREADS: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
}

test('Follow Run Folder shows a torchrun job live: metrics, then snapshots, then a checkpoint, then finished', async () => {
  const api = await activateExtension();
  const repo = vscode.extensions.getExtension('attention-debugger.attention-debugger')!.extensionPath;
  const child = torchrun(repo, 300);
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let done = false;
  void exited.then(() => (done = true));
  const seen: Record<string, boolean> = {};
  try {
    await until('the trainer’s config.json', () => fs.existsSync(path.join(runDir, 'config.json')) || done, 120_000);
    assert.ok(!done, `the trainer ended before writing its folder:\n${output}`);
    await vscode.commands.executeCommand('attentionDebugger.followRun', { runDir });
    const store = api.panels.store;
    await until('metrics in the dashboard', () => store.rows.length > 0 || done, 120_000);
    seen['metrics'] = !done;
    await until('a snapshot', () => store.snapshots.length > 0 || done, 120_000);
    seen['snapshots'] = !done;
    await until('a checkpoint', () => (api.viewer.run?.checkpoints.length ?? 0) > 0 || done, 120_000);
    seen['checkpoint'] = !done;
    const live = await drawnIn(api.panels.slots, 'dashboard');
    assert.deepEqual([live.run, live.activity], ['torch-reverse', done ? 'finished' : 'live']);
    await screenshot('follow-torchrun-live', api);
  } finally {
    if (!done) await exited;
  }
  assert.equal(await exited, 0, output);
  assert.deepEqual(seen, { metrics: true, snapshots: true, checkpoint: true }, 'each arrived while the script ran');
  const store = api.panels.store;
  await until('every step', () => store.rows.length === 300, 30_000);
  assert.deepEqual(
    store.rows.map((r) => r.step),
    Array.from({ length: 300 }, (_, i) => i + 1),
    'each step once, in order: no torn or repeated line',
  );
  await until('finished', () => api.viewer.header().activity === 'finished', 30_000);
  assert.equal((await drawnIn(api.panels.slots, 'dashboard')).activity, 'finished');
  assert.deepEqual(api.viewer.run?.checkpoints, [50, 100, 150, 200, 250, 300]);
  // The Heads panel's rows, computed from the snapshots (every 25 steps) the writer left.
  assert.deepEqual(
    store.telemetry.map((t) => t.step),
    Array.from({ length: 12 }, (_, i) => 25 * (i + 1)),
  );
  // Attention for an input at its newest checkpoint, computed by the engine.
  api.panels.host.request('attention', { type: 'inspectInput', v: 3, input: { kind: 'ids', src: [4, 5, 6] } });
  await until('its attention', () => store.attention?.source.input === 'input', 60_000);
  assert.equal(store.attention!.source.step, 300);
  assert.deepEqual(store.attention!.srcTokens, ['4', '5', '6', '</s>']);
  await screenshot('follow-torchrun-finished', api);
}, 420_000);
