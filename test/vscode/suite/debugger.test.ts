/**
 * Issue 31 in a real VS Code: the test workspace's launch.json ("Debug a micro reverse run") starts
 * a session of the attention-debugger type; a function breakpoint over head telemetry (a
 * watchpoint) pauses the run; the Call Stack shows the step and the layers, and the Variables view
 * shows the decoder layer's heads with their telemetry: the values VS Code's own views asked the
 * adapter for (seen through a DebugAdapterTracker) equal the run folder's telemetry.jsonl at the
 * paused step; expanding a head's attention map there opens that head in the head inspector at
 * that step; Run to Cursor on a later line of the run's steps source (line N is step N) trains to that
 * step; the status bar hides the end of a run trained just before while the session runs. Screenshots
 * debug-paused and debug-run-to-cursor (dark theme). Runs last: its run lands in the workspace's
 * runs/ folder, the Runs view's default, and is removed after.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { activateExtension } from './api';
import { test } from './harness';
import { microConfig, trainAndWait, until } from './runs';
import { inDarkTheme, screenshot } from './screenshot';

const CONFIGURATION = 'Debug a micro reverse run';
const WATCH = 'cross:0.*.entropy < 9';

interface TelemetryRow {
  step: number;
  heads: string[];
  stats: Record<string, (number | null)[]>;
}

/** What the adapter sent VS Code: events and the replies to the requests VS Code's views made. */
function trackMessages(): { sent: DebugProtocol.ProtocolMessage[]; dispose(): void } {
  const sent: DebugProtocol.ProtocolMessage[] = [];
  const tracker = vscode.debug.registerDebugAdapterTrackerFactory('attention-debugger', {
    createDebugAdapterTracker: () => ({ onDidSendMessage: (m: DebugProtocol.ProtocolMessage) => sent.push(m) }),
  });
  return { sent, dispose: () => tracker.dispose() };
}

const isEvent = (m: DebugProtocol.ProtocolMessage, event: string): m is DebugProtocol.Event =>
  m.type === 'event' && (m as DebugProtocol.Event).event === event;
const variablesReplies = (sent: DebugProtocol.ProtocolMessage[]): DebugProtocol.Variable[] =>
  sent
    .filter((m) => m.type === 'response' && (m as DebugProtocol.Response).command === 'variables')
    .flatMap((m) => (m as DebugProtocol.VariablesResponse).body?.variables ?? []);

