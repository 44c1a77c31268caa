/**
 * What a user is told when a training run ends (training.ts's TrainingSession calls it once per run):
 * an error when it failed, the breakpoint with what to do next when a check paused it, the finding
 * when it diverged, and otherwise a notice, unless a panel's header already says it.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { openPanelKinds } from './panels';
import { type RunEvent, describeFinding } from '../protocol/telemetry';
import type { TRAIN_END_REASONS } from '../protocol/training';

/** How a run ended, as train/ended or train/stop's answer say it. */
export interface TrainEnd {
  runDir: string;
  step: number;
  reason: (typeof TRAIN_END_REASONS)[number];
  message?: string;
  /** What paused it (a health check's breakpoint), or the divergence check's finding. */
  event?: RunEvent;
}

/** The notice of a run's end `e` (a stop the user asked for is not passed here). */
export function showEndNotice(e: TrainEnd): void {
  const name = path.basename(e.runDir);
  if (e.reason === 'failed')
    void vscode.window.showErrorMessage(
      `Attention Debugger: training ${name} failed at step ${e.step}: ${e.message ?? 'see the output'}`,
    );
  else if (e.reason === 'paused' && e.event) showBreakpoint(e.runDir, e.event);
  else if (e.reason === 'diverged')
    void vscode.window.showWarningMessage(
      `Attention Debugger: training ${name} diverged, ended at step ${e.step}. ` +
        (e.event ? describeFinding(e.event) : (e.message ?? 'See the output.')),
    );
  else if (!openPanelKinds().length)
    // With a panel open, its header and the status bar say the run ended: no toast over the grid (issue 26 item 14).
    void vscode.window.showInformationMessage(`Attention Debugger: training ${name} ${e.reason} at step ${e.step}.`);
}

/** A breakpoint paused the run: say which check and head, and offer what to do next. */
function showBreakpoint(runDir: string, event: RunEvent): void {
  const name = path.basename(runDir);
  const actions = [...(event.head ? ['Open Head'] : []), 'Resume', 'Disable Check'];
  void vscode.window
    .showWarningMessage(`Attention Debugger: ${name} paused at a breakpoint. ${describeFinding(event)}`, ...actions)
    .then((choice) => {
      const args = { runDir, event };
      if (choice === 'Open Head') void vscode.commands.executeCommand('attentionDebugger.openBreakpoint', args);
      if (choice === 'Resume') void vscode.commands.executeCommand('attentionDebugger.resume', { runDir });
      if (choice === 'Disable Check')
        void vscode.commands.executeCommand('attentionDebugger.resume', { runDir, checks: { [event.check]: 'off' } });
    });
}
