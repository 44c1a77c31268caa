/**
 * The side bar: a Runs tree (run folders under the `attentionDebugger.runFolder` setting, each with
 * its checkpoints) and a compact Current Run tree (step, loss, lr, tokens/s of the live run).
 * Runs refresh on train/ended and on file changes (metrics.jsonl, checkpoints), debounced since
 * a training run appends to metrics.jsonl every step, and only when a row would read differently:
 * a refresh every second while a run trains unsettled clicks and reveals in the tree.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { CHECKPOINT_FILE, RUN_FILES, stepOf } from '../protocol/runFolder';
import { forkOf } from './runFork';
import { STATE_ICONS, STATE_LABELS, readRunState } from './runState';
import { settings } from './settings';
import type { TrainingSession } from './training';
import type { Viewer } from './viewer';

/** The folder that holds run folders: the setting, resolved against the first workspace folder. */
export function runsRoot(): string | undefined {
  const setting = settings().get<string>('runFolder') || 'runs';
  if (path.isAbsolute(setting)) return setting;
  const ws = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  return ws ? path.join(ws, setting) : undefined;
}

/** Run folders under `root` (those with a config.json or metrics.jsonl), newest first. */
export function listRuns(root: string): { dir: string; mtime: number }[] {
  let names: string[];
  try {
    names = fs.readdirSync(root);
  } catch {
    return [];
  }
  const runs: { dir: string; mtime: number }[] = [];
  for (const name of names) {
    const dir = path.join(root, name);
    try {
      if (!fs.statSync(dir).isDirectory()) continue;
      const marker = [RUN_FILES.metrics, RUN_FILES.config].map((f) => path.join(dir, f)).find((f) => fs.existsSync(f));
      if (marker) runs.push({ dir, mtime: fs.statSync(marker).mtimeMs });
    } catch {
      // vanished while listing
    }
  }
  return runs.sort((a, b) => b.mtime - a.mtime);
}

/** `checkpoints/step-N.safetensors` of a run, newest first. */
export function listCheckpoints(runDir: string): { step: number; file: string }[] {
  let names: string[];
  try {
    names = fs.readdirSync(path.join(runDir, RUN_FILES.checkpoints));
  } catch {
    return [];
  }
  return names
    .map((f) => ({ step: stepOf(CHECKPOINT_FILE, f), file: path.join(runDir, RUN_FILES.checkpoints, f) }))
    .filter((c): c is { step: number; file: string } => c.step !== undefined)
    .sort((a, b) => b.step - a.step);
}

/** What a run's row in the Runs view says. */
interface RunRow {
  label: string;
  description: string | undefined;
  tooltip: string;
  /** A codicon's id. */
  icon: string;
  contextValue: 'run' | 'run.training';
}

export type RunNode =
  | { kind: 'run'; dir: string }
  | { kind: 'checkpoint'; runDir: string; step: number; file: string }
  | { kind: 'empty'; message: string };

