/** Open Run, the panels' Open commands, Show Positional Encoding, Show Engine Info, Refresh Runs. */
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { type EngineInfo, engineInfo } from '../../protocol/engine';
import { positional, runOpen } from '../../protocol/training';
import { toPositionalPayload } from '../convert';
import { type Cmd, type Ctx, errorText, guarded } from '../ctx';
import { scheduleOf } from '../training';
import { runsRoot } from '../views';

export function showEngineInfo(ctx: Ctx): Cmd {
  return async (): Promise<EngineInfo | undefined> => {
    try {
      const info = await ctx.engine.request(engineInfo);
      void vscode.window.showInformationMessage(
        `Attention Debugger engine ${info.version}: backend ${info.backend} ` +
          `(available: ${info.backends.join(', ') || 'none'}); matMul: ${info.matmul}; GPU: ${info.adapter}`,
      );
      return info;
    } catch (err) {
      ctx.log(`engine/info failed: ${errorText(err)}`);
      void vscode.window.showErrorMessage(`Attention Debugger: the engine did not answer: ${errorText(err)}`);
      return undefined;
    }
  };
}

/** A run folder (or a PyTorch checkpoint folder) on disk: its metrics on the dashboard. */
export function openRun(ctx: Ctx): Cmd {
  return guarded(ctx, 'Open Run', async (args: { runDir?: string } = {}) => {
    let runDir = args.runDir;
    if (!runDir) {
      const root = runsRoot();
      const folder = await vscode.window.showOpenDialog({
        canSelectFolders: true,
        canSelectFiles: false,
        openLabel: 'Open Run',
        title: 'A run folder, or a checkpoint folder (config.json + model.safetensors) written by PyTorch',
        defaultUri: root && fs.existsSync(root) ? vscode.Uri.file(root) : undefined,
      });
      runDir = folder?.[0]?.fsPath;
    }
    if (!runDir) return undefined;
    const { panels, training } = ctx;
    const opened = await ctx.engine.request(runOpen, { runDir });
    if (training.runDir === opened.summary.runDir) panels.appendMetrics(opened.rows, true);
    else {
      panels.appendMetrics(opened.rows, true);
      panels.setSchedule(scheduleOf(opened.summary));
      training.setOpened(opened.summary);
    }
    panels.openDashboard();
    return opened;
  });
}

export function openDashboard(ctx: Ctx): Cmd {
  return () => void ctx.panels.openDashboard();
}

export function openAttention(ctx: Ctx): Cmd {
  return () => void ctx.panels.openAttention();
}

export function refreshRuns(ctx: Ctx): Cmd {
  return () => ctx.refreshRuns();
}

/** The positional encoding of the current run (learned or sinusoidal), or the sinusoid for a width. */
export function showPositional(ctx: Ctx): Cmd {
  return guarded(
    ctx,
    'Show Positional Encoding',
    async (args: { runDir?: string; dModel?: number; positions?: number } = {}) => {
      const runDir = args.runDir ?? ctx.training.runDir ?? ctx.training.summary?.runDir;
      const params = runDir
        ? { runDir, ...(args.positions ? { positions: args.positions } : {}) }
        : { dModel: args.dModel ?? 64, positions: args.positions ?? 100 };
      const result = await ctx.engine.request(positional, params);
      const payload = toPositionalPayload(result, 'positional result');
      ctx.panels.showPositional(payload);
      ctx.panels.openPositional();
      return { shape: payload.shape, learned: result.learned };
    },
  );
}