test('launch.json starts the debugger; a watchpoint on head telemetry pauses the run; the Variables view shows the heads', async () => {
  const api = await activateExtension();
  const folder = vscode.workspace.workspaceFolders![0]!;
  const runDir = path.join(folder.uri.fsPath, 'runs', 'debug-micro');
  fs.rmSync(runDir, { recursive: true, force: true });
  // A run trained and ended first: the status bar's end of it is hidden beside the session, shown after.
  const earlierRun = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'attn-debug-')), 'reverse-before');
  await trainAndWait(api, earlierRun, 'reverse', microConfig(path.dirname(earlierRun), 10));
  const lastEnd = api.training.statusText;
  assert.match(lastEnd ?? '', /reverse-before: completed at step 10/);
  const messages = trackMessages();
  const watch = new vscode.FunctionBreakpoint(WATCH, true, 'step >= 10');
  vscode.debug.addBreakpoints([watch]);
  let session: vscode.DebugSession | undefined;
  const started = vscode.debug.onDidStartDebugSession((s) => (session = s));
  try {
    assert.ok(await vscode.debug.startDebugging(folder, CONFIGURATION), 'the launch configuration starts');
    await until('the watchpoint to pause the run', () => messages.sent.some((m) => isEvent(m, 'stopped')), 120_000);
    const stop = messages.sent.find((m) => isEvent(m, 'stopped')) as DebugProtocol.StoppedEvent;
    assert.match(stop.body.description ?? '', /cross:0\.\d/, 'the pause names the heads whose condition held');
    assert.equal(api.training.statusText, undefined, `beside the session the status bar said "${lastEnd}"`);

    // The step it paused at, as the Call Stack shows it, and the run folder's telemetry row there.
    const stack = (await session!.customRequest('stackTrace', {
      threadId: 1,
    })) as DebugProtocol.StackTraceResponse['body'];
    const names = stack.stackFrames.map((f) => f.name);
    assert.deepEqual(names.slice(1), ['encoder layer 0', 'decoder layer 0'], names.join(' | '));
    const step = Number(/^step (\d+)$/.exec(names[0]!)?.[1]);
    assert.ok(step >= 10 && step % 5 === 0, `paused at a telemetry row from step 10: ${names[0]}`);
    const rows = fs
      .readFileSync(path.join(runDir, 'telemetry.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as TelemetryRow);
    const row = rows.filter((r) => r.step === step).at(-1);
    assert.ok(row, `the run folder holds the telemetry of step ${step}`);

    // The paused run in the extension's own views too, beside the debugger (they follow the run).
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('attentionDebugger.openRun', { runDir });
    await until('the paused run in the attention view', () => api.panels.store.attention?.source.runDir === runDir);
    await inDarkTheme(async () => {
      await vscode.commands.executeCommand('workbench.view.debug');
      // The decoder layer's frame: its own scope comes first, and VS Code expands the first scope.
      await vscode.commands.executeCommand('workbench.debug.action.focusCallStackView');
      await vscode.commands.executeCommand('list.focusLast');
      await vscode.commands.executeCommand('list.select');
      const head = `cross:0.0`;
      await until(
        `the Variables view to ask for ${head}`,
        () => variablesReplies(messages.sent).some((v) => v.name === head),
        30_000,
      );
      const shown = variablesReplies(messages.sent).find((v) => v.name === head)!;
      const k = row!.heads.indexOf(head);
      const entropy = row!.stats['entropy']![k];
      assert.ok(shown.value.includes(`entropy ${entropy}`), `${head}: "${shown.value}" vs the run's ${entropy}`);
      await screenshot('debug-paused', api);
    });

    // The head's attention map, expanded, opens that head in the head inspector at the paused step.
    const head = variablesReplies(messages.sent).find((v) => v.name === 'cross:0.0')!;
    const stats = (await session!.customRequest('variables', { variablesReference: head.variablesReference })) as {
      variables: DebugProtocol.Variable[];
    };
    const map = stats.variables.find((v) => v.name === 'attention (probe pair)')!;
    await session!.customRequest('variables', { variablesReference: map.variablesReference });
    await until('the head inspector on cross:0.0', () => {
      const h = api.viewer.selection?.head;
      return api.panels.slots.head.current?.isReady === true && h?.kind === 'cross' && h.layer === 0 && h.head === 0;
    });
    assert.equal(api.viewer.selection?.runDir, runDir);
    assert.equal(api.panels.store.cursor, step, 'the inspector at the paused step');

    // Run to Cursor on a later step's line of the run's steps source, which selecting a frame opened.
    vscode.debug.removeBreakpoints([watch]);
    const isSteps = (d: vscode.TextDocument) => d.uri.scheme === 'debug' && d.uri.path.endsWith('debug-micro.steps');
    await until('the frame’s steps source', () => vscode.workspace.textDocuments.some(isSteps));
    const doc = vscode.workspace.textDocuments.find(isSteps)!;
    assert.equal(doc.languageId, 'attention-debugger-steps', 'a language VS Code sets breakpoints in');
    assert.equal(doc.lineAt(step - 1).text, `step ${step}`);
    const target = step + 3;
    const at = new vscode.Range(target - 1, 0, target - 1, 0);
    await vscode.window.showTextDocument(doc, { preserveFocus: false, selection: at });
    const stops = () => messages.sent.filter((m) => isEvent(m, 'stopped')) as DebugProtocol.StoppedEvent[];
    const before = stops().length;
    await vscode.commands.executeCommand('editor.debug.action.runToCursor');
    await until(`Run to Cursor to stop at step ${target}`, () => stops().length > before, 60_000);
    assert.equal(stops().at(-1)!.body.description, `step ${target}`);
    const top = (await session!.customRequest('stackTrace', {
      threadId: 1,
    })) as DebugProtocol.StackTraceResponse['body'];
    assert.equal(top.stackFrames[0]!.line, target, 'the frame on the step’s line');
    await until('the cursor’s breakpoint removed', () => vscode.debug.breakpoints.length === 0, 10_000);
    await inDarkTheme(() => screenshot('debug-run-to-cursor', api));
  } finally {
    messages.dispose();
    started.dispose();
    vscode.debug.removeBreakpoints([watch]);
    if (session) {
      const ended = new Promise<void>((resolve) => {
        const d = vscode.debug.onDidTerminateDebugSession((s) => s.id === session!.id && (d.dispose(), resolve()));
      });
      await vscode.debug.stopDebugging(session);
      await Promise.race([ended, new Promise((r) => setTimeout(r, 20_000))]);
    }
    fs.rmSync(runDir, { recursive: true, force: true });
    fs.rmSync(path.dirname(earlierRun), { recursive: true, force: true });
  }
  assert.equal(api.training.statusText, lastEnd, 'the last run’s end is shown again after the session');
}, 240_000);