export class RunsProvider implements vscode.TreeDataProvider<RunNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<RunNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly subs: vscode.Disposable[] = [this.changed];
  private timer: NodeJS.Timeout | undefined;
  /** What the rows said at the last refresh (shown()). */
  private lastShown = '';

  constructor(
    private readonly training: TrainingSession,
    private readonly viewer: Viewer,
  ) {
    const watcher = vscode.workspace.createFileSystemWatcher('**/{metrics.jsonl,checkpoints/*.safetensors}');
    const later = (): void => this.refreshSoon();
    this.subs.push(
      watcher,
      watcher.onDidCreate(later),
      watcher.onDidDelete(later),
      watcher.onDidChange(later),
      training.onDidEnd(() => this.refresh()),
      training.onDidResume(() => this.refresh()),
      viewer.onDidChange(() => this.refreshSoon()),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('attentionDebugger.runFolder')) this.refresh();
      }),
    );
  }

  refresh(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.lastShown = this.shown();
    this.changed.fire(undefined);
  }

  /** A refresh a second from now, if the rows would then read differently. */
  private refreshSoon(): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      if (this.shown() !== this.lastShown) this.refresh();
    }, 1000);
  }

  /** The rows' order and what each says, in one string: what a refresh would show. */
  private shown(): string {
    const rows = this.listed().map((r) => [r.parent, this.runRow(r.dir), listCheckpoints(r.dir).map((c) => c.step)]);
    return JSON.stringify(rows);
  }

  /** What a run's row says: the one description of a row, read by getTreeItem and by shown(). */
  private runRow(dir: string): RunRow {
    const live = this.training.runDir === dir;
    const selected = this.viewer.selection?.runDir === dir;
    const fork = forkOf(dir);
    // Not live: its status.json's end marker (paused, diverged, failed…), which train/ended refreshes.
    const ended = live ? undefined : readRunState(dir);
    const state = ended && ended.state !== 'running' ? ended : undefined;
    const stateNote = state ? `${STATE_LABELS[state.state]}${state.step !== undefined ? ` @${state.step}` : ''}` : '';
    const notes = [fork ? `fork @${fork.step}` : '', live ? 'training' : stateNote, selected ? 'selected' : ''];
    const stateIcon = state ? STATE_ICONS[state.state] : undefined;
    return {
      label: path.basename(dir),
      description: notes.filter(Boolean).join(', ') || undefined,
      tooltip: fork ? `${dir}\nforked from ${fork.parent} at step ${fork.step}` : dir,
      icon: live ? 'pulse' : (stateIcon ?? (fork ? 'repo-forked' : 'folder')),
      contextValue: live ? 'run.training' : 'run',
    };
  }

  /** The listed runs, each with the listed run it forks (forks sit under their parent). */
  private listed(): { dir: string; parent?: string }[] {
    const root = runsRoot();
    const runs = root ? listRuns(root) : [];
    // A live run, and the run the views show, outside the run folder (tests, a custom path, a run
    // opened from elsewhere) are listed too: the view never says "No runs yet" beside an open run.
    const selected = this.viewer.selection?.runDir;
    for (const dir of [selected && fs.existsSync(selected) ? selected : undefined, this.training.runDir])
      if (dir && !runs.some((r) => r.dir === dir)) runs.unshift({ dir, mtime: Date.now() });
    const dirs = new Set(runs.map((r) => r.dir));
    return runs.map((r) => {
      const parent = forkOf(r.dir)?.parent;
      return parent && dirs.has(parent) && parent !== r.dir ? { dir: r.dir, parent } : { dir: r.dir };
    });
  }

  getChildren(node?: RunNode): RunNode[] {
    // Nothing to list: [] lets the view's welcome content (package.json viewsWelcome) show.
    if (!node) return this.listed().flatMap((r) => (r.parent ? [] : [{ kind: 'run', dir: r.dir }]));
    if (node.kind === 'run') {
      const forks = this.listed().filter((r) => r.parent === node.dir);
      const checkpoints = listCheckpoints(node.dir).map(
        (c): RunNode => ({ kind: 'checkpoint', runDir: node.dir, step: c.step, file: c.file }),
      );
      return [...forks.map((f): RunNode => ({ kind: 'run', dir: f.dir })), ...checkpoints];
    }
    return [];
  }

  /** A checkpoint's run, a fork's parent (VS Code needs it to reveal a node). */
  getParent(node: RunNode): RunNode | undefined {
    if (node.kind === 'checkpoint') return { kind: 'run', dir: node.runDir };
    const parent = node.kind === 'run' ? this.listed().find((r) => r.dir === node.dir)?.parent : undefined;
    return parent ? { kind: 'run', dir: parent } : undefined;
  }

  getTreeItem(node: RunNode): vscode.TreeItem {
    if (node.kind === 'empty') return new vscode.TreeItem(node.message, vscode.TreeItemCollapsibleState.None);
    if (node.kind === 'run') {
      // A click selects the run and expands it (no command: a command would stop the expansion);
      // its inline buttons open the dashboard and, when stopped, resume it.
      const row = this.runRow(node.dir);
      const item = new vscode.TreeItem(row.label, vscode.TreeItemCollapsibleState.Collapsed);
      item.id = `run:${node.dir}`;
      item.description = row.description;
      item.tooltip = row.tooltip;
      item.iconPath = new vscode.ThemeIcon(row.icon);
      item.contextValue = row.contextValue;
      return item;
    }
    const item = new vscode.TreeItem(`step ${node.step}`, vscode.TreeItemCollapsibleState.None);
    item.id = `ckpt:${node.file}`;
    item.tooltip = node.file;
    item.iconPath = new vscode.ThemeIcon('save');
    item.contextValue = 'checkpoint';
    // No arguments: VS Code keeps a command's arguments only until the tree refreshes (every second
    // while a run trains), and a click in between failed with "Actual command not found". The
    // command reads the clicked row from the tree's selection instead (showClickedCheckpoint).
    item.command = { command: SHOW_CLICKED_CHECKPOINT, title: 'Show Attention' };
    return item;
  }

  dispose(): void {
    clearTimeout(this.timer);
    for (const d of this.subs.splice(0)) d.dispose();
  }
}

/** The command of a checkpoint row's click (registered by extension.ts, not in the command palette). */
export const SHOW_CLICKED_CHECKPOINT = 'attentionDebugger.runs.showClickedCheckpoint';

/**
 * A checkpoint row's click: the row is the tree's selection (VS Code selects a row before it runs its
 * command). Selected rows are kept by their ids, which outlive a refresh; while a refresh is under
 * way (seconds on a machine busy training) the row is looked up again for up to 10 s.
 */
export async function showClickedCheckpoint(view: vscode.TreeView<RunNode>): Promise<unknown> {
  for (let i = 0; i < 200; i++) {
    const node = view.selection[0];
    if (node?.kind === 'checkpoint')
      return vscode.commands.executeCommand('attentionDebugger.showCheckpoint', {
        runDir: node.runDir,
        step: node.step,
      });
    await new Promise((r) => setTimeout(r, 50));
  }
  return undefined;
}

