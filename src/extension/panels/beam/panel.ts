/**
 * The Beam Tree panel (webview/beam/page.ts): one sentence's beam search drawn as a tree, the n-best
 * beside it, and the attention of the node clicked. It holds its own tree and node rather than the
 * store's: a tree is a decoding at a checkpoint, not a step of the selected run's history.
 */
import * as vscode from 'vscode';
import type { Attention } from '../../../protocol/attention';
import type { BeamTreeView } from '../../../protocol/beamTree';
import { type BeamFromPage, type BeamToPage, beamPage } from '../../../protocol/pages/beam';
import { attentionGet } from '../../../protocol/methods';
import type { PanelState } from '../../../protocol/webview';
import { attentionFromWire } from '../../../protocol/wire';
import { BasePanel } from '../base';
import { PanelSlot } from '../slot';

export class BeamTreePanel extends BasePanel<BeamToPage, BeamFromPage> {
  static readonly slot: PanelSlot<BeamTreePanel> = new PanelSlot({
    kind: 'beam',
    viewType: 'attentionDebugger.beamTree',
    title: 'Beam Tree',
    column: vscode.ViewColumn.Beside,
    make: (panel, host) => new BeamTreePanel(panel, host, beamPage),
    // A panel replacing a stalled one shows the newest tree (after a window reload there is none).
    restore: (p) => {
      if (BeamTreePanel.lastTree) p.showTree(BeamTreePanel.lastTree);
    },
  });
  /** The newest tree, for a panel that replaces a stalled one. */
  private static lastTree: BeamTreeView | undefined;
  private tree: BeamTreeView | null = null;
  private node: { id: number; attention: Attention } | null = null;

  /** The tree shown. */
  get shownTree(): BeamTreeView | null {
    return this.tree;
  }

  showTree(tree: BeamTreeView): void {
    this.tree = tree;
    this.node = null;
    BeamTreePanel.lastTree = tree;
    this.panel.title = `Beam Tree: ${tree.input.length > 24 ? `${tree.input.slice(0, 24)}…` : tree.input}`;
    this.sendState();
  }

  /** The attention of the prefix ending at node `id` (it must belong to the tree shown). */
  showNode(id: number, attention: Attention): void {
    if (!this.tree || id >= this.tree.nodes.length) return;
    this.node = { id, attention };
    this.sendState();
  }

  protected async answer(m: BeamFromPage): Promise<void> {
    await this.showBeamNode(m.node);
  }

  /**
   * A node clicked on the page: the teacher-forced attention of its prefix at the tree's
   * checkpoint (decoder input BOS and the prefix without its last token, whose choice the last
   * query row made), shown by this panel. The root chose nothing: nothing to show.
   */
  private async showBeamNode(id: number): Promise<void> {
    const tree = this.tree;
    const engine = this.host.answers()?.engine;
    if (!tree || !engine || id === 0 || id >= tree.nodes.length) return;
    const prefix: number[] = [];
    for (let n = tree.nodes[id]!; n.parent >= 0; n = tree.nodes[n.parent]!) prefix.unshift(n.token);
    const stepFile = tree.checkpoint.endsWith(`step-${tree.step}.safetensors`);
    const r = await engine.request(attentionGet, {
      runDir: tree.runDir,
      input: { kind: 'ids', src: tree.srcIds, tgt: prefix.slice(0, -1) },
      ...(stepFile ? { step: tree.step } : {}),
    });
    if (this.tree === tree) this.showNode(id, attentionFromWire(r.attention, 'attention/get result.attention'));
  }

  protected snapshot(): PanelState {
    return { panel: 'beam', header: this.host.store.header, tree: this.tree, node: this.node };
  }
}
