/**
 * What a newcomer tripped on (the selection issue's list), replayed with the user's answers
 * scripted at VS Code's prompts (ui.ts): the Train wizard's Advanced step, progress outside the
 * editor, an Open Run error in words, Export at the inspector's slider, and panels restored after
 * a reload. The tests run in order and share the wizard's run.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { activateExtension } from './api';
import { test, waitFor } from './harness';
import { drawnIn, microConfig, snapshotFiles, until } from './runs';
import { screenshot } from './screenshot';
import { answer, type Asked } from './ui';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-new-'));
const wizardRun = path.join(tmp, 'runs', 'wizard');
process.once('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

/** The user's answers to the Train wizard: reverse, a JSON config, Advanced… with four numbers. */
function wizardAnswers(config: string): (a: Asked) => string | undefined {
  return (a) => {
    if (a.text.includes('(1/4)')) return 'reverse';
    if (a.text.includes('(2/4)')) return 'JSON file…';
    if (a.fn === 'showOpenDialog') return config;
    if (a.text.includes('(3/4)')) return 'Advanced…';
    const advanced: Record<string, string> = { Steps: '12', Warmup: '3', 'LR factor': '0.5', 'Batch tokens': '150' };
    for (const [label, value] of Object.entries(advanced)) if (a.text.includes(`— ${label} `)) return value;
    if (a.text.includes('(4/4)')) return wizardRun;
    return undefined;
  };
}

test('the Train wizard asks for steps, warmup, LR factor and batch tokens, and remembers them', async () => {
  const api = await activateExtension();
  const status = (api.training as unknown as { status: vscode.StatusBarItem }).status;
  const ended = waitFor(api.training.onDidEnd, (e) => e.runDir === wizardRun, 120_000, 'the wizard run to end');
  const ui = answer(wizardAnswers(microConfig(tmp, 200)));
  const seen: string[] = [];
  try {
    await vscode.commands.executeCommand('attentionDebugger.train');
    const watch = setInterval(() => seen.push(status.text), 20);
    await ended;
    clearInterval(watch);
    await until('the status bar to say the run ended', () => status.text.includes('completed at step 12'), 10_000);
  } finally {
    ui.restore();
  }
  const config = JSON.parse(fs.readFileSync(path.join(wizardRun, 'config.json'), 'utf8')) as {
    training: Record<string, number>;
  };
  const { steps, warmup, lr_factor, batch_tokens } = config.training;
  assert.deepEqual(
    { steps, warmup, lr_factor, batch_tokens },
    { steps: 12, warmup: 3, lr_factor: 0.5, batch_tokens: 150 },
  );
  // Progress is in the status bar; no message covers the panels Train opened (issue 26 item 14): their
  // headers and the status bar say that the run trains and that it ended.
  assert.ok(
    seen.some((t) => /wizard: step \d+\/12 \d+%/.test(t)),
    `status bar texts: ${seen.slice(0, 3).join(' | ')}`,
  );
  const messages = ui.asked.filter((a) => a.fn.endsWith('Message')).map((a) => a.text);
  assert.deepEqual(messages, []);
  assert.ok(
    !ui.asked.some((a) => a.fn === 'withProgress' && a.text === String(vscode.ProgressLocation.Notification)),
    'no progress notification',
  );

  // The next Train offers the same data first and "my last settings" with the numbers chosen.
  const again = answer(() => undefined);
  try {
    await vscode.commands.executeCommand('attentionDebugger.train');
  } finally {
    again.restore();
  }
  assert.equal(again.asked[0]?.items[0], 'reverse');
  const settingsAsked = answer((a) =>
    a.text.includes('(1/4)') ? 'reverse' : a.text.includes('(2/4)') ? 'tiny' : undefined,
  );
  try {
    await vscode.commands.executeCommand('attentionDebugger.train');
  } finally {
    settingsAsked.restore();
  }
  const step3 = settingsAsked.asked.find((a) => a.text.includes('(3/4)'));
  assert.deepEqual(step3?.items, ['Use my last settings', "Use the config's settings", 'Advanced…']);
  assert.equal(step3?.descriptions[0], 'Steps 12, Warmup 3, LR factor 0.5, Batch tokens 150');
}, 150_000);

