import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { engineInfo } from '../../../src/protocol/methods';
import { activateExtension } from './api';
import { test, waitFor } from './harness';
import { microConfig } from './runs';
import { answer } from './ui';

test('a killed engine is reported, restarted, and answers the next request', async () => {
  const { engine } = await activateExtension();
  const before = engine.pid;
  assert.ok(before, 'engine running before the kill');
  const exited = waitFor(engine.onDidExit, (e) => e.pid === before, 10_000, `exit of engine ${before}`);
  const started = waitFor(engine.onDidStart, (pid) => pid !== before, 15_000, 'a new engine process');
  process.kill(before, 'SIGKILL');
  const exit = await exited;
  assert.equal(exit.signal, 'SIGKILL');
  assert.ok(exit.restartInMs !== undefined, 'the client schedules a restart');
  const after = await started;
  assert.notEqual(after, before);
  assert.equal(engine.pid, after);
  const info = await engine.request(engineInfo);
  assert.ok(info.backend.length > 0, 'the restarted engine names its backend');
  assert.throws(() => process.kill(before, 0), 'the killed engine is gone');
}, 120_000);

test('a request sent while the engine is down waits for the restart', async () => {
  const { engine } = await activateExtension();
  const before = engine.pid!;
  const exited = waitFor(engine.onDidExit, (e) => e.pid === before, 10_000, `exit of engine ${before}`);
  process.kill(before, 'SIGKILL');
  await exited;
  assert.equal(engine.pid, undefined, 'no engine between exit and restart');
  const info = await engine.request(engineInfo);
  assert.ok(info.backend.length > 0);
  assert.notEqual(engine.pid, before);
}, 120_000);

test('the backend setting reaches the engine (serve --backend) at its next start', async () => {
  const { engine } = await activateExtension();
  const config = vscode.workspace.getConfiguration('attentionDebugger');
  await config.update('backend', 'cpu', vscode.ConfigurationTarget.Global);
  try {
    await engine.restart();
    const info = await engine.request(engineInfo);
    assert.equal(info.backend, 'cpu');
  } finally {
    await config.update('backend', undefined, vscode.ConfigurationTarget.Global);
    await engine.restart();
  }
  const info = await engine.request(engineInfo);
  assert.notEqual(info.backend, 'cpu', 'auto picks a faster backend than cpu again');
}, 120_000);

test('an engine that keeps crashing is restarted after 0.25, 1 and 4 s, with one warning for the series', async () => {
  const { engine } = await activateExtension();
  await engine.restart(); // a fresh series
  await engine.request(engineInfo);
  const ui = answer(() => undefined);
  const delays: (number | undefined)[] = [];
  const gaps: number[] = [];
  try {
    for (let i = 0; i < 3; i++) {
      const pid = engine.pid!;
      const exited = waitFor(engine.onDidExit, (e) => e.pid === pid, 10_000, `exit of engine ${pid}`);
      const started = waitFor(engine.onDidStart, (p) => p !== pid, 30_000, 'the next engine');
      process.kill(pid, 'SIGKILL');
      const t0 = Date.now();
      delays.push((await exited).restartInMs);
      await started;
      gaps.push(Date.now() - t0);
    }
  } finally {
    ui.restore();
  }
  // The documented back-off (docs/ARCHITECTURE.md), written out: 250 ms, 1 s, 4 s, 15 s, then 30 s.
  assert.deepEqual(delays, [250, 1000, 4000]);
  gaps.forEach((g, i) => assert.ok(g >= delays[i]!, `restart ${i + 1} came after ${g} ms, before its ${delays[i]} ms`));
  const warnings = ui.asked.filter((a) => a.fn === 'showWarningMessage');
  assert.equal(warnings.length, 1, `warnings: ${warnings.map((w) => w.text).join(' | ')}`);
  assert.match(warnings[0]!.text, /the engine exited \(signal SIGKILL\) and is being restarted/);
  await engine.restart(); // leave a fresh series for the tests after this one
}, 60_000);

test('two Trains at once: one run starts, the other is refused before it reaches the engine', async () => {
  const api = await activateExtension();
  await api.engine.restart(); // the backend loads again: the window in which both once started
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-twice-'));
  const config = microConfig(tmp, 5000);
  const train = (name: string) =>
    vscode.commands.executeCommand<{ runDir: string } | undefined>('attentionDebugger.train', {
      data: { kind: 'task', task: 'copy' },
      config,
      runDir: path.join(tmp, name),
      openPanels: false,
    });
  const ui = answer(() => undefined);
  let results: ({ runDir: string } | undefined)[];
  try {
    results = await Promise.all([train('a'), train('b')]);
  } finally {
    ui.restore();
  }
  const started = results.filter((r) => r !== undefined);
  assert.equal(started.length, 1, 'exactly one starts');
  assert.equal(api.training.runDir, started[0]!.runDir);
  const refused = ui.asked.find((a) => a.fn === 'showErrorMessage');
  assert.match(refused?.text ?? '', /a run is already training/);
  const ended = waitFor(api.training.onDidEnd, (e) => e.runDir === started[0]!.runDir, 60_000, 'the stop');
  await vscode.commands.executeCommand('attentionDebugger.stop', { confirm: false });
  assert.equal((await ended).reason, 'stopped');
  fs.rmSync(tmp, { recursive: true, force: true });
}, 90_000);
