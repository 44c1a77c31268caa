/**
 * Export Run Report… in a real VS Code (issue 33 item 1): on a finished run it asks where to save
 * (a save dialog), writes the file under a notification and says where it is with an Open button;
 * the file holds the run's name, its steps and its snapshots. With the Beam Tree panel open on a
 * tree of that run, the report holds that tree; with the panel closed, none. Export View writes the
 * panel's tree as JSON (not CSV), and the CLI's report --beam takes that file. A folder that is no
 * run is refused with an error that says what to choose.
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { BeamTreeView } from '../../../src/protocol/beamTree';
import type { ReportWriteResult, RunReportData } from '../../../src/protocol/report';
import { activateExtension } from './api';
import { test } from './harness';
import { microConfig, snapshotFiles, trainAndWait } from './runs';
import { answer } from './ui';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-report-'));
const run = path.join(tmp, 'runs', 'reverse-report');
process.once('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

test('Report: Export Run Report… on a finished run writes one HTML file with the run, its steps and snapshots', async () => {
  const api = await activateExtension();
  await trainAndWait(api, run, 'reverse', microConfig(tmp, 10, 10));
  const out = path.join(tmp, 'shared', 'reverse-report.html');
  fs.mkdirSync(path.dirname(out));
  const ui = answer((a) => (a.fn === 'showSaveDialog' ? out : undefined));
  let written: ReportWriteResult | undefined;
  try {
    written = await vscode.commands.executeCommand<ReportWriteResult>('attentionDebugger.exportRunReport', {
      runDir: run,
    });
  } finally {
    ui.restore();
  }
  assert.ok(
    ui.asked.some((a) => a.fn === 'showSaveDialog'),
    `a save dialog; asked: ${ui.asked.map((a) => a.fn).join(', ')}`,
  );
  assert.ok(
    ui.asked.some((a) => a.fn === 'withProgress' && a.text === String(vscode.ProgressLocation.Notification)),
    'progress in a notification',
  );
  const told = ui.asked.find((a) => a.fn === 'showInformationMessage');
  assert.ok(told && told.text.includes(out) && told.items.includes('Open'), `says where, with Open: ${told?.text}`);
  assert.ok(written && written.out === out, 'the command returns what it wrote');
  const html = fs.readFileSync(out, 'utf8');
  const data = JSON.parse(/<script type="application\/json" id="report-data">([^]*?)<\/script>/.exec(html)![1]!) as {
    header: { run: string; step: number; totalSteps: number };
    snapshots: { step: number }[];
  };
  assert.equal(data.header.run, 'reverse-report');
  assert.equal(data.header.step, 10);
  assert.equal(data.header.totalSteps, 10);
  assert.equal(data.snapshots.length, snapshotFiles(run), 'every snapshot');
  assert.ok(html.includes('<title>reverse-report: run report</title>'), 'the page names the run');
}, 240_000);

/** The data of a report file (its JSON script element). */
const reportData = (file: string): RunReportData =>
  JSON.parse(
    /<script type="application\/json" id="report-data">([^]*?)<\/script>/.exec(fs.readFileSync(file, 'utf8'))![1]!,
  ) as RunReportData;

/** The run (trained once) with Show Beam Tree of "5 6 7" open: the tree it returned and the panel's slot. */
async function showBeamTree() {
  const api = await activateExtension();
  if (!fs.existsSync(path.join(run, 'config.json'))) await trainAndWait(api, run, 'reverse', microConfig(tmp, 10, 10));
  const tree = await vscode.commands.executeCommand<BeamTreeView>('attentionDebugger.beamTree', {
    runDir: run,
    text: '5 6 7',
  });
  assert.ok(tree, 'Show Beam Tree returned nothing (see the output)');
  const beam = api.panels.slots.beam;
  assert.ok(beam.current, 'the Beam Tree panel is open');
  return { api, tree, beam: beam as typeof beam & { current: NonNullable<typeof beam.current> } };
}

test('Report: Export Run Report… holds the tree the Beam Tree panel shows of that run, and none once it is closed', async () => {
  const { tree, beam } = await showBeamTree();
  const withTree = path.join(tmp, 'with-tree.html');
  await vscode.commands.executeCommand('attentionDebugger.exportRunReport', { runDir: run, out: withTree });
  assert.deepEqual(reportData(withTree).beam, tree, 'the report holds the tree the panel shows');
  beam.current.dispose();
  const without = path.join(tmp, 'without-tree.html');
  await vscode.commands.executeCommand('attentionDebugger.exportRunReport', { runDir: run, out: without });
  assert.equal(reportData(without).beam, null, 'no panel, no tree');
}, 240_000);

test('Report: Export View writes the Beam Tree panel’s tree as JSON, which report --beam takes', async () => {
  const { tree, beam } = await showBeamTree();
  // Offered: images, JSON and HTML; CSV is refused with what to choose.
  const file = path.join(tmp, 'beam-tree.json');
  const csv = path.join(tmp, 'beam-tree.csv');
  const ui = answer(() => undefined); // the format pick, cancelled
  try {
    await vscode.commands.executeCommand('attentionDebugger.exportView', { panel: 'beam' });
    await vscode.commands.executeCommand('attentionDebugger.exportView', { panel: 'beam', format: 'csv', path: csv });
    await vscode.commands.executeCommand('attentionDebugger.exportView', { panel: 'beam', format: 'json', path: file });
  } finally {
    ui.restore();
  }
  assert.deepEqual(ui.asked.find((a) => a.fn === 'showQuickPick')?.items, ['png', 'svg', 'json', 'html']);
  const refused = ui.asked.find((a) => a.fn === 'showErrorMessage')?.text ?? '';
  assert.match(refused, /the beam panel has no CSV export here: choose png, svg, json or html/);
  assert.ok(!fs.existsSync(csv), 'no CSV written');
  assert.deepEqual(JSON.parse(fs.readFileSync(file, 'utf8')), tree, 'the file holds the tree the panel shows');
  beam.current.dispose();

  // The CLI's report --beam takes the file: the report holds that tree.
  const repo = vscode.extensions.getExtension('attention-debugger.attention-debugger')!.extensionPath;
  const out = path.join(tmp, 'cli-beam.html');
  const r = spawnSync(
    process.execPath,
    [path.join(repo, 'dist', 'cli.js'), 'report', run, '--beam', file, '--out', out],
    {
      env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
      encoding: 'utf8',
    },
  );
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(reportData(out).beam, tree, 'report --beam shows the exported tree');
}, 240_000);

test('Report: Export Run Report… of a folder that is no run says so and what to choose', async () => {
  await activateExtension();
  const folder = path.join(tmp, 'not-a-run');
  fs.mkdirSync(folder);
  const ui = answer((a) => (a.fn === 'showSaveDialog' ? path.join(tmp, 'x.html') : undefined));
  try {
    await vscode.commands.executeCommand('attentionDebugger.exportRunReport', { runDir: folder });
  } finally {
    ui.restore();
  }
  const error = ui.asked.find((a) => a.fn === 'showErrorMessage')?.text ?? '';
  assert.ok(error.includes(`${folder}: not a run folder (no config.json); name a run folder`), error);
  assert.ok(!fs.existsSync(path.join(tmp, 'x.html')), 'nothing written');
}, 60_000);
