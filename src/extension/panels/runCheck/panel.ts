/**
 * The Run Check panel (its page: webview/runCheck/): the run folder it shows checked against its
 * format by the engine's run/check (what `check-run` prints), as a sortable table of findings with
 * a summary line. One per window (its `slot`, ../slot.ts). It follows the selection as Head
 * Importance does: a run selected, it checks that run; Check Run Folder shows the run it was given
 * (`showRun`) until the next selection. A run is checked when the panel first shows it and again
 * on the page's "Check again" (the folder may have changed on disk).
 */
import * as vscode from 'vscode';
import { runCheck } from '../../../protocol/methods';
import { type RunCheckFromPage, type RunCheckToPage, runCheckPage } from '../../../protocol/pages/runCheck';
import type { RunCheck } from '../../../protocol/runCheck';
import type { PanelState } from '../../../protocol/webview';
import { RunFolderPanel } from '../runFolderPanel';
import { PanelSlot } from '../slot';

interface Checked {
  runDir: string;
  check: RunCheck | null;
  error: string | null;
}

export class RunCheckPanel extends RunFolderPanel<RunCheckToPage, RunCheckFromPage> {
  static readonly slot = new PanelSlot({
    kind: 'runCheck',
    viewType: 'attentionDebugger.runCheck',
    title: 'Run Check',
    column: vscode.ViewColumn.Beside,
    make: (panel, host) => new RunCheckPanel(panel, host, runCheckPage),
    restore: RunFolderPanel.restoreRun,
  });

  /** The newest answer, for its run folder. */
  private checked: Checked | undefined;
  /** The run folder asked about now, if any. */
  private asking: string | undefined;

  /** Another run, or the same one given again: it is checked anew. */
  protected override shownRunChanged(): void {
    this.checked = undefined;
  }

  /** The check shown now (undefined while it is being made): for the tests. */
  get shownCheck(): RunCheck | undefined {
    return this.checked?.check ?? undefined;
  }

  protected async answer(m: RunCheckFromPage): Promise<void> {
    if (m.type !== 'recheck') return;
    this.checked = undefined;
    this.sendState();
  }

  /** Asks the engine for `runDir`'s check, then shows it (unless the panel moved on meanwhile). */
  private async ask(runDir: string): Promise<void> {
    this.asking = runDir;
    let done: Checked;
    try {
      const engine = this.host.answers()?.engine;
      if (!engine) throw new Error('the extension has not started its engine client yet');
      done = { runDir, check: await engine.request(runCheck, { runDir }), error: null };
    } catch (err) {
      done = { runDir, check: null, error: (err as Error).message };
      this.host.log(`runCheck panel: ${runDir}: ${done.error}`);
    }
    if (this.asking !== runDir) return;
    this.asking = undefined;
    this.checked = done;
    if (!this.isDisposed) this.sendState();
  }

  protected snapshot(): PanelState {
    const runDir = this.runDir();
    const shown = this.checked?.runDir === runDir ? this.checked : undefined;
    if (runDir && !shown && this.asking !== runDir) void this.ask(runDir);
    return {
      panel: 'runCheck',
      header: this.host.store.header,
      runDir,
      check: shown?.check ?? null,
      error: shown?.error ?? null,
    };
  }
}
