/**
 * Entry point of the extension host side. Owns the engine client, the live training session, the
 * panels, the side bar and the command table; everything created here is pushed to
 * context.subscriptions, the one place that cleans up.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { PanelKind } from '../protocol/webview';
import { createCommands } from './commands/index';
import { onDebugOpenHead, registerDebugAdapter } from './debug';
import { parseHeadId } from '../protocol/attention';
import { stamp } from './pickers';
import { settings } from './settings';
import { EngineClient } from './engineClient';
import { openPanelKinds, type Panels, registerPanels } from './panels';
import { TrainingSession } from './training';
import { Viewer } from './viewer';
import {
  CurrentRunProvider,
  highlightInFlight,
  highlightSelectedRun,
  listRuns,
  type RunNode,
  RunsProvider,
  runsRoot,
  SHOW_CLICKED_CHECKPOINT,
  showClickedCheckpoint,
} from './views';

export const BACKENDS = ['auto', 'webgpu', 'tensorflow', 'wasm', 'cpu'] as const;
export const STARTUP_JOBS = ['none', 'train-reverse-tiny'] as const;

/** What activate() returns: for other extensions and for the integration tests. */
export interface AttentionDebuggerApi {
  readonly engine: EngineClient;
  readonly training: TrainingSession;
  readonly viewer: Viewer;
  readonly panels: Panels;
  readonly runs: RunsProvider;
  readonly runsView: vscode.TreeView<RunNode>;
  readonly currentRun: CurrentRunProvider;
  /** The panels open now. */
  openPanels(): PanelKind[];
  /** The startup job's run (attentionDebugger.startupJob), once started. */
  readonly startup: Promise<string | undefined>;
  /** Runs the startup job as activation did, under the settings of now (for tests). */
  runStartupJob(): Promise<string | undefined>;
}

let client: EngineClient | undefined;

function backendArgs(): string[] {
  const backend = settings().get<string>('backend') ?? 'auto';
  return backend && backend !== 'auto' && (BACKENDS as readonly string[]).includes(backend)
    ? ['--backend', backend]
    : [];
}

