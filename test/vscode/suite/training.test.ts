/**
 * Training, decoding and the panels through the extension's commands, in the real VS Code with the
 * real engine. Every command gets its choices as an argument, so no UI is needed. A micro model
 * (d_model 16, 1+1 layers) on the copy task keeps each run to seconds.
 * The tests run in order and share the first run folder.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { MetricRow } from '../../../src/protocol/metrics';
import { SNAPSHOT_FILE } from '../../../src/protocol/runFolder';
import { activateExtension } from './api';
import { test, waitFor } from './harness';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-ext-'));
const runsDir = path.join(tmp, 'runs');
const run1 = path.join(runsDir, 'copy-micro');
const run2 = path.join(runsDir, 'copy-micro-crash');
process.once('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

/** The micro config of the brief: checkpoints and snapshots every 5 steps. */
function microConfig(steps: number): string {
  const file = path.join(tmp, `micro-${steps}.json`);
  fs.writeFileSync(
    file,
    JSON.stringify({
      d_model: 16,
      heads: 2,
      d_ff: 32,
      encoder_layers: 1,
      decoder_layers: 1,
      dropout: 0.1,
      norm_first: false,
      final_norm: false,
      positional: 'sinusoidal',
      max_len: 32,
      share_embeddings: true,
      training: {
        steps,
        warmup: 4,
        lr_factor: 1,
        batch_tokens: 200,
        label_smoothing: 0.1,
        clip_norm: 0,
        seed: 3,
        checkpoint_every: 5,
        eval_every: 10,
        snapshot_every: 5,
        vocab_size: 100,
        max_length: 20,
        bleu_sentences: 0,
      },
    }),
  );
  return file;
}

/** Steps of the checkpoints on disk (an independent view of what the engine wrote). */
function checkpointSteps(runDir: string): number[] {
  const dir = path.join(runDir, 'checkpoints');
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .map((f) => /^step-(\d+)\.safetensors$/.exec(f))
    .filter((m) => m)
    .map((m) => Number(m![1]))
    .sort((a, b) => a - b);
}

function metricsSteps(runDir: string): number[] {
  return fs
    .readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { step: number }).step);
}

