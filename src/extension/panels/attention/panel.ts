/**
 * The attention view's panel (its page: webview/attention/): every head's map of the selected
 * input; it answers its own page's block requests (the zoom), ablations and the value-weighted
 * toggle (whose maps it keeps in the store beside the weights, for the head inspector too). One per
 * window (its `slot`, ../slot.ts); it builds its whole `state` from the shared store, and what
 * changes afterwards goes out as small messages.
 */
import * as vscode from 'vscode';
import type { Ablation, AblationEffect } from '../../../protocol/ablation';
import { type Attention, type HeadRef } from '../../../protocol/attention';
import {
  type AttentionFromPage,
  type AttentionToPage,
  attentionPage,
  type RequestBlockMsg,
  type ShowValueWeightedMsg,
} from '../../../protocol/pages/attention';
import { ablationEffect } from '../../../protocol/methods';
import type { PanelState } from '../../../protocol/webview';
import { requestBlock } from '../../blocks';
import { errorText } from '../../errorText';
import { attentionOfSelection } from '../../inspection';
import { BasePanel } from '../base';
import { HeadInspectorPanel } from '../head/panel';
import { PanelSlot } from '../slot';

/** A run and source sentence, to tell whether an ablation's effect still belongs to what is shown. */
const sourceOf = (a: Attention) => `${a.source.runDir}\n${a.srcTokens.join(' ')}`;

export class AttentionPanel extends BasePanel<AttentionToPage, AttentionFromPage> {
  static readonly slot: PanelSlot<AttentionPanel> = new PanelSlot({
    kind: 'attention',
    viewType: 'attentionDebugger.attention',
    title: 'Attention',
    column: vscode.ViewColumn.Active,
    make: (panel, host) => new AttentionPanel(panel, host, attentionPage),
    restore: (p, saved) => {
      p.selected = saved?.head ?? null;
      if (saved?.valueWeighted !== undefined) p.host.store.valueWeighted = saved.valueWeighted;
    },
  });
  private selected: HeadRef | null = null;
  /** What the heads switched off do to the input shown, and that input's run and source; null when none are off. */
  private ablation: { effect: AblationEffect; source: string } | null = null;

  /** Shows every layer × head of one sentence pair; an ablation of another run or input no longer applies. */
  showAttention(attention: Attention): void {
    if (this.ablation && this.ablation.source !== sourceOf(attention)) {
      this.ablation = null;
      this.sendState();
      return;
    }
    this.post({ type: 'attention', ...attention, roles: this.host.store.rolesAt(attention.source.step) });
  }

  /** The effect of the heads switched off on `attention`'s input (null: all heads on again). */
  showAblation(effect: AblationEffect | null, attention: Attention): void {
    this.ablation = effect ? { effect, source: sourceOf(attention) } : null;
    this.sendState();
  }

  select(ref: HeadRef): void {
    this.selected = ref;
  }

  protected async answer(m: AttentionFromPage): Promise<void> {
    switch (m.type) {
      case 'openHead':
      case 'inspectInput':
        this.host.request(this.kind, m);
        break;
      case 'ablateHeads':
        await this.ablate(m.ablation);
        break;
      case 'requestBlock':
        await this.sendBlock(m);
        break;
      case 'showValueWeighted':
        await this.showValueWeighted(m);
        break;
    }
  }

  /**
   * The value-weighted toggle: kept in the store (the head inspector follows it); on, the shown
   * attention's value-weighted maps, asked of the engine once and kept beside its weights.
   */
  private async showValueWeighted(m: ShowValueWeightedMsg): Promise<void> {
    const store = this.host.store;
    const changed = store.valueWeighted !== m.on;
    store.valueWeighted = m.on;
    if (changed) HeadInspectorPanel.slot.current?.sendState();
    const shown = store.attention;
    if (!m.on) return this.post({ type: 'valueWeighted', id: m.id });
    if (shown?.maps.every((x) => x.valueWeighted))
      return this.post({ type: 'valueWeighted', id: m.id, attention: shown });
    const answers = this.host.answers();
    const sel = answers?.selection();
    if (!shown || !answers || !sel)
      return this.post({ type: 'valueWeighted', id: m.id, error: 'no attention is shown' });
    try {
      const { attention } = await attentionOfSelection(answers.engine, sel, true);
      if (store.attention === shown) {
        store.attention = attention;
        HeadInspectorPanel.slot.current?.showAttention(attention);
      }
      this.post({ type: 'valueWeighted', id: m.id, attention });
    } catch (err) {
      this.post({ type: 'valueWeighted', id: m.id, error: errorText(err) });
    }
  }

  /** A block of a pooled head the page's zoom asked for, of the selection's run, step and input; the reply echoes its id. */
  private async sendBlock(m: RequestBlockMsg): Promise<void> {
    const answers = this.host.answers();
    const sel = answers?.selection();
    if (!answers || !sel) return;
    const { kind, layer, head, q0, q1, k0, k1 } = m;
    const block = await requestBlock(answers.engine, sel, { kind, layer, head, q0, q1, k0, k1 });
    this.post({ type: 'attentionBlock', id: m.id, ...block });
  }

  /**
   * Heads switched off on the page: the engine scores the input shown (its target, or what the
   * intact model decoded) with and without them, at the selected checkpoint, and decodes it
   * greedily with them off. No heads: all back on.
   */
  private async ablate(ablation: Ablation): Promise<void> {
    const attention = this.host.store.attention;
    const answers = this.host.answers();
    const sel = answers?.selection();
    if (!attention || !answers || !sel) return;
    if (!ablation.heads.length) {
      this.showAblation(null, attention);
      return;
    }
    // At the selected checkpoint (the newest when none is): snapshots between checkpoints have no weights.
    const effect = await answers.engine.request(ablationEffect, {
      runDir: sel.runDir,
      input: sel.input,
      ablation,
      ...(sel.step !== undefined ? { step: sel.step } : {}),
    });
    if (this.host.store.attention === attention) this.showAblation(effect, attention);
  }

  override persisted(): { head?: HeadRef; valueWeighted?: boolean } {
    const vw = this.host.store.valueWeighted ? { valueWeighted: true } : {};
    return this.selected ? { head: this.selected, ...vw } : vw;
  }

  protected snapshot(): PanelState {
    const s = this.host.store;
    const roles = s.attention ? s.rolesAt(s.attention.source.step) : [];
    return {
      panel: 'attention',
      header: s.header,
      attention: s.attention,
      selected: this.selected,
      roles,
      ablation: this.ablation?.effect ?? null,
      valueWeighted: s.valueWeighted,
    };
  }
}
