/**
 * Export Run Report… (issue 33 item 1): a run's report as one self-contained HTML file that opens
 * offline in any browser. Asks which run (the Runs view's item, the dashboard's run, or a pick) and
 * where to save it (default `<run>-report.html` beside the run folder); the engine writes it whole
 * (report/write: only the engine reads snapshots) while a cancellable notification says so; then
 * offers to open it. The tree the Beam Tree panel shows goes into the report when it is of that run.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { reportWrite } from '../../protocol/methods';
import { REPORT_MAX_BEAM_NODES, type ReportWriteResult } from '../../protocol/report';
import type { BeamTreeView } from '../../protocol/beamTree';
import { type Cmd, type Ctx, absolute, guarded, runDirOf } from '../ctx';
import { BeamTreePanel } from '../panels';
import { pickRun } from '../pickers';

export interface ExportReportArgs {
  runDir?: string;
  /** The file to write; given, no save dialog is shown and a file there is replaced. */
  out?: string;
  /** Snapshot steps to include (default every one). */
  steps?: number[];
  /** Probe pairs to include (default pair 0). */
  pairs?: number[];
}

/**
 * The tree the open Beam Tree panel shows, where it is of `runDir` (the same folder, however named);
 * one past the report's bound is left out, and the log says so, rather than refusing the report.
 */
function beamOf(ctx: Ctx, runDir: string): { beam?: BeamTreeView } {
  const tree = BeamTreePanel.slot.current?.shownTree;
  if (!tree || path.resolve(tree.runDir) !== path.resolve(runDir)) return {};
  if (tree.nodes.length <= REPORT_MAX_BEAM_NODES) return { beam: tree };
  ctx.log(
    `the report leaves out the beam tree: ${tree.nodes.length} nodes, over the ${REPORT_MAX_BEAM_NODES} it holds`,
  );
  return {};
}

export function exportRunReport(ctx: Ctx): Cmd {
  return guarded(ctx, 'Export Run Report', async (arg?: unknown): Promise<ReportWriteResult | undefined> => {
    const args = (typeof arg === 'object' && arg !== null ? arg : {}) as ExportReportArgs;
    // The dashboard's title button passes no run: the run it shows is the selection.
    const runDir =
      runDirOf(arg) ?? ctx.viewer.selection?.runDir ?? (await pickRun(ctx, 'Export the report of which run?'));
    if (!runDir) return undefined;
    const name = path.basename(runDir);
    const out =
      args.out !== undefined
        ? absolute(args.out)
        : (
            await vscode.window.showSaveDialog({
              title: `Export the report of ${name}`,
              defaultUri: vscode.Uri.file(path.join(path.dirname(runDir), `${name}-report.html`)),
              filters: { 'HTML report': ['html'] },
              saveLabel: 'Export Report',
            })
          )?.fsPath;
    if (!out) return undefined;
    const written = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Attention Debugger: writing the report of ${name}`,
        cancellable: true,
      },
      (_progress, token) => {
        const cancelled = new Promise<undefined>((resolve) => token.onCancellationRequested(() => resolve(undefined)));
        // The save dialog (or the caller's `out`) has already agreed to replace a file there.
        const params = {
          runDir,
          out,
          force: true,
          ...(args.steps ? { steps: args.steps } : {}),
          ...(args.pairs ? { pairs: args.pairs } : {}),
          ...beamOf(ctx, runDir),
        };
        return Promise.race([ctx.engine.request(reportWrite, params, token), cancelled]);
      },
    );
    if (!written) return undefined; // cancelled: the engine writes whole or not at all
    const mb = (written.bytes / 1e6).toFixed(1);
    void vscode.window
      .showInformationMessage(
        `Attention Debugger: the report of ${name} is written: ${written.out} (${mb} MB, ${written.steps.length} snapshots).`,
        'Open',
      )
      .then((choice) => choice === 'Open' && vscode.env.openExternal(vscode.Uri.file(written.out)));
    return written;
  });
}
