/**
 * The Head Importance panel (its page: webview/importance/): the newest heads report saved in the
 * folder of the run it shows, as a sortable table and the importance and pruning figures. One per
 * window (its `slot`, ../slot.ts). It follows the selection: when the selected run changes it shows
 * that run; Head Importance and Pruning shows the run it ran on (`showRun`).
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { headId } from '../../../protocol/attention';
import { headReportFile } from '../../../protocol/heads';
import { type ImportanceFromPage, type ImportanceToPage, importancePage } from '../../../protocol/pages/importance';
import type { PanelState } from '../../../protocol/webview';
import { BasePanel } from '../base';
import { PanelSlot } from '../slot';
import { newestHeadReport } from './newestReport';

export class ImportancePanel extends BasePanel<ImportanceToPage, ImportanceFromPage> {
  static readonly slot = new PanelSlot({
    kind: 'importance',
    viewType: 'attentionDebugger.importance',
    title: 'Head Importance',
    column: vscode.ViewColumn.Beside,
    make: (panel, host) => new ImportancePanel(panel, host, importancePage),
  });

  /** The run shown; `followed`: the selected run when it was chosen (a new selection replaces it). */
  private shown: { runDir: string; followed: string | undefined } | undefined;

  /** Shows `runDir`'s newest report (Head Importance ran on it) until the selected run changes. */
  showRun(runDir: string): void {
    this.shown = { runDir, followed: this.host.store.header?.runDir };
    this.sendState();
  }

  private runDir(): string | null {
    const selected = this.host.store.header?.runDir;
    if (this.shown && this.shown.followed === selected) return this.shown.runDir;
    if (!selected) return null;
    this.shown = { runDir: selected, followed: selected };
    return selected;
  }

  protected async answer(m: ImportanceFromPage): Promise<void> {
    const runDir = this.runDir();
    if (!runDir) return;
    switch (m.type) {
      case 'computeImportance':
        await vscode.commands.executeCommand('attentionDebugger.headImportance', { runDir });
        break;
      case 'openHeadAt': {
        // The head at the report's step in its run: what a breakpoint's Open Head does.
        const head = headId({ kind: m.kind, layer: m.layer, head: m.head });
        await vscode.commands.executeCommand('attentionDebugger.openBreakpoint', {
          runDir,
          event: { step: m.step, head },
        });
        break;
      }
      case 'openMarkdown': {
        const shown = newestHeadReport(runDir, (l) => this.host.log(l));
        if (!shown) return;
        const md = path.join(runDir, headReportFile(shown.report.step, 'md'));
        await vscode.commands.executeCommand('markdown.showPreviewToSide', vscode.Uri.file(md));
        break;
      }
    }
  }

  protected snapshot(): PanelState {
    const runDir = this.runDir();
    const shown = runDir ? newestHeadReport(runDir, (l) => this.host.log(l)) : null;
    return { panel: 'importance', header: this.host.store.header, runDir, report: shown?.report ?? null };
  }
}
