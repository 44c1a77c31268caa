/**
 * Issue 26 items 8 and 15 in a real VS Code with the real engine: a checkpoint click while another
 * run trains and the Runs tree refreshes shows that checkpoint (never "Actual command not found");
 * the status bar keeps the last run's end; Stop says it stopped in a dialog; the Runs tree's
 * highlight follows the selection; the wizard offers a chosen JSON config's own settings first;
 * the walkthrough's "Open a run folder" step completes on a folder that opened, not on a failure;
 * the demo reopens its run instead of starting another each time the window opens.
 * The tests run in order and share two micro runs (d_model 16, 1+1 layers).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AttentionDebuggerApi } from '../../../src/extension/extension';
import type { RunNode } from '../../../src/extension/views';
import { activateExtension, EXTENSION_ID } from './api';
import { test, waitFor } from './harness';
import { microConfig, trainAndWait, until } from './runs';
import { screenshot } from './screenshot';
import { answer } from './ui';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-small-'));
const root = path.join(tmp, 'runs');
/** A finished run with checkpoints at steps 10 and 20. */
const done = path.join(root, 'reverse-done');
/** A run that trains while the checkpoints of `done` are clicked. */
const live = path.join(root, 'reverse-live');
/**
 * The live run validates every 200 steps. The engine sends rows every 200 ms and at each
 * validation, so a micro run that validated every 10 steps in under 200 ms had every batch end on a
 * validated row: no row between validations ever reached Current Run, and its test waited in vain
 * (a CI run, 2026-11-28).
 */
