/** Train, Stop Training, Resume Training and the status bar's actions. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { CHECKPOINT_FILE, RUN_FILES } from '../../protocol/runFolder';
import {
  type DataChoice,
  ENGINE_ERROR,
  type ResumeParams,
  type RunSummary,
  type TrainParams,
} from '../../protocol/training';
import { absolute, type Cmd, type Ctx, guarded, runDirOf } from '../ctx';
import { dataLabel, pickAdvanced, pickConfig, pickData, pickRun, stamp, type TrainingChoices } from '../pickers';
import { checksSetting, settings } from '../settings';
import { type CheckMode, type CheckName, HEALTH_CHECKS } from '../../protocol/telemetry';
import { runsRoot } from '../views';
import type { TrainingSession } from '../training';

export interface TrainArgs extends TrainingChoices {
  data?: DataChoice;
  /** tiny | small | base | big, or a JSON config file. */
  config?: string;
  runDir?: string;
  /** Open the dashboard and the attention view (default true). */
  openPanels?: boolean;
}

export interface ResumeArgs {
  runDir?: string;
  /** A new step budget. */
  steps?: number;
  /** For a run that already finished: train this many more steps (asked when absent). */
  more?: number;
  /** Health checks to switch, e.g. a breakpoint's check off ("Disable Check"). */
  checks?: ResumeParams['checks'];
}

export interface StopArgs {
  /** Ask before stopping a run whose newest checkpoint is old (default: ask when run by a person). */
  confirm?: boolean;
}

const LAST_CHOICES = 'attentionDebugger.lastTrainChoices';

/** Asks what to train (data, model, advanced settings, folder) unless `args` says, then starts the run. */
export function train(ctx: Ctx): Cmd {
  return guarded(ctx, 'Train', async (args: TrainArgs = {}): Promise<RunSummary | undefined> => {
    if (!(await trusted('Training'))) return undefined;
    const { training, panels } = ctx;
    if (training.training && args.data && args.config) {
      // From code (tests, other extensions): say why, change nothing.
      void vscode.window.showWarningMessage(
        `Attention Debugger: ${path.basename(training.runDir!)} is training; the engine trains one run at a time.`,
      );
      return undefined;
    }
    if (training.training) {
      // One run trains at a time: say so, and offer the way on instead of hiding the command.
      const live = path.basename(training.runDir!);
      const choice = await vscode.window.showWarningMessage(
        `Attention Debugger: ${live} is training, and the engine trains one run at a time.`,
        { modal: true, detail: 'Stop it (a checkpoint is written first) and set up a new run?' },
        'Stop and Train',
      );
      if (choice !== 'Stop and Train') return undefined;
      await training.stop();
    }
    const last = ctx.workspaceState.get<TrainArgs>(LAST_CHOICES) ?? {};
    const data = args.data ?? (await pickData(last.data));
    if (!data) return undefined;
    const config = args.config ?? (await pickConfig(last.config));
    if (!config) return undefined;
    const interactive = args.data === undefined || args.config === undefined;
    const advanced = interactive ? await pickAdvanced(last, !isPreset(config)) : args;
    if (!advanced) return undefined;
    const given = args.runDir ?? (await askRunFolder(data, config));
    if (!given) return undefined;
    const runDir = absolute(given);
    if (interactive) await ctx.workspaceState.update(LAST_CHOICES, { data, config, ...advanced });
    const snapshotEvery = settings().get<number>('snapshotInterval') ?? 0; // 0: the config's training.snapshot_every
    const params: TrainParams = {
      runDir,
      data,
      config: isPreset(config) ? config : absolute(config),
      ...(advanced.steps ? { steps: advanced.steps } : {}),
      ...(advanced.warmup ? { warmup: advanced.warmup } : {}),
      ...(advanced.lrFactor ? { lrFactor: advanced.lrFactor } : {}),
      ...(advanced.batchTokens ? { batchTokens: advanced.batchTokens } : {}),
      ...(snapshotEvery > 0 ? { snapshotEvery } : {}),
      ...checksOf(advanced.breakOn),
    };
    const summary = await training.start(params);
    if (args.openPanels !== false) {
      // Side by side, whichever column was active (its tab group lags behind a panel just opened).
      panels.openDashboard(vscode.ViewColumn.One);
      panels.openAttention(vscode.ViewColumn.Two);
    }
    const started =
      `Attention Debugger: training ${path.basename(runDir)} (${summary.totalSteps} steps). ` +
      'Progress is in the status bar and the Current Run view.';
    // With the panels open their headers say it: a toast would cover the attention grid (issue 26 item 14).
    if (args.openPanels === false) void vscode.window.showInformationMessage(started);
    else if (training.runDir) sayWhileTraining(training, training.runDir, started);
    ctx.refreshRuns();
    return summary;
  });
}