test('Open Run on a folder that is not a run says so in words and offers to pick another', async () => {
  const api = await activateExtension();
  const notARun = fs.mkdtempSync(path.join(tmp, 'notes-'));
  const ui = answer((a) =>
    a.fn === 'showErrorMessage' ? 'Pick Another Folder…' : a.fn === 'showOpenDialog' ? wizardRun : undefined,
  );
  let opened: { summary: { runDir: string } } | undefined;
  try {
    opened = await vscode.commands.executeCommand('attentionDebugger.openRun', { runDir: notARun });
  } finally {
    ui.restore();
  }
  assert.equal(ui.asked[0]?.text, `Attention Debugger: This folder is not a run: it has no config.json (${notARun}).`);
  assert.deepEqual(ui.asked[0]?.items, ['Pick Another Folder…']);
  assert.equal(ui.asked[1]?.fn, 'showOpenDialog');
  assert.equal(opened?.summary.runDir, wizardRun, 'the folder picked next is opened');
  assert.equal(api.viewer.selection?.runDir, wizardRun);
}, 60_000);

test('a click on the loss curve moves the inspector to the nearest snapshot; Export View saves that step and says where', async () => {
  const api = await activateExtension();
  const slots = api.panels.slots;
  const ref = { kind: 'cross', layer: 0, head: 1 } as const;
  api.panels.openHeadInspector(ref);
  await until('the inspector', () => slots.head.current?.isReady === true, 30_000);
  const first = await drawnIn(slots, 'head');
  assert.ok(first.step !== null && first.step > 5, `the newest step first, not ${first.step}`);
  api.panels.host.request('dashboard', { type: 'cursor', v: 3, step: 7 }); // what the loss curve posts on a click
  await until('the cursor', () => api.panels.store.cursor === 5, 30_000);
  const head = await drawnIn(slots, 'head');
  assert.deepEqual([head.run, head.step, head.input, head.head], ['wizard', 5, 'probe', ref]);
  const file = path.join(tmp, 'head.json');
  const ui = answer((a) => (a.text.startsWith('Attention Debugger: saved') ? 'Open' : undefined));
  try {
    await vscode.commands.executeCommand('attentionDebugger.exportView', { panel: 'head', format: 'json', path: file });
    await until('the export opened', () => vscode.window.activeTextEditor?.document.uri.fsPath === file, 10_000);
  } finally {
    ui.restore();
  }
  assert.deepEqual(ui.asked[0]?.items, ['Open']);
  assert.equal(ui.asked[0]?.text, `Attention Debugger: saved the head view as ${file}`);
  const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as { run: string; step: number; weights: number[][] };
  assert.deepEqual([saved.run, saved.step], [wizardRun, 5], 'the step the slider shows, not the newest');
  const at5 = api.panels.store.snapshots.find((s) => s.source.step === 5)!;
  const cross = at5.maps.find((m) => m.kind === 'cross')!;
  const [, , q, k] = cross.shape; // [layers, heads, target, source]
  const want = Array.from({ length: q }, (_, r) => Array.from(cross.weights.subarray((q + r) * k, (q + r + 1) * k)));
  assert.deepEqual(saved.weights, want, 'head 1’s weights at step 5');
  await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
}, 60_000);

