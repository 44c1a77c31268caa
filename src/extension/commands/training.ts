/** Train, Stop Training and Resume Training. */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { type DataChoice, type RunSummary, runOpen } from '../../protocol/training';
import { type Cmd, type Ctx, guarded } from '../ctx';
import { dataLabel, pickConfig, pickData, pickRun, stamp } from '../pickers';
import { settings } from '../settings';
import { runsRoot } from '../views';

export interface TrainArgs {
  data?: DataChoice;
  /** tiny | small | base | big, or a JSON config file. */
  config?: string;
  runDir?: string;
  steps?: number;
  /** Open the dashboard and the attention view (default true). */
  openPanels?: boolean;
  /** Show the cancellable progress notification (default true). */
  progress?: boolean;
}

export interface ResumeArgs {
  runDir?: string;
  steps?: number;
  progress?: boolean;
}

/** Asks what to train (data, model, folder) unless `args` says, then starts the run in the engine. */
export function train(ctx: Ctx): Cmd {
  return guarded(ctx, 'Train', async (args: TrainArgs = {}): Promise<RunSummary | undefined> => {
    const { training, panels } = ctx;
    if (training.training) {
      void vscode.window.showWarningMessage(
        `Attention Debugger: ${path.basename(training.runDir!)} is training; stop it before starting another run.`,
      );
      return undefined;
    }
    const data = args.data ?? (await pickData());
    if (!data) return undefined;
    const config = args.config ?? (await pickConfig());
    if (!config) return undefined;
    const runDir = args.runDir ?? (await askRunFolder(data, config));
    if (!runDir) return undefined;
    const snapshotEvery = settings().get<number>('snapshotInterval') ?? 0; // 0: the config's training.snapshot_every
    const summary = await training.start({
      runDir,
      data,
      config,
      ...(args.steps ? { steps: args.steps } : {}),
      ...(snapshotEvery > 0 ? { snapshotEvery } : {}),
    });
    if (args.openPanels !== false) {
      panels.openDashboard(vscode.ViewColumn.One);
      panels.openAttention(vscode.ViewColumn.Beside);
    }
    if (args.progress !== false) training.showProgress();
    ctx.refreshRuns();
    return summary;
  });
}

async function askRunFolder(data: DataChoice, config: string): Promise<string | undefined> {
  const root = runsRoot();
  const name = `${dataLabel(data)}-${path.basename(config, '.json')}-${stamp()}`;
  const value = root ? path.join(root, name) : name;
  return vscode.window.showInputBox({
    title: 'Attention Debugger: Train (3/3) — run folder',
    value,
    valueSelection: [value.length - name.length, value.length],
    prompt: 'Checkpoints, metrics and the vocabulary go here',
  });
}

export function stop(ctx: Ctx): Cmd {
  return guarded(ctx, 'Stop', async () => {
    if (!ctx.training.training) {
      void vscode.window.showInformationMessage('Attention Debugger: no run is training.');
      return null;
    }
    return ctx.training.stop();
  });
}

/** Goes on training a run from its newest checkpoint. */
export function resume(ctx: Ctx): Cmd {
  return guarded(ctx, 'Resume', async (args: ResumeArgs = {}) => {
    const runDir = args.runDir ?? (await pickRun(ctx, 'Resume which run?', false));
    if (!runDir) return undefined;
    const summary = await ctx.training.resume(runDir, args.steps);
    const opened = await ctx.engine.request(runOpen, { runDir });
    ctx.panels.appendMetrics(opened.rows, true);
    ctx.panels.openDashboard();
    if (args.progress !== false) ctx.training.showProgress();
    return summary;
  });
}
