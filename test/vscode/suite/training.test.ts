/**
 * Training, decoding and the panels through the extension's commands, in the real VS Code with the
 * real engine. Every command gets its choices as an argument, so no UI is needed. A micro model
 * (d_model 16, 1+1 layers) on the copy task keeps each run to seconds.
 * The tests run in order and share the first run folder.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { MetricRow } from '../../../src/protocol/metrics';
import type { CellRef } from '../../../src/protocol/drawnReport';
import { SNAPSHOT_FILE } from '../../../src/protocol/runFolder';
import { activateExtension } from './api';
import { test, waitFor } from './harness';
import { drawnIn, until } from './runs';
import { tmp, run1, copyConfig, checkpointSteps, metricsSteps } from './trainingRuns';

/** Viridis at 0 and at 1 (matplotlib's published end points), as drawn for a zero weight and a map's maximum. */
export const VIRIDIS_0 = [68, 1, 84];
export const VIRIDIS_1 = [253, 231, 37];
export const near = (rgba: number[] | null, rgb: number[]): boolean =>
  !!rgba && rgb.every((v, i) => Math.abs(v - rgba[i]!) <= 3) && rgba[3] === 255;
/** Relative luminance (Rec. 709): viridis rises monotonically in it. */
export const luminance = (c: number[]): number => 0.2126 * c[0]! + 0.7152 * c[1]! + 0.0722 * c[2]!;

test('Train streams metrics and snapshots to the extension, the status and the panels', async () => {
  const api = await activateExtension();
  const config = copyConfig(2000);
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
  // The attention view as drawn: this run, the snapshot's step, and a causal decoder map in every
  // layer and head (each cell above the diagonal drawn as weight 0; the first query sees only key 0).
  const snap = api.training.lastSnapshot!;
  const T = snap.tgtTokens.length;
  const causal: CellRef[] = [];
  for (let head = 0; head < 2; head++)
    for (let q = 0; q < T; q++)
      for (let k = q + 1; k < T; k++) causal.push({ kind: 'decoder_self', layer: 0, head, q, k });
  const firsts: CellRef[] = [0, 1].map((head) => ({ kind: 'decoder_self', layer: 0, head, q: 0, k: 0 }));
  await until('the attention view', () => api.panels.slots.attention.current?.isReady === true, 30_000);
  let view = await drawnIn(api.panels.slots, 'attention', [...causal, ...firsts]);
  for (let i = 0; i < 50 && view.step !== null && view.step < snap.source.step; i++)
    view = await drawnIn(api.panels.slots, 'attention', [...causal, ...firsts]);
  assert.equal(view.run, 'copy-micro');
  assert.ok(view.step !== null && view.step >= snap.source.step, `drawn at step ${view.step}`);
  assert.deepEqual(
    view.maps.map((m) => m.kind),
    ['encoder_self', 'decoder_self', 'cross'],
  );
  causal.forEach((c, i) =>
    assert.ok(
      near(view.colors[i]!, VIRIDIS_0),
      `decoder_self L${c.layer} H${c.head} [${c.q}, ${c.k}]: ${view.colors[i]}`,
    ),
  );
  for (let h = 0; h < 2; h++)
    assert.ok(
      near(view.colors[causal.length + h]!, VIRIDIS_1),
      `H${h} [0, 0] (weight 1): ${view.colors[causal.length + h]}`,
    );
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
      // Causal mask, in every layer and head: query i never sees key j > i.
      for (let lh = 0; lh < layers * heads; lh++)
        for (let i = 0; i < q; i++)
          for (let j = i + 1; j < k; j++)
            assert.equal(m.weights[(lh * q + i) * k + j], 0, `decoder_self map ${lh} [${i}, ${j}]`);
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
  // Decode (above) selected its sentence, which the inspector would show alone: back to the probe.
  api.panels.host.request('attention', { type: 'inspectInput', v: 3, input: { kind: 'probe' } });
  await until('the probe again', () => api.panels.store.attention?.source.input === 'probe', 30_000);
  const r = await vscode.commands.executeCommand<
    { head: { kind: string; layer: number; head: number }; snapshots: number } | undefined
  >('attentionDebugger.inspectHead', { runDir: run1, kind: 'cross', layer: 0, head: 1 });
  assert.ok(r, 'Inspect Head returned nothing (see the output)');
  assert.deepEqual(r.head, { kind: 'cross', layer: 0, head: 1 });
  const onDisk = fs.readdirSync(path.join(run1, 'snapshots')).filter((f) => SNAPSHOT_FILE.test(f)).length;
  assert.equal(r.snapshots, onDisk, 'one snapshot per file in snapshots/');
  assert.ok(onDisk >= 2);
  await until('the inspector', () => api.panels.slots.head.current?.isReady === true, 30_000);
  const drawn = await drawnIn(api.panels.slots, 'head');
  assert.deepEqual(drawn.head, { kind: 'cross', layer: 0, head: 1 }, 'the inspector shows the head asked for');
  assert.equal(drawn.run, 'copy-micro');
  assert.equal(drawn.frames, onDisk, 'its slider ranges over every snapshot');
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
  const head = JSON.parse(fs.readFileSync(headFile, 'utf8')) as {
    kind: string;
    layer: number;
    head: number;
    step: number;
    weights: number[][];
  };
  // The export is what the inspector draws: its step and head, the largest weight in viridis' top
  // colour (the map is scaled to its maximum), and the drawn colours in the order of the weights.
  const cells: CellRef[] = head.weights.flatMap((row, q) =>
    row.map((_, k) => ({ kind: 'cross' as const, layer: head.layer, head: head.head, q, k })),
  );
  const shown = await drawnIn(api.panels.slots, 'head', cells);
  assert.deepEqual([head.kind, head.layer, head.head, head.step], ['cross', 0, 1, shown.step]);
  const flat = head.weights.flat();
  const max = Math.max(...flat);
  assert.ok(
    near(shown.colors[flat.indexOf(max)]!, VIRIDIS_1),
    `the largest weight is drawn ${shown.colors[flat.indexOf(max)]}`,
  );
  for (let i = 0; i < flat.length; i++)
    for (let j = 0; j < flat.length; j++)
      if (flat[i]! < flat[j]! - 0.05 * max)
        assert.ok(
          luminance(shown.colors[i]!) < luminance(shown.colors[j]!),
          `weight ${flat[i]} is drawn lighter than ${flat[j]}`,
        );
}, 60_000);