const LIVE_EVAL_EVERY = 200;
process.once('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

let api: AttentionDebuggerApi;
/**
 * Reveals a Runs row as a click or a keyboard move does, the Runs view shown first (earlier tests
 * close the side bar). VS Code's tree view refuses a reveal whose fetch of the rows overlaps a
 * refresh (every second while a run trains) with "Element with id … is already registered", or
 * leaves it unanswered; a person's click never meets either, so the reveal is tried again.
 */
async function reveal(
  api: AttentionDebuggerApi,
  node: RunNode,
  options: { select?: boolean; focus?: boolean; expand?: boolean },
): Promise<void> {
  if (!api.runsView.visible) {
    await vscode.commands.executeCommand('attentionDebugger.runs.focus');
    await until('the Runs view shown', () => api.runsView.visible, 10_000);
  }
  for (let i = 0; ; i++) {
    const unanswered = new Promise<'unanswered'>((r) => setTimeout(() => r('unanswered'), 10_000));
    try {
      if ((await Promise.race([api.runsView.reveal(node, options), unanswered])) !== 'unanswered') return;
      if (i >= 5) throw new Error(`the Runs view did not reveal ${JSON.stringify(node)} in 10 s, 6 times`);
    } catch (err) {
      if (i >= 10 || !/already registered/.test(String(err))) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/**
 * Highlights a checkpoint row as a person does before pressing Enter: they click it again when
 * the first click did not take. The first reveal also expands the run, whose rows arrive after
 * reveal returns (click 0 was lost in 3 of 6 full runs), and a refresh of the tree that lands
 * between the reveal and its selection leaves no row highlighted (stop 44's CI, once in 5 runs).
 */
async function highlight(
  api: AttentionDebuggerApi,
  node: RunNode,
  isIt: (row: Extract<RunNode, { kind: 'checkpoint' }>) => boolean,
): Promise<void> {
  const highlighted = (): boolean => {
    const row = api.runsView.selection[0];
    return row?.kind === 'checkpoint' && isIt(row);
  };
  for (let tries = 1; ; tries++) {
    await reveal(api, node, { select: true, focus: true });
    try {
      return await until('the checkpoint row highlighted', highlighted, 4_000);
    } catch (err) {
      if (tries >= 5) throw new Error(`${String(err)}, 5 clicks in a row`);
    }
  }
}

const settings = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration('attentionDebugger');

/** Sets `attentionDebugger.<key>` for the user while `fn` runs. */
async function withSetting<T>(key: string, value: unknown, fn: () => Promise<T>): Promise<T> {
  await settings().update(key, value, vscode.ConfigurationTarget.Global);
  try {
    return await fn();
  } finally {
    await settings().update(key, undefined, vscode.ConfigurationTarget.Global);
  }
}

const checkpoint = (runDir: string, step: number): RunNode => ({
  kind: 'checkpoint',
  runDir,
  step,
  file: path.join(runDir, 'checkpoints', `step-${step}.safetensors`),
});

test('small things: the status bar item stays when a run ends, with how and where it ended', async () => {
  api = await activateExtension();
  await settings().update('runFolder', root, vscode.ConfigurationTarget.Global);
  await trainAndWait(api, done, 'reverse', microConfig(tmp, 20));
  assert.equal(api.training.training, false);
  const text = api.training.statusText;
  assert.ok(text, 'the status bar item is still shown after the run ended');
  assert.match(text, /reverse-done: completed at step 20/);
}, 150_000);

test('small things: checkpoint clicks while another run trains each show their checkpoint (no "Actual command not found")', async () => {
  const config = microConfig(tmp, 100_000, 1000, LIVE_EVAL_EVERY);
  // The panels earlier tests left open are closed: drawing a micro run's hundred steps a second on
  // two CPUs kept the workbench from answering the tree's reveals at all in the whole suite (an
  // open problem of its own, in the session note); this test is about the tree's clicks.
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  await vscode.commands.executeCommand('attentionDebugger.train', {
    data: { kind: 'task', task: 'reverse' },
    config,
    runDir: live,
    openPanels: false,
  });
  assert.equal(api.training.runDir, live, 'the second run trains');
  await vscode.commands.executeCommand('attentionDebugger.runs.focus');
  // The live run's own row first: its arrival moves the rows under a click that came before it.
  await until(
    'the live run in the Runs view',
    () => api.runs.getChildren().some((n) => (n as { dir?: string }).dir === live),
    30_000,
  );
  const clicks = 12;
  const lost: number[] = [];
  for (let i = 0; i < clicks && lost.length < 5; i++) {
    const step = i % 2 ? 10 : 20;
    await highlight(api, checkpoint(done, step), (row) => row.runDir === done && row.step === step);
    // what training does every second (metrics.jsonl grows), right before the click
    api.runs.refresh();
    await vscode.commands.executeCommand('list.select'); // Enter on the focused row: VS Code runs its command
    try {
      await until(
        'the clicked checkpoint',
        () => {
          const s = api.viewer.selection;
          return s?.runDir === done && s.step === step;
        },
        10_000,
      );
    } catch {
      lost.push(i);
    }
  }
  assert.deepEqual(lost, [], `clicks ${lost.join(', ')} (counted from 0) did not show their checkpoint`);
  assert.equal(api.training.runDir, live, 'the other run went on training');
}, 300_000);

test('small things: Current Run keeps the last validation, with its step, between validations', async () => {
  assert.equal(api.training.runDir, live, 'the run of the last test still trains');
  const every = LIVE_EVAL_EVERY;
  await until('a step between validations, past the first', () => {
    const step = api.training.lastRow?.step ?? 0;
    return step > every && step % every !== 0;
  });
  const fields = Object.fromEntries(api.currentRun.fields().map((f) => [f.label, f.value]));
  const last = api.training.lastRow!.step;
  const validated = Math.floor(last / every) * every;
  assert.match(fields['Val loss'] ?? '', new RegExp(`^\\d+\\.\\d{4} \\(step ${validated}\\)$`), `at step ${last}`);
}, 60_000);

test('small things: Stop says in a dialog that the run stopped, and where Resume goes on', async () => {
  assert.equal(api.training.runDir, live, 'the run of the last test still trains');
  const ended = waitFor(api.training.onDidEnd, (e) => e.runDir === live, 60_000, 'the stop');
  const ui = answer((a) => (a.text.startsWith('Stop training') ? 'Stop Training' : undefined));
  try {
    await vscode.commands.executeCommand('attentionDebugger.stop');
    const end = await ended;
    const said = ui.asked.find((a) => a.text.includes(`reverse-live stopped at step ${end.step}`));
    assert.ok(said, `Stop said where it stopped: ${JSON.stringify(ui.asked)}`);
    assert.equal(said.modal, true, 'in a dialog, not a notification that may go unseen');
    assert.equal(said.fn, 'showInformationMessage');
  } finally {
    ui.restore();
    if (api.training.training) await vscode.commands.executeCommand('attentionDebugger.stop', { confirm: false });
  }
}, 90_000);

test('small things: the Runs tree highlight follows a run opened by a command', async () => {
  await vscode.commands.executeCommand('attentionDebugger.runs.focus');
  await reveal(api, { kind: 'run', dir: done }, { select: true, focus: true });
  await until('the tree selects reverse-done', () => api.viewer.selection?.runDir === done, 30_000);
  await vscode.commands.executeCommand('attentionDebugger.openRun', { runDir: live });
  assert.equal(api.viewer.selection?.runDir, live);
  const highlighted = (): string | undefined => {
    const n = api.runsView.selection[0];
    return n?.kind === 'run' ? n.dir : n?.kind === 'checkpoint' ? n.runDir : undefined;
  };
  await until('the highlight on reverse-live', () => highlighted() === live, 10_000).catch(() => undefined);
  assert.equal(highlighted(), live, 'the highlighted row is the selected run');
  // selected while the side bar shows another view: highlighted once the Runs view is shown again
  await vscode.commands.executeCommand('workbench.view.explorer');
  await until('the Runs view hidden', () => !api.runsView.visible, 10_000);
  await vscode.commands.executeCommand('attentionDebugger.openRun', { runDir: done });
  await vscode.commands.executeCommand('attentionDebugger.runs.focus');
  await until('the highlight on reverse-done', () => highlighted() === done, 10_000).catch(() => undefined);
  assert.equal(highlighted(), done, 'the highlighted row is the run selected while the view was hidden');
}, 60_000);

test('small things: the Train wizard offers a chosen JSON config its own settings first', async () => {
  const remembered = path.join(root, 'wizard-remembered');
  const first = answer((a) => {
    if (a.text.includes('(1/4)')) return 'reverse';
    if (a.text.includes('(2/4)')) return 'tiny';
    if (a.text.includes('(3/4)')) return 'Advanced…';
    if (a.text.includes('— Steps')) return '6';
    if (a.text.includes('— Break on')) return [];
    if (a.text.includes('(4/4)')) return remembered;
    return a.fn === 'showInputBox' ? '' : undefined;
  });
  try {
    const ended = waitFor(api.training.onDidEnd, (e) => e.runDir === remembered, 120_000, 'the remembered run');
    await vscode.commands.executeCommand('attentionDebugger.train', { openPanels: false });
    await ended;
  } finally {
    first.restore();
  }
  const json = microConfig(tmp, 30);
  const second = answer((a) => {
    if (a.text.includes('(1/4)')) return 'reverse';
    if (a.text.includes('(2/4)')) return 'JSON file…';
    if (a.fn === 'showOpenDialog') return json;
    return undefined; // cancelled at step 3: nothing trains
  });
  try {
    await vscode.commands.executeCommand('attentionDebugger.train', { openPanels: false });
  } finally {
    second.restore();
  }
  const step3 = second.asked.find((a) => a.text.includes('(3/4)'));
  assert.ok(step3, 'the wizard asked step 3');
  assert.ok(step3.items.includes('Use my last settings'), `the last settings are offered: ${step3.items.join(' | ')}`);
  assert.equal(step3.items[0], "Use the config's settings", "pre-selected: the JSON config's own training section");
  assert.equal(api.training.training, false);
}, 180_000);

test('small things: the walkthrough step "Open a run folder" completes on a folder that opened, not on a failure', async () => {
  const pkg = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as {
    contributes: { walkthroughs: { steps: { id: string; completionEvents: string[] }[] }[] };
  };
  const step = pkg.contributes.walkthroughs[0]!.steps.find((s) => s.id === 'openRun')!;
  assert.equal(step.completionEvents.length, 1);
  const key = /^onContext:(attentionDebugger\.\w+)$/.exec(step.completionEvents[0]!)?.[1];
  assert.ok(
    key,
    `the step completes on a context key the extension sets, not on the command: ${step.completionEvents}`,
  );
  // the context keys the extension sets, as VS Code receives them
  const commands = vscode.commands as unknown as { executeCommand: (...a: unknown[]) => Thenable<unknown> };
  const saved = commands.executeCommand;
  const set: unknown[] = [];
  commands.executeCommand = (...a: unknown[]) => {
    if (a[0] === 'setContext' && a[1] === key) set.push(a[2]);
    return saved.apply(vscode.commands, a);
  };
  const ui = answer(() => undefined);
  try {
    const notARun = path.join(tmp, 'not-a-run');
    fs.mkdirSync(notARun);
    assert.equal(await vscode.commands.executeCommand('attentionDebugger.openRun', { runDir: notARun }), undefined);
    assert.deepEqual(set, [], 'a folder that did not open completes nothing');
    assert.ok(await vscode.commands.executeCommand('attentionDebugger.openRun', { runDir: done }));
    assert.deepEqual(set, [true], 'the folder opened: the step completes');
  } finally {
    commands.executeCommand = saved;
    ui.restore();
  }
}, 60_000);

test('small things: the demo reopens its last run instead of training a new one each time the window opens', async () => {
  const demoRoot = path.join(tmp, 'demo-runs');
  const earlier = path.join(demoRoot, 'reverse-tiny-20260101-090000');
  fs.mkdirSync(demoRoot);
  fs.cpSync(done, earlier, { recursive: true });
  const opened = await withSetting('runFolder', demoRoot, () =>
    withSetting('startupJob', 'train-reverse-tiny', () => api.runStartupJob()),
  );
  try {
    assert.equal(opened, earlier, "the demo's earlier run");
    assert.equal(api.training.training, false, 'nothing new trains');
    assert.deepEqual(fs.readdirSync(demoRoot), ['reverse-tiny-20260101-090000'], 'no new run folder');
    assert.equal(api.viewer.selection?.runDir, earlier, 'it is the selected run');
  } finally {
    if (api.training.training) await vscode.commands.executeCommand('attentionDebugger.stop', { confirm: false });
    await settings().update('runFolder', undefined, vscode.ConfigurationTarget.Global);
  }
  await screenshot('small-things-status-bar', api);
}, 120_000);
