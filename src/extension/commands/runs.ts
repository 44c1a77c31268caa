/** Open Run, the panels' Open commands, Show Positional Encoding, Show Engine Info, Refresh Runs. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { EngineInfo } from '../../protocol/engine';
import { RUN_FILES } from '../../protocol/runFolder';
import { engineInfo, positional, runOpen } from '../../protocol/methods';
import { toPositionalPayload } from '../convert';
import { absolute, type Cmd, type Ctx, guarded, runDirOf } from '../ctx';
import { errorText } from '../errorText';
import { CTX_RUN_OPENED } from '../training';
import { listRuns, runsRoot } from '../views';

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

/** Why a folder cannot be opened as a run, in words (checked before the engine is asked). */
function notARun(dir: string): string | undefined {
  if (!fs.existsSync(dir)) return `${dir} does not exist`;
  if (!fs.statSync(dir).isDirectory()) return `${dir} is a file, not a run folder`;
  if (!fs.existsSync(path.join(dir, RUN_FILES.config)))
    return `This folder is not a run: it has no ${RUN_FILES.config} (${dir})`;
  return undefined;
}

/**
 * A run folder (or a PyTorch checkpoint folder) on disk becomes the selection: its metrics, history
 * and attention. A folder another process writes is followed: what lands shows as it lands.
 */
export function openRun(ctx: Ctx): Cmd {
  return openFolder(
    ctx,
    'Open Run',
    'A run folder, or a checkpoint folder (config.json + model.safetensors) written by PyTorch',
  );
}

/** Open Run for a folder a trainer elsewhere writes (a PyTorch RunWriter, a torchrun job), said so. */
export function followRun(ctx: Ctx): Cmd {
  const open = openFolder(ctx, 'Follow Run Folder', 'A run folder another process writes (a PyTorch RunWriter)');
  return async (arg?: unknown) => {
    const opened = (await open(arg)) as { summary: { runDir: string } } | undefined;
    if (opened) {
      const activity = ctx.viewer.header().activity ?? 'training here';
      void vscode.window.showInformationMessage(
        `Attention Debugger: following ${path.basename(opened.summary.runDir)} (${activity}): ` +
          'metrics, snapshots and checkpoints show as they land.',
      );
    }
    return opened;
  };
}

function openFolder(ctx: Ctx, name: string, title: string): Cmd {
  return guarded(ctx, name, async (arg?: unknown) => {
    let runDir = runDirOf(arg);
    for (;;) {
      if (!runDir) {
        const root = runsRoot();
        const folder = await vscode.window.showOpenDialog({
          canSelectFolders: true,
          canSelectFiles: false,
          openLabel: name,
          title,
          defaultUri: root && fs.existsSync(root) ? vscode.Uri.file(root) : undefined,
        });
        runDir = folder?.[0]?.fsPath;
      }
      if (!runDir) return undefined;
      const why = notARun(runDir);
      if (!why) break;
      const again = await vscode.window.showErrorMessage(`Attention Debugger: ${why}.`, 'Pick Another Folder…');
      if (again !== 'Pick Another Folder…') return undefined;
      runDir = undefined;
    }
    await ctx.viewer.selectRun(runDir);
    ctx.panels.openDashboard();
    void vscode.commands.executeCommand('setContext', CTX_RUN_OPENED, true);
    return { summary: ctx.viewer.run!, rows: ctx.panels.store.rows };
  });
}

/**
 * Draws other runs on the dashboard with the selected one (loss, LR, tokens/s, gradient norm),
 * each from its first logged step; asks which when not given. No runs given or picked: clears them.
 */
export function compareRuns(ctx: Ctx): Cmd {
  return guarded(ctx, 'Compare Runs', async (args: { runDirs?: string[] } = {}) => {
    const selected = ctx.viewer.selection?.runDir;
    if (!selected) throw new Error('no run is selected: open a run first, then compare others with it');
    let dirs = args.runDirs?.map(absolute);
    if (!dirs) {
      const root = runsRoot();
      const items = (root ? listRuns(root) : [])
        .filter((r) => r.dir !== selected)
        .map((r) => ({
          label: path.basename(r.dir),
          detail: r.dir,
          picked: ctx.panels.store.overlays.some((o) => o.runDir === r.dir),
        }));
      if (!items.length) throw new Error(`there is no other run in ${root ?? 'the run folder'} to compare with`);
      const picks = await vscode.window.showQuickPick(items, {
        title: `Draw which runs with ${path.basename(selected)}?`,
        canPickMany: true,
      });
      if (!picks) return undefined;
      dirs = picks.map((p) => p.detail);
    }
    const runs = await Promise.all(
      dirs.map(async (runDir) => ({
        run: path.basename(runDir),
        runDir,
        rows: (await ctx.engine.request(runOpen, { runDir })).rows,
      })),
    );
    ctx.panels.showOverlays(runs);
    ctx.panels.openDashboard();
    return runs.map((r) => ({ runDir: r.runDir, first: r.rows[0]?.step, steps: r.rows.length }));
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
      const runDir = args.runDir ?? ctx.viewer.selection?.runDir ?? ctx.training.runDir;
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