/**
 * `text` in the status bar for ten seconds, or until the run in `runDir` ends (a short run ends
 * sooner, and then its "progress is in the status bar" would point at a run that is over).
 */
function sayWhileTraining(training: TrainingSession, runDir: string, text: string): void {
  const message = vscode.window.setStatusBarMessage(text);
  const done = (): void => {
    clearTimeout(timer);
    message.dispose();
    ended.dispose();
  };
  const timer = setTimeout(done, 10_000);
  const ended = training.onDidEnd((e) => e.runDir === runDir && done());
}

/** tiny, small, base, big: a preset's name; anything else is a JSON config file. */
const isPreset = (config: string): boolean => /^[a-z]+$/.test(config);

/**
 * The checks' modes for train/start: the setting's, and where the wizard asked Break on, the
 * health checks picked break and the others warn (those the setting turns off stay off); `watch`
 * keeps the setting's mode.
 */
function checksOf(breakOn: CheckName[] | undefined): { checks?: Partial<Record<CheckName, CheckMode>> } {
  const setting = checksSetting();
  if (!breakOn) return setting;
  const modes = (c: CheckName): CheckMode =>
    breakOn.includes(c) ? 'break' : setting.checks?.[c] === 'off' ? 'off' : 'warn';
  const watch = setting.checks?.watch;
  return { checks: { ...Object.fromEntries(HEALTH_CHECKS.map((c) => [c, modes(c)])), ...(watch ? { watch } : {}) } };
}

/** Training writes files and runs the engine's native code: in Restricted Mode it asks for trust first. */
export async function trusted(what: string): Promise<boolean> {
  if (vscode.workspace.isTrusted) return true;
  const manage = 'Manage Workspace Trust';
  const choice = await vscode.window.showWarningMessage(
    `Attention Debugger: ${what} needs a trusted workspace; in Restricted Mode runs can be opened and inspected only.`,
    manage,
  );
  if (choice === manage) await vscode.commands.executeCommand('workbench.trust.manage');
  return false;
}

async function askRunFolder(data: DataChoice, config: string): Promise<string | undefined> {
  const root = runsRoot();
  const name = `${dataLabel(data)}-${path.basename(config, '.json')}-${stamp()}`;
  const value = root ? path.join(root, name) : name;
  return vscode.window.showInputBox({
    title: 'Attention Debugger: Train (4/4) — run folder',
    value,
    valueSelection: [value.length - name.length, value.length],
    prompt: 'Checkpoints, metrics and the vocabulary go here',
  });
}

/** Seconds since the run's newest checkpoint was written (Infinity without one). */
function checkpointAge(runDir: string): number {
  const dir = path.join(runDir, RUN_FILES.checkpoints);
  let newest = 0;
  try {
    for (const f of fs.readdirSync(dir))
      if (CHECKPOINT_FILE.test(f)) newest = Math.max(newest, fs.statSync(path.join(dir, f)).mtimeMs);
  } catch {
    // no checkpoints folder yet
  }
  return newest ? (Date.now() - newest) / 1000 : Infinity;
}

