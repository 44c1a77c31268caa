/**
 * The Head Importance panel (its page: webview/importance/): the newest heads report saved in the
 * folder of the run it shows, as a sortable table and the importance and pruning figures. One per
 * window (its `slot`, ../slot.ts). It follows the selection: a run selected, it shows that run; Head
 * Importance and Pruning shows the run it ran on (`showRun`) until the next selection.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { headId } from '../../../protocol/attention';
import { savedHeadReport } from '../../../engine/run/savedHeadReport';
import { type HeadReport, headReportFile } from '../../../protocol/heads';
import { type ImportanceFromPage, type ImportanceToPage, importancePage } from '../../../protocol/pages/importance';
import type { PanelState } from '../../../protocol/webview';
import { RunFolderPanel } from '../runFolderPanel';
import { PanelSlot } from '../slot';

export class ImportancePanel extends RunFolderPanel<ImportanceToPage, ImportanceFromPage> {
  static readonly slot = new PanelSlot({
    kind: 'importance',
    viewType: 'attentionDebugger.importance',
    title: 'Head Importance',
    column: vscode.ViewColumn.Beside,
    make: (panel, host) => new ImportancePanel(panel, host, importancePage),
    restore: RunFolderPanel.restoreRun,
  });

  /** The run's newest saved report, by the engine's own reader (null: none reads, or the folder is gone: logged). */
  private report(runDir: string): HeadReport | null {
    try {
      return savedHeadReport(runDir);
    } catch (err) {
      this.host.log(`importance panel: ${runDir}: ${(err as Error).message}`);
      return null;
    }
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
        const shown = this.report(runDir);
        if (!shown) return;
        const md = path.join(runDir, headReportFile(shown.step, 'md'));
        await vscode.commands.executeCommand('markdown.showPreviewToSide', vscode.Uri.file(md));
        break;
      }
    }
  }

  protected snapshot(): PanelState {
    const runDir = this.runDir();
    const report = runDir ? this.report(runDir) : null;
    return { panel: 'importance', header: this.host.store.header, runDir, report };
  }
}
