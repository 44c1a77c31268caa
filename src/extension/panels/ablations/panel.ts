/**
 * The Ablation Results panel (its page: webview/ablations/): every ablation tried on the run it
 * shows, as a sortable table and a bar of Δ per ablation. One per window (its `slot`, ../slot.ts).
 * It follows the selection as Head Importance does: a run selected, it shows that run; Ablate
 * Heads… shows the run it scored (`showRun`) until the next selection. The rows are the run
 * folder's ablations.json (./saved.ts), and those of this window that could not be saved there.
 */
import * as vscode from 'vscode';
import type { AblationRecord } from '../../../protocol/ablation';
import { type AblationsFromPage, type AblationsToPage, ablationsPage } from '../../../protocol/pages/ablations';
import type { PanelState } from '../../../protocol/webview';
import { RunFolderPanel } from '../runFolderPanel';
import { PanelSlot } from '../slot';
import { savedAblations } from './saved';

/** Ablations of this window its run folder did not take (a file that does not read, a read-only folder), by run. */
const unsaved = new Map<string, AblationRecord[]>();

export class AblationsPanel extends RunFolderPanel<AblationsToPage, AblationsFromPage> {
  static readonly slot = new PanelSlot({
    kind: 'ablations',
    viewType: 'attentionDebugger.ablations',
    title: 'Ablation Results',
    column: vscode.ViewColumn.Beside,
    make: (panel, host) => new AblationsPanel(panel, host, ablationsPage),
    restore: RunFolderPanel.restoreRun,
  });

  /** An ablation scored in this window that its run folder did not keep: listed while the window lives. */
  static keepUnsaved(runDir: string, record: AblationRecord): void {
    unsaved.set(runDir, [...(unsaved.get(runDir) ?? []), record]);
  }

  protected async answer(m: AblationsFromPage): Promise<void> {
    const runDir = this.runDir();
    if (!runDir || m.type !== 'ablate') return;
    await vscode.commands.executeCommand('attentionDebugger.ablateHeads', { runDir });
  }

  protected snapshot(): PanelState {
    const runDir = this.runDir();
    const rows = runDir
      ? [...savedAblations(runDir, (l) => this.host.log(l)), ...(unsaved.get(runDir) ?? [])].sort(
          (a, b) => a.time - b.time,
        )
      : [];
    return { panel: 'ablations', header: this.host.store.header, runDir, rows };
  }
}