test('panels restored after a window reload show the selection again, asked anew from the engine', async () => {
  const api = await activateExtension();
  const slots = api.panels.slots;
  const ref = { kind: 'cross', layer: 0, head: 1 } as const;
  // What a reload leaves: a new extension host (no selection, an empty store) and the page's saved state.
  for (const slot of Object.values(slots)) slot.current?.dispose();
  (api.viewer as unknown as { sel: undefined }).sel = undefined;
  api.panels.store.reset();
  const viewType = slots.head.viewType;
  const root = vscode.extensions.getExtension('attention-debugger.attention-debugger')!.extensionUri;
  const panel = vscode.window.createWebviewPanel(viewType, 'Head Inspector', vscode.ViewColumn.Two, {
    enableScripts: true,
    localResourceRoots: [root],
  });
  // What VS Code's serializer (registerPanels) does with it.
  slots.head.revive(panel, api.panels.host, { panel: 'head', v: 3, head: ref });
  api.panels.fireRevived('head');
  await until('the selection restored', () => api.viewer.selection?.runDir === wizardRun, 30_000);
  await until('the inspector ready', () => slots.head.current?.isReady === true, 30_000);
  await until('its history', () => api.panels.store.snapshots.length === snapshotFiles(wizardRun), 30_000);
  const head = await drawnIn(slots, 'head');
  assert.deepEqual([head.run, head.head, head.frames], ['wizard', ref, snapshotFiles(wizardRun)]);
  await screenshot('inspector-restored', api);
}, 60_000);

test('Refresh Runs is in the palette; a run row expands on a click and opens its dashboard from an inline button', async () => {
  const api = await activateExtension();
  const pkg = vscode.extensions.getExtension('attention-debugger.attention-debugger')!.packageJSON as {
    contributes: { menus: Record<string, { command: string; when?: string; group?: string }[]> };
  };
  const menus = pkg.contributes.menus;
  const palette = menus['commandPalette']!.find((m) => m.command === 'attentionDebugger.refreshRuns');
  assert.ok(palette === undefined || palette.when !== 'false', 'Refresh Runs is not hidden from the palette');
  assert.ok((await vscode.commands.getCommands(true)).includes('attentionDebugger.refreshRuns'));
  const item = api.runs.getTreeItem({ kind: 'run', dir: wizardRun });
  assert.equal(item.collapsibleState, vscode.TreeItemCollapsibleState.Collapsed);
  assert.equal(item.command, undefined, 'a click expands the row (a command would stop that)');
  const inline = menus['view/item/context']!.find(
    (m) => m.command === 'attentionDebugger.openRun' && m.group?.startsWith('inline'),
  );
  assert.ok(inline?.when?.includes('viewItem =~ /^run/'), `inline Open Run: ${JSON.stringify(inline)}`);
}, 30_000);

test('Inspect Head asks which run while another one trains, the selection first', async () => {
  const api = await activateExtension();
  const slots = api.panels.slots;
  const live = path.join(tmp, 'runs', 'live');
  await vscode.commands.executeCommand('attentionDebugger.train', {
    data: { kind: 'task', task: 'copy' },
    config: microConfig(tmp, 5000),
    runDir: live,
    openPanels: false,
  });
  const ended = waitFor(api.training.onDidEnd, (e) => e.runDir === live, 60_000, 'the live run to stop');
  const ui = answer((a) => (a.text === 'Inspect a head of which run?' ? 'wizard' : undefined));
  try {
    await vscode.commands.executeCommand('attentionDebugger.openRun', { runDir: wizardRun }); // a new run selects itself
    await until('the dashboard', () => slots.dashboard.current?.isReady === true, 30_000);
    const r = await vscode.commands.executeCommand<{ runDir: string }>('attentionDebugger.inspectHead', {
      kind: 'cross',
      layer: 0,
      head: 0,
    });
    const asked = ui.asked.find((a) => a.fn === 'showQuickPick');
    assert.deepEqual(asked?.items, ['wizard', 'live'], 'the selected run first, then the training one');
    assert.deepEqual(asked?.descriptions, ['selected', 'training']);
    assert.equal(r?.runDir, wizardRun);
    await until('the inspector', () => slots.head.current?.isReady === true, 30_000);
    assert.equal((await drawnIn(slots, 'head')).run, 'wizard', 'the inspector shows the run picked');
  } finally {
    ui.restore();
    await vscode.commands.executeCommand('attentionDebugger.stop', { confirm: false });
  }
  await ended;
}, 120_000);