export function activate(context: vscode.ExtensionContext): AttentionDebuggerApi {
  const output = vscode.window.createOutputChannel('Attention Debugger');
  const engine = new EngineClient(path.join(context.extensionPath, 'dist', 'cli.js'), output, backendArgs);
  client = engine;
  context.subscriptions.push(output, { dispose: () => void engine.dispose() });
  context.subscriptions.push(registerDebugAdapter(context.extensionPath));
  const log = (line: string): void => engine.log(line);

  const panels = registerPanels(context, (line) => log(`[panels] ${line}`));
  const training = new TrainingSession(engine, log);
  const viewer = new Viewer(engine, panels, training, context.workspaceState, log);
  const runs = new RunsProvider(training, viewer);
  const currentRun = new CurrentRunProvider(training);
  // The debugger opened a head's map: that head in the inspector, the cursor at its step.
  const openHead = async ({ runDir, head, step }: { runDir: string; head: string; step: number }) => {
    await vscode.commands.executeCommand('attentionDebugger.inspectHead', { runDir, ...parseHeadId(head) });
    panels.showCursor(step);
  };
  context.subscriptions.push(onDebugOpenHead(openHead, (line) => log(`[debug] ${line}`)));
  const runsView = vscode.window.createTreeView('attentionDebugger.runs', {
    treeDataProvider: runs,
    showCollapseAll: true,
  });
  context.subscriptions.push(
    training,
    viewer,
    runs,
    currentRun,
    runsView,
    // A click on a run row selects that run (the row expands to its checkpoints; its inline button opens the dashboard).
    runsView.onDidChangeSelection((e) => {
      const node = e.selection[0];
      // The highlight's own reveal (of a run selected elsewhere, maybe left since) is no click.
      if (node?.kind === 'run' && node.dir !== viewer.selection?.runDir && !highlightInFlight(node.dir))
        viewer.selectRun(node.dir).catch((err: Error) => log(`selecting ${node.dir}: ${err.message}`));
    }),
    vscode.window.createTreeView('attentionDebugger.currentRun', { treeDataProvider: currentRun }),
    vscode.commands.registerCommand(SHOW_CLICKED_CHECKPOINT, () => showClickedCheckpoint(runsView)),
    // The highlighted row follows the selected run, however it was selected.
    viewer.onDidChange(() => highlightSelectedRun(runsView, () => viewer.selection?.runDir)),
    runsView.onDidChangeVisibility(() => highlightSelectedRun(runsView, () => viewer.selection?.runDir)),
  );

  const ctx = {
    engine,
    panels,
    training,
    viewer,
    workspaceState: context.workspaceState,
    log,
    refreshRuns: () => runs.refresh(),
  };
  const commands = createCommands(ctx);
  for (const [id, fn] of Object.entries(commands)) context.subscriptions.push(vscode.commands.registerCommand(id, fn));

  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (!e.affectsConfiguration('attentionDebugger.backend')) return;
      const choice = await vscode.window.showInformationMessage(
        `Attention Debugger: the backend setting applies when the engine restarts${training.training ? ' (the run in progress resumes from its last checkpoint)' : ''}.`,
        'Restart Engine',
      );
      if (choice !== 'Restart Engine') return;
      const live = training.training ? training.runDir : undefined;
      if (live)
        await training.stop().catch((err: Error) => log(`train/stop before the restart failed: ${err.message}`));
      await engine.restart();
      if (live) await vscode.commands.executeCommand('attentionDebugger.resume', { runDir: live });
    }),
  );

  // No engine process until a command needs one (activation is onStartupFinished, in every window).
  const startup = runStartupJob(log);
  return {
    engine,
    training,
    viewer,
    panels,
    runs,
    runsView,
    currentRun,
    startup,
    runStartupJob: () => runStartupJob(log),
    openPanels: openPanelKinds,
  };
}

/** The demo's runs: `reverse-tiny-<stamp>` in the run folder. */
const DEMO_RUN = /^reverse-tiny-\d{8}-\d{6}$/;

/**
 * attentionDebugger.startupJob: the demo workspace trains a tiny model on the reverse task at once,
 * the first time; when the window opens again, the demo's last run is opened instead of a new one.
 */
async function runStartupJob(log: (line: string) => void): Promise<string | undefined> {
  const job = settings().get<string>('startupJob') ?? 'none';
  if (job === 'none') return undefined;
  if (job !== 'train-reverse-tiny') {
    log(
      `attentionDebugger.startupJob: unknown job ${JSON.stringify(job)} (expected one of ${STARTUP_JOBS.join(', ')})`,
    );
    return undefined;
  }
  const root = runsRoot();
  if (!root) {
    log('attentionDebugger.startupJob: no workspace folder to keep the run in');
    return undefined;
  }
  const earlier = listRuns(root).find((r) => DEMO_RUN.test(path.basename(r.dir)))?.dir;
  if (earlier) {
    log(`startup job ${job}: opening the demo's last run ${earlier}`);
    const opened = await vscode.commands.executeCommand('attentionDebugger.openRun', { runDir: earlier });
    if (opened) return earlier;
    log(`startup job ${job}: ${earlier} did not open (see above); training a new run`);
  }
  const runDir = path.join(root, `reverse-tiny-${stamp()}`);
  log(`startup job ${job}: training ${runDir}`);
  const summary = await vscode.commands.executeCommand<{ runDir: string } | undefined>('attentionDebugger.train', {
    data: { kind: 'task', task: 'reverse' },
    config: 'tiny',
    runDir,
  });
  return summary?.runDir;
}

export async function deactivate(): Promise<void> {
  await client?.dispose();
  client = undefined;
}