async function until(what: string, cond: () => boolean, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('Train streams metrics and snapshots to the extension, the status and the panels', async () => {
  const api = await activateExtension();
  const config = microConfig(2000);
  const firstRows = waitFor(api.training.onDidMetrics, (e) => e.runDir === run1, 90_000, 'train/metrics of the run');
  const summary = await vscode.commands.executeCommand<
    { runDir: string; totalSteps: number; dModel: number; heads: number } | undefined
  >('attentionDebugger.train', {
    data: { kind: 'task', task: 'copy' },
    config,
    runDir: run1,
  });
  assert.ok(summary, 'Train returned no summary (see the output)');
  assert.equal(summary.runDir, run1);
  assert.equal(summary.totalSteps, 2000);
  assert.equal(summary.dModel, 16);
  assert.equal(summary.heads, 2);
  assert.equal(api.training.training, true, 'a run trains');
  const { rows } = await firstRows;
  assert.ok(rows.length > 0);
  for (const r of rows) {
    assert.ok(Number.isFinite(r.loss) && r.loss > 0, `loss ${r.loss} at step ${r.step}`);
    // Eq. 3 with d_model 16, warmup 4, factor 1, written out here: lr = 16^-0.5 · min(s^-0.5, s · 4^-1.5).
    const want = 16 ** -0.5 * Math.min(r.step ** -0.5, r.step * 4 ** -1.5);
    assert.ok(Math.abs(r.lr - want) <= 1e-6 * want + 1e-9, `lr ${r.lr} at step ${r.step}, eq. 3 gives ${want}`);
  }
  await until('a probe snapshot', () => api.training.lastSnapshot !== undefined);
  assert.ok(api.panels.store.attention, 'the snapshot reached the attention view');
  assert.deepEqual(api.openPanels().sort(), ['attention', 'dashboard']);
  await until('10 steps', () => (api.training.lastRow?.step ?? 0) >= 10);
  const steps = api.panels.store.rows.map((r: MetricRow) => r.step);
  assert.deepEqual(
    steps,
    [...steps].sort((a, b) => a - b),
    'dashboard rows in step order',
  );
  const fields = Object.fromEntries(api.currentRun.fields().map((f) => [f.label, f.value]));
  assert.equal(fields['Run'], 'copy-micro');
  assert.equal(fields['State'], 'training');
  assert.match(fields['Step'] ?? '', /^\d+ \/ 2000$/);
}, 150_000);

test('Stop ends the run after a checkpoint of the step it stopped at', async () => {
  const api = await activateExtension();
  const ended = waitFor(api.training.onDidEnd, (e) => e.runDir === run1, 60_000, 'train/ended');
  const result = await vscode.commands.executeCommand<{ step: number; runDir: string } | null>(
    'attentionDebugger.stop',
    { confirm: false },
  );
  assert.ok(result, 'Stop answered null while a run trained');
  assert.equal(result.runDir, run1);
  const end = await ended;
  assert.equal(end.reason, 'stopped');
  assert.equal(api.training.training, false);
  assert.ok(
    checkpointSteps(run1).includes(result.step),
    `checkpoint of step ${result.step} on disk (have ${checkpointSteps(run1).join(', ')})`,
  );
  assert.equal(Math.max(...metricsSteps(run1)), result.step, 'metrics.jsonl ends at the stop step');
}, 90_000);

test('Decode a sentence returns a translation and every attention map, rows summing to 1', async () => {
  const api = await activateExtension();
  const vocab = fs.readFileSync(path.join(run1, 'vocab.json'), 'utf8');
  assert.ok(vocab.length > 0);
  const result = await vscode.commands.executeCommand<
    | {
        text: string;
        payload: {
          srcTokens: string[];
          tgtTokens: string[];
          maps: { kind: string; shape: number[]; weights: Float32Array }[];
        };
      }
    | undefined
  >('attentionDebugger.decode', { runDir: run1, text: '5 6 7 8 9' });
  assert.ok(result, 'Decode returned nothing (see the output)');
  assert.equal(typeof result.text, 'string');
  const kinds = result.payload.maps.map((m) => m.kind).sort();
  assert.deepEqual(kinds, ['cross', 'decoder_self', 'encoder_self']);
  for (const m of result.payload.maps) {
    const [layers, heads, q, k] = m.shape;
    assert.equal(layers, 1);
    assert.equal(heads, 2);
    for (let row = 0; row < layers * heads * q; row++) {
      let sum = 0;
      for (let j = 0; j < k; j++) sum += m.weights[row * k + j];
      assert.ok(Math.abs(sum - 1) < 1e-4, `${m.kind} row ${row} sums to ${sum}`);
    }
    if (m.kind === 'decoder_self') {
      // Causal mask: query i never sees key j > i.
      for (let i = 0; i < q; i++)
        for (let j = i + 1; j < k; j++) assert.equal(m.weights[i * k + j], 0, `decoder_self [${i}, ${j}]`);
    }
  }
  assert.ok(api.openPanels().includes('attention'));
  assert.equal(
    api.panels.store.attention?.tgtTokens.length,
    result.payload.tgtTokens.length,
    'the attention view shows the decode',
  );
}, 90_000);

test('Positional Encoding shows the sinusoid of the run (d_model 16)', async () => {
  const api = await activateExtension();
  const r = await vscode.commands.executeCommand<{ shape: [number, number]; learned: boolean } | undefined>(
    'attentionDebugger.showPositional',
    { runDir: run1 },
  );
  assert.ok(r);
  assert.equal(r.learned, false);
  assert.equal(r.shape[1], 16);
  const pe = api.panels.store.positional!;
  // PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(…) (§3.5), worked here.
  for (const [pos, i] of [
    [0, 0],
    [1, 0],
    [3, 2],
    [7, 5],
  ]) {
    const angle = pos / 10000 ** ((2 * i) / 16);
    assert.ok(Math.abs(pe.values[pos * 16 + 2 * i] - Math.sin(angle)) < 1e-5, `PE(${pos}, ${2 * i})`);
    assert.ok(Math.abs(pe.values[pos * 16 + 2 * i + 1] - Math.cos(angle)) < 1e-5, `PE(${pos}, ${2 * i + 1})`);
  }
  assert.ok(api.openPanels().includes('positional'));
}, 60_000);

test('Inspect Head opens the inspector with the run’s snapshots', async () => {
  const api = await activateExtension();
  const r = await vscode.commands.executeCommand<
    { head: { kind: string; layer: number; head: number }; snapshots: number } | undefined
  >('attentionDebugger.inspectHead', { runDir: run1, kind: 'cross', layer: 0, head: 1 });
  assert.ok(r, 'Inspect Head returned nothing (see the output)');
  assert.deepEqual(r.head, { kind: 'cross', layer: 0, head: 1 });
  const onDisk = fs.readdirSync(path.join(run1, 'snapshots')).filter((f) => SNAPSHOT_FILE.test(f)).length;
  assert.equal(r.snapshots, onDisk, 'one snapshot per file in snapshots/');
  assert.ok(onDisk >= 2);
  assert.ok(api.openPanels().includes('head'));
}, 60_000);

test('Open Run fills the dashboard with metrics.jsonl and the schedule; Export writes it as JSON', async () => {
  const api = await activateExtension();
  await vscode.commands.executeCommand('attentionDebugger.openDashboard');
  const opened = await vscode.commands.executeCommand<{ summary: { runDir: string }; rows: MetricRow[] } | undefined>(
    'attentionDebugger.openRun',
    { runDir: run1 },
  );
  assert.ok(opened);
  assert.deepEqual(
    opened.rows.map((r) => r.step),
    metricsSteps(run1),
  );
  assert.deepEqual(
    api.panels.store.rows.map((r: MetricRow) => r.step),
    metricsSteps(run1),
  );
  assert.equal(api.panels.store.schedule?.warmupSteps, 4);
  assert.equal(api.panels.store.schedule?.totalSteps, 2000);
  const file = path.join(tmp, 'dashboard.json');
  const written = await vscode.commands.executeCommand<string | undefined>('attentionDebugger.exportView', {
    panel: 'dashboard',
    format: 'json',
    path: file,
  });
  assert.equal(written, file);
  const json = JSON.parse(fs.readFileSync(file, 'utf8')) as { rows: MetricRow[]; schedule: { dModel: number } };
  assert.deepEqual(
    json.rows.map((r) => r.step),
    metricsSteps(run1),
  );
  assert.equal(json.schedule.dModel, 16);
  // Exported right after Open Run sent the rows: the webview draws them before making the image.
  // (Hiding the dashboard first was tried here: under VS Code's server in headless Chromium a
  // re-shown webview sometimes never loads, in 3 of 5 fresh-clone runs; see the issue note.)
  const svg = path.join(tmp, 'dashboard.svg');
  assert.equal(
    await vscode.commands.executeCommand<string | undefined>('attentionDebugger.exportView', {
      panel: 'dashboard',
      format: 'svg',
      path: svg,
    }),
    svg,
  );
  const svgText = fs.readFileSync(svg, 'utf8');
  assert.match(svgText.slice(0, 300), /<svg/);
  const lossSeries = opened.rows.some((r) => r.valLoss !== undefined) ? 2 : 1; // train, and validation if logged
  assert.equal(
    svgText.match(/class="trace scatter/g)?.length,
    lossSeries,
    'the loss chart with its series, drawn by the webview',
  );
  const png = path.join(tmp, 'dashboard.png');
  assert.equal(
    await vscode.commands.executeCommand<string | undefined>('attentionDebugger.exportView', {
      panel: 'dashboard',
      format: 'png',
      path: png,
    }),
    png,
  );
  assert.deepEqual(
    [...fs.readFileSync(png).subarray(0, 8)],
    [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
    'a PNG file, drawn by the webview',
  );
  const headFile = path.join(tmp, 'head.json');
  await vscode.commands.executeCommand('attentionDebugger.exportView', {
    panel: 'head',
    format: 'json',
    path: headFile,
  });
  const head = JSON.parse(fs.readFileSync(headFile, 'utf8')) as { kind: string; weights: number[][] };
  assert.equal(head.kind, 'cross');
  assert.ok(head.weights.length > 0);
}, 60_000);

test('the Runs view lists run folders with their checkpoints', async () => {
  const api = await activateExtension();
  await vscode.workspace
    .getConfiguration('attentionDebugger')
    .update('runFolder', runsDir, vscode.ConfigurationTarget.Global);
  try {
    const runs = api.runs.getChildren();
    const node = runs.find((n) => n.kind === 'run' && n.dir === run1);
    assert.ok(node, `run1 listed (got ${JSON.stringify(runs)})`);
    const children = api.runs.getChildren(node).map((c) => (c.kind === 'checkpoint' ? c.step : -1));
    assert.deepEqual(
      [...children].sort((a, b) => a - b),
      checkpointSteps(run1),
    );
    // A click on a run row expands it (no command) and selects the run.
    assert.equal(api.runs.getTreeItem(node).command, undefined);
    await vscode.commands.executeCommand('workbench.view.extension.attentionDebugger');
    await vscode.commands.executeCommand('attentionDebugger.openDashboard'); // another run is selected first
    const other = path.join(runsDir, 'copy-micro-copy');
    fs.cpSync(run1, other, { recursive: true });
    await vscode.commands.executeCommand('attentionDebugger.openRun', { runDir: other });
    assert.equal(api.viewer.selection?.runDir, other);
    const selected = waitFor(api.viewer.onDidChange, (s) => s.runDir === run1, 20_000, 'the run selected');
    await api.runsView.reveal(node, { select: true, focus: true });
    await selected;
    // A click on a checkpoint shows the probe's attention at that step.
    const ckpt = api.runs.getChildren(node).find((c) => c.kind === 'checkpoint' && c.step === 5)!;
    const click = api.runs.getTreeItem(ckpt).command!;
    const shown = await vscode.commands.executeCommand<{ source: { step: number } } | undefined>(
      click.command,
      ...(click.arguments ?? []),
    );
    assert.equal(shown?.source.step, 5);
    assert.equal(api.panels.store.attention?.source.step, 5);
    assert.equal(api.viewer.selection?.step, 5, 'the checkpoint click selects its step');
  } finally {
    await vscode.workspace
      .getConfiguration('attentionDebugger')
      .update('runFolder', undefined, vscode.ConfigurationTarget.Global);
  }
}, 30_000);

test('an engine killed mid-training is reported, restarted, and the run resumes from its checkpoint', async () => {
  const api = await activateExtension();
  await vscode.commands.executeCommand('attentionDebugger.train', {
    data: { kind: 'task', task: 'copy' },
    config: microConfig(2000),
    runDir: run2,
    openPanels: false,
  });
  assert.equal(api.training.runDir, run2);
  await until(
    'a checkpoint and two more steps',
    () => {
      const c = checkpointSteps(run2);
      return c.length > 0 && (api.training.lastRow?.step ?? 0) >= c[c.length - 1] + 2;
    },
    90_000,
  );
  const before = api.engine.pid!;
  const resumed = waitFor(
    api.training.onDidResume,
    (e) => e.runDir === run2 && e.cause === 'crash',
    60_000,
    'the run to resume',
  );
  process.kill(before, 'SIGKILL');
  const { step } = await resumed;
  assert.notEqual(api.engine.pid, before, 'a new engine process');
  const ckpts = checkpointSteps(run2);
  assert.equal(step, ckpts[ckpts.length - 1], `resumed at the newest checkpoint (${ckpts.join(', ')})`);
  assert.ok(step > 0);
  assert.ok(
    api.engine.recentLog().some((l) => l.includes('the engine died while') && l.includes(run2)),
    'the crash is reported in the output',
  );
  const next = await waitFor(api.training.onDidMetrics, (e) => e.runDir === run2, 60_000, 'metrics after the resume');
  assert.equal(next.rows[0].step, step + 1, 'the step count goes on from the checkpoint');
  assert.equal(api.training.training, true);
  await vscode.commands.executeCommand('attentionDebugger.stop', { confirm: false });
  assert.equal(api.training.training, false);
}, 180_000);

test('Resume goes on with a stopped run from its newest checkpoint', async () => {
  const api = await activateExtension();
  const newest = Math.max(...checkpointSteps(run1));
  const more = waitFor(api.training.onDidMetrics, (e) => e.runDir === run1, 60_000, 'metrics of the resumed run');
  const summary = await vscode.commands.executeCommand<{ step: number; runDir: string } | undefined>(
    'attentionDebugger.resume',
    { runDir: run1, progress: false },
  );
  assert.ok(summary, 'Resume returned nothing (see the output)');
  assert.equal(summary.step, newest);
  assert.equal(api.training.runDir, run1);
  assert.equal((await more).rows[0].step, newest + 1);
  await vscode.commands.executeCommand('attentionDebugger.stop', { confirm: false });
  assert.equal(api.training.training, false);
}, 90_000);