/** Stops the live run after its step in progress, with a checkpoint; asks first when its last one is old. */
export function stop(ctx: Ctx): Cmd {
  return guarded(ctx, 'Stop', async (args: StopArgs = {}) => {
    const runDir = ctx.training.runDir;
    if (!runDir) {
      void vscode.window.showInformationMessage('Attention Debugger: no run is training.');
      return null;
    }
    const age = checkpointAge(runDir);
    if (args.confirm !== false && age > 60) {
      const step = ctx.training.lastRow?.step;
      const choice = await vscode.window.showWarningMessage(
        `Stop training ${path.basename(runDir)}${step ? ` at step ${step}` : ''}?`,
        {
          modal: true,
          detail:
            (age === Infinity ? 'It has no checkpoint yet. ' : `Its newest checkpoint is ${Math.round(age)} s old. `) +
            'A checkpoint is written before it stops, and Resume goes on from it.',
        },
        'Stop Training',
      );
      if (choice !== 'Stop Training') return null;
    }
    const stopped = await ctx.training.stop();
    // A person's Stop is answered in a dialog (a notification may go unseen, straight to the centre).
    if (stopped && args.confirm !== false)
      void vscode.window.showInformationMessage(
        `Attention Debugger: ${path.basename(stopped.runDir)} stopped at step ${stopped.step}.`,
        { modal: true, detail: `Its checkpoint of step ${stopped.step} is written; Resume Training goes on from it.` },
      );
    return stopped;
  });
}

/** Goes on training a run from its newest checkpoint; a finished run asks how many more steps. */
export function resume(ctx: Ctx): Cmd {
  return guarded(ctx, 'Resume', async (arg?: ResumeArgs | unknown) => {
    const args = (arg ?? {}) as ResumeArgs;
    if (!(await trusted('Resuming a run'))) return undefined;
    const runDir = runDirOf(arg) ?? (await pickRun(ctx, 'Resume which run?', false));
    if (!runDir) return undefined;
    try {
      return await ctx.training.resume(runDir, args.steps, args.checks);
    } catch (err) {
      const e = err as { code?: number; data?: { step?: number } };
      if (e.code !== ENGINE_ERROR.runFinished || typeof e.data?.step !== 'number') throw err;
      const more = args.more ?? (await askMoreSteps(path.basename(runDir), e.data.step));
      return more ? ctx.training.resume(runDir, e.data.step + more, args.checks) : undefined;
    }
  });
}

async function askMoreSteps(name: string, step: number): Promise<number | undefined> {
  const value = await vscode.window.showInputBox({
    title: `Attention Debugger: ${name} already finished at step ${step}`,
    prompt: 'Train how many more steps? (the step budget grows; the learning-rate schedule goes on)',
    value: '500',
    validateInput: (v) => (/^[1-9]\d*$/.test(v.trim()) ? undefined : 'a whole number of steps, 1 or more'),
  });
  return value ? Number(value.trim()) : undefined;
}

/** The status bar item's click: what a person does with the running run, or with the run that ended last. */
export function trainingActions(ctx: Ctx): Cmd {
  return async () => {
    // Once the run ended the item shows how (training.ts): Resume goes on with it.
    const ended = ctx.training.training ? undefined : ctx.training.lastEnd?.runDir;
    const items: { label: string; command: string; args?: unknown }[] = [
      { label: '$(graph-line) Open Dashboard', command: 'attentionDebugger.openDashboard' },
      { label: '$(eye) Open Attention View', command: 'attentionDebugger.openAttention' },
      ended
        ? { label: '$(debug-continue) Resume Training', command: 'attentionDebugger.resume', args: { runDir: ended } }
        : { label: '$(debug-stop) Stop Training', command: 'attentionDebugger.stop' },
    ];
    const run = ctx.training.runDir ?? ended;
    const pick = await vscode.window.showQuickPick(items, {
      title: `Attention Debugger: ${run ? path.basename(run) : 'no run'}`,
    });
    if (pick) await vscode.commands.executeCommand(pick.command, ...(pick.args ? [pick.args] : []));
  };
}
