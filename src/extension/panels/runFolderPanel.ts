/**
 * A panel that shows one run folder's saved results (Head Importance, Ablation Results, Run Check):
 * the selected run, or the run its command was last given (`showRun`) until the next selection
 * (`followSelection`, from Panels.showRun), kept by a panel that replaces a stalled one. The three
 * differ only in what they read and draw.
 */
import type { PersistedState } from '../../protocol/webview';
import { BasePanel } from './base';

export abstract class RunFolderPanel<
  ToPage extends { type: string },
  FromPage extends { type: string },
> extends BasePanel<ToPage, FromPage> {
  /** The run its command last gave, shown until the next selection (undefined: the selected run). */
  private chosen: string | undefined;

  /** Shows `runDir` (its command ran on it) until a run is selected. */
  showRun(runDir: string): void {
    this.chosen = runDir;
    this.shownRunChanged();
    this.sendState();
  }

  /** A run was selected (Panels.showRun): the panel shows the selected run again. */
  followSelection(): void {
    this.chosen = undefined;
    this.shownRunChanged();
  }

  /** The run shown now (null: none selected or given). */
  protected runDir(): string | null {
    return this.chosen ?? this.host.store.header?.runDir ?? null;
  }

  /** The run shown may have changed: drop what was read for the old one (nothing by default). */
  protected shownRunChanged(): void {}

  /** A panel that replaces this one (its page never came up: slot.ts) shows the same run. */
  override persisted(): Omit<PersistedState, 'v' | 'panel'> {
    return this.chosen ? { runDir: this.chosen } : {};
  }

  /** The slots' `restore`: the run the replaced panel was given, if any. */
  static restoreRun<P extends RunFolderPanel<{ type: string }, { type: string }>>(
    p: P,
    saved: PersistedState | undefined,
  ): void {
    if (saved?.runDir) p.showRun(saved.runDir);
  }
}
