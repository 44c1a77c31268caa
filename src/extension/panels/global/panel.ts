/**
 * The Global Q/K view (its page: webview/global/): one head's queries and keys over the run's
 * validation split in 2-D (heads/global, after AttentionViz). One per window (its `slot`). It shows
 * the run it was opened on until a run is selected, then the selected run (as Head Importance does),
 * and the head it was given. The step slider asks for another checkpoint on the same basis; the
 * last answer stays drawn, marked busy, until the next one lands. A point clicked opens its pair at
 * that step in the attention view (the hidden command attentionDebugger.openGlobalPair).
 */
import * as vscode from 'vscode';
import { type HeadRef, headId } from '../../../protocol/attention';
import type { GlobalView, Projection2D } from '../../../protocol/globalView';
import { headsGlobal } from '../../../protocol/methods';
import { type GlobalFromPage, type GlobalToPage, globalPage } from '../../../protocol/pages/global';
import type { PanelState, PersistedState } from '../../../protocol/webview';
import { RunFolderPanel } from '../runFolderPanel';
import { PanelSlot } from '../slot';

interface Answer {
  key: string;
  view: GlobalView | null;
  error: string | null;
}

export class GlobalPanel extends RunFolderPanel<GlobalToPage, GlobalFromPage> {
  static readonly slot = new PanelSlot({
    kind: 'global',
    viewType: 'attentionDebugger.global',
    title: 'Global Q/K View',
    column: vscode.ViewColumn.Beside,
    make: (panel, host) => new GlobalPanel(panel, host, globalPage),
    // A panel that replaces a stalled one (slot.ts) shows the same run, head and step.
    restore: (p, saved) =>
      saved?.runDir && saved.head
        ? p.showHead(saved.runDir, saved.head, saved.snapshotStep)
        : RunFolderPanel.restoreRun(p, saved),
  });

  private head: HeadRef | null = null;
  /** The step shown (undefined: the basis step, the newest checkpoint). */
  private step: number | undefined;
  private projection: Projection2D = 'pca';
  /** The newest answer, kept drawn while the next is computed. */
  private answered: Answer | undefined;
  private asking: string | undefined;

  /** Shows `head` of `runDir` (at `step`, else the newest checkpoint). */
  showHead(runDir: string, head: HeadRef, step?: number): void {
    this.head = head;
    this.step = step;
    this.showRun(runDir);
  }

  override persisted(): Omit<PersistedState, 'v' | 'panel'> {
    return {
      ...super.persisted(),
      ...(this.head ? { head: this.head } : {}),
      ...(this.step !== undefined ? { snapshotStep: this.step } : {}),
    };
  }

  protected override shownRunChanged(): void {
    this.answered = undefined;
    this.step = undefined;
  }

  /** The view drawn now (null while none is): for the tests. */
  get shownView(): GlobalView | null {
    return this.answered?.view ?? null;
  }

  private key(runDir: string): string | undefined {
    if (!this.head) return undefined;
    return JSON.stringify([runDir, headId(this.head), this.step ?? null, this.projection]);
  }

  protected async answer(m: GlobalFromPage): Promise<void> {
    const runDir = this.runDir();
    switch (m.type) {
      case 'globalStep':
        this.step = m.step;
        this.sendState();
        break;
      case 'globalProjection':
        this.projection = m.projection;
        this.sendState();
        break;
      case 'openPair': {
        const pair = this.answered?.view?.pairs[m.sentence];
        if (!runDir || !pair || !this.head) return;
        await vscode.commands.executeCommand('attentionDebugger.openGlobalPair', {
          runDir,
          step: m.step,
          src: pair.src,
          tgt: pair.tgt,
          words: pair.words,
          head: this.head,
        });
        break;
      }
    }
  }

  private async ask(runDir: string, key: string): Promise<void> {
    this.asking = key;
    let done: Answer;
    try {
      const engine = this.host.answers()?.engine;
      if (!engine) throw new Error('the extension has not started its engine client yet');
      const view = await engine.request(headsGlobal, {
        runDir,
        ...this.head!,
        ...(this.step !== undefined ? { step: this.step } : {}),
        projection: this.projection,
      });
      done = { key, view, error: null };
    } catch (err) {
      done = { key, view: null, error: (err as Error).message };
      this.host.log(`global panel: ${runDir}: ${done.error}`);
    }
    if (this.asking !== key) return;
    this.asking = undefined;
    this.answered = done.view || !this.answered ? done : { ...this.answered, key, error: done.error };
    if (!this.isDisposed) this.sendState();
  }

  protected snapshot(): PanelState {
    const runDir = this.runDir();
    const key = runDir ? this.key(runDir) : undefined;
    const fresh = this.answered?.key === key;
    if (runDir && key && !fresh && this.asking !== key) void this.ask(runDir, key);
    const view = this.answered?.view && this.answered.view.runDir === runDir ? this.answered.view : null;
    const busy = key && !fresh ? `computing step ${this.step ?? 'newest'} (${this.projection.toUpperCase()})…` : null;
    return {
      panel: 'global',
      header: this.host.store.header,
      runDir,
      head: this.head,
      view,
      busy,
      error: fresh ? (this.answered?.error ?? null) : null,
    };
  }
}