/** Runs whose row the highlight is revealing: the selection changes that causes are not a person's click. */
const highlighting = new Map<string, number>();

/** Whether `runDir`'s row is being selected by highlightSelectedRun, not by a person. */
export function highlightInFlight(runDir: string): boolean {
  return (highlighting.get(runDir) ?? 0) > 0;
}

/**
 * Keeps the Runs tree's highlight on the selected run when something other than a click selected
 * it (Open Run, a panel, a fork, the start of a run): its row is revealed selected, the focus left
 * where it is. A row of that run (a checkpoint) that is highlighted already stays. `selected` is
 * read at each try, so a retry never highlights (and so selects) a run the user has left.
 */
export function highlightSelectedRun(
  view: vscode.TreeView<RunNode>,
  selected: () => string | undefined,
  tries = 6,
): void {
  const runDir = selected();
  if (!runDir || !view.visible) return;
  const node = view.selection[0];
  const highlighted = node?.kind === 'run' ? node.dir : node?.kind === 'checkpoint' ? node.runDir : undefined;
  if (highlighted === runDir) return;
  // A view just shown, or a run folder just made, may not have its row yet (the tree refreshes a
  // second after a file changes): tried again for 3 s. A run outside the
  // listed folders has no row: nothing to highlight.
  highlighting.set(runDir, (highlighting.get(runDir) ?? 0) + 1);
  const done = (): void => {
    const n = (highlighting.get(runDir) ?? 1) - 1;
    if (n > 0) highlighting.set(runDir, n);
    else highlighting.delete(runDir);
  };
  view.reveal({ kind: 'run', dir: runDir }, { select: true, focus: false }).then(done, () => {
    done();
    if (tries > 1) setTimeout(() => highlightSelectedRun(view, selected, tries - 1), 500);
  });
}

interface Field {
  label: string;
  value: string;
}

/** The live (or last opened) run in a few lines. */
export class CurrentRunProvider implements vscode.TreeDataProvider<Field>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Field | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly subs: vscode.Disposable[] = [this.changed];
  private last = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly training: TrainingSession) {
    // At most 4 redraws a second: metrics can arrive every few milliseconds.
    this.subs.push(training.onDidChange(() => this.refreshSoon()));
  }

  private refreshSoon(): void {
    if (this.timer) return;
    const wait = Math.max(0, 250 - (Date.now() - this.last));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.last = Date.now();
      this.changed.fire(undefined);
    }, wait);
  }

  /** Training, or how the run ended (paused, diverged…: train/ended, else its status.json). */
  private stateOf(runDir: string): string {
    if (this.training.runDir === runDir) return 'training';
    const end = this.training.lastEnd;
    const state = end?.runDir === runDir ? end.reason : readRunState(runDir)?.state;
    return state && state !== 'running' ? STATE_LABELS[state] : 'idle';
  }

  /** The lines shown, also for tests. */
  fields(): Field[] {
    const s = this.training.summary;
    if (!s) return [{ label: 'No run', value: 'Train or open a run' }];
    const r = this.training.runDir === s.runDir ? this.training.lastRow : undefined;
    const out: Field[] = [
      { label: 'Run', value: path.basename(s.runDir) },
      { label: 'State', value: this.stateOf(s.runDir) },
      { label: 'Step', value: `${r?.step ?? s.step} / ${s.totalSteps}` },
    ];
    if (r) {
      out.push(
        { label: 'Loss', value: r.loss.toFixed(4) },
        { label: 'LR', value: r.lr.toExponential(3) },
        { label: 'Tokens/s', value: Math.round(r.tokensPerSec).toLocaleString('en-US') },
      );
      // The last validation's scores stay until the next, with their step (most rows have none).
      const v = this.training.lastValidatedRow;
      if (v?.valLoss !== undefined) out.push({ label: 'Val loss', value: `${v.valLoss.toFixed(4)} (step ${v.step})` });
      if (v?.valBleu !== undefined) out.push({ label: 'Val BLEU', value: `${v.valBleu.toFixed(2)} (step ${v.step})` });
    }
    out.push({
      label: 'Model',
      value: `d_model ${s.dModel}, ${s.heads} heads, ${s.encoderLayers}+${s.decoderLayers} layers`,
    });
    return out;
  }

  getChildren(node?: Field): Field[] {
    return node ? [] : this.fields();
  }

  getTreeItem(f: Field): vscode.TreeItem {
    const item = new vscode.TreeItem(f.label, vscode.TreeItemCollapsibleState.None);
    item.description = f.value;
    item.tooltip = `${f.label}: ${f.value}`;
    return item;
  }

  dispose(): void {
    clearTimeout(this.timer);
    for (const d of this.subs.splice(0)) d.dispose();
  }
}
