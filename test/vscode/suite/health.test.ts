/**
 * Health checks as a user meets them (issue 11): a micro run whose learning rate is 100× too high
 * collapses its attention; with entropy_collapse set to break, training pauses with a checkpoint,
 * the notification names the check and the head, Open Head shows that head at that step, the
 * dashboard and the Heads panel mark the finding, and Resume with the check turned off trains on.
 * README's picture of the Heads panel (scripts/pictures.json) is the resumed run's, the finding
 * marked where it paused, with the dashboard, alone in the window in the default dark theme.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AttentionDebuggerApi } from '../../../src/extension/extension';
import { parseHeadId } from '../../../src/protocol/attention';
import type { RunEvent } from '../../../src/protocol/telemetry';
import type { PanelKind } from '../../../src/protocol/webview';
import type { DrawnMsg } from './drawn';
import { activateExtension } from './api';
import { test, waitFor } from './harness';
import { closeTabsBut, inDarkTheme, screenshot } from './screenshot';
import { drawnIn, until } from './runs';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-health-'));
const runDir = path.join(tmp, 'runs', 'reverse-hot');
process.once('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

/** d_model 16, one layer each side, 2 heads; the learning rate 100× the paper's schedule. */
function hotConfig(steps: number): string {
  const file = path.join(tmp, 'hot.json');
  const training = {
    steps,
    warmup: 4,
    lr_factor: 100,
    batch_tokens: 200,
    label_smoothing: 0.1,
    clip_norm: 0,
    seed: 3,
    checkpoint_every: 20,
    eval_every: 20,
    snapshot_every: 5,
    vocab_size: 100,
    max_length: 20,
    bleu_sentences: 0,
    telemetry_pairs: 8,
    checks: { entropy_collapse: 'break', loss_spike: 'off', nonfinite: 'warn', dead_head: 'off' },
  };
  const model = { d_model: 16, heads: 2, d_ff: 32, encoder_layers: 1, decoder_layers: 1, dropout: 0.1 };
  const rest = { norm_first: false, final_norm: false, positional: 'sinusoidal', max_len: 32, share_embeddings: true };
  fs.writeFileSync(file, JSON.stringify({ ...model, ...rest, training }));
  return file;
}

function drawn(api: AttentionDebuggerApi, kind: PanelKind): Promise<DrawnMsg> {
  return drawnIn(api.panels.slots, kind);
}

const readLines = (file: string): unknown[] =>
  fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as unknown);

test('a collapsing run pauses at its breakpoint, shows the head there, and resumes with the check off', async () => {
  const api = await activateExtension();
  const paused = waitFor(api.training.onDidEnd, (e) => e.runDir === runDir, 120_000, 'the breakpoint');
  await vscode.commands.executeCommand('attentionDebugger.train', {
    data: { kind: 'task', task: 'reverse' },
    config: hotConfig(300),
    runDir,
  });
  const end = await paused;
  assert.equal(end.reason, 'paused', `the run ended ${end.reason}`);
  const bp = api.training.lastBreakpoint;
  assert.ok(bp && bp.runDir === runDir, 'the breakpoint is known to the extension');
  assert.equal(bp.check, 'entropy_collapse');
  assert.equal(bp.step, end.step);
  const ref = parseHeadId(bp.head ?? '');
  assert.ok(ref, `the finding names a head: ${bp.head}`);
  await screenshot('breakpoint-notification', api, { keepNotifications: true });
  // On disk: the finding in events.jsonl, the state paused, a checkpoint at the step it paused.
  const events = readLines(path.join(runDir, 'events.jsonl')) as RunEvent[];
  assert.ok(events.some((e) => e.severity === 'breakpoint' && e.step === bp.step && e.head === bp.head));
  const status = JSON.parse(fs.readFileSync(path.join(runDir, 'status.json'), 'utf8')) as { state: string };
  assert.equal(status.state, 'paused');
  assert.ok(
    fs.existsSync(path.join(runDir, 'checkpoints', `step-${bp.step}.safetensors`)),
    `a checkpoint at step ${bp.step}`,
  );

  // Open Head: the run selected at that step, the head in the inspector.
  await vscode.commands.executeCommand('attentionDebugger.openBreakpoint', { runDir, event: bp });
  const deadline = Date.now() + 30_000;
  while (!api.panels.slots.head.current?.isReady) {
    assert.ok(Date.now() < deadline, 'the inspector opened');
    await new Promise((r) => setTimeout(r, 50));
  }
  const head = await drawn(api, 'head');
  assert.deepEqual(head.head, ref);
  assert.equal(head.run, 'reverse-hot');
  assert.equal(head.step, bp.step, 'the inspector shows the step the run paused at');
  const dashboard = await drawn(api, 'dashboard');
  assert.ok(dashboard.marks.includes(`entropy_collapse@${bp.step}`), `dashboard marks ${dashboard.marks}`);

  await vscode.commands.executeCommand('attentionDebugger.openHeads');
  while (!api.panels.slots.heads.current?.isReady) await new Promise((r) => setTimeout(r, 50));
  const heads = await drawn(api, 'heads');
  const rows = readLines(path.join(runDir, 'telemetry.jsonl'));
  assert.equal(heads.frames, rows.length, 'one column per telemetry row on disk');
  assert.equal(heads.maps[0]?.shape[0], 6, 'one row per head: 2 encoder, 2 decoder self, 2 cross');
  assert.ok(heads.marks.includes(`entropy_collapse@${bp.step}`), `heads marks ${heads.marks}`);
  await screenshot('breakpoint-heads', api);

  // Resume with the check off: the run goes on to its last step.
  const done = waitFor(api.training.onDidEnd, (e) => e.runDir === runDir, 180_000, 'the resumed run');
  await vscode.commands.executeCommand('attentionDebugger.resume', { runDir, checks: { entropy_collapse: 'off' } });
  const finished = await done;
  assert.equal(finished.reason, 'completed');
  assert.equal(finished.step, 300);
  const after = readLines(path.join(runDir, 'events.jsonl')) as RunEvent[];
  assert.ok(
    after.every((e) => e.check !== 'entropy_collapse' || e.step <= bp.step),
    'no entropy_collapse after the check was turned off',
  );
  await vscode.commands.executeCommand('attentionDebugger.openHeads');
  await until('the Heads panel', () => api.panels.slots.heads.current?.isReady === true, 30_000);
  await closeTabsBut('Training Dashboard', 'Heads');
  api.panels.slots.heads.current!.panel.reveal(vscode.ViewColumn.Two); // beside the dashboard, as Open Heads puts it
  await until('the dashboard beside it', () => vscode.window.tabGroups.all.length === 2, 10_000);
  const resumed = await drawn(api, 'heads');
  assert.ok(resumed.marks.includes(`entropy_collapse@${bp.step}`), `heads marks ${resumed.marks}`);
  await inDarkTheme(() => screenshot('heads-breakpoint', api));
}, 360_000);
