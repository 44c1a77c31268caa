/**
 * The report's head view, as the attention view draws it (webview/lib/headView.ts, headViewPlot.ts
 * and the card and its controls, headViewCard.ts): for the snapshot and probe pair the attention
 * grid shows, one layer of one kind as lines from each query token to each key token, one colour
 * per head, each line as opaque as its weight; hovering a token shows only its lines, a click on a
 * head's colour hides or shows its lines (a double click shows that head alone).
 */
import { ATTENTION_KINDS, KIND_AXES } from '../../src/protocol/attention';
import type { ReportSnapshot } from '../../src/protocol/report';
import { HEAD_VIEW_LIMITS } from '../lib/headView';
import { type HeadViewState, headViewCard, plotHeadView, syncHeadViewControls } from '../lib/headViewCard';
import { KIND_LABELS } from '../lib/headViewPlot';
import { float32Of } from './grid';

/** The head view's card and `show`, which draws it for a snapshot (undefined: none). */
export function headViewSection(): { el: HTMLElement; show: (s: ReportSnapshot | undefined) => void } {
  const state: HeadViewState = { kind: 'cross', layer: 0, shown: [], plot: null };
  let snap: ReportSnapshot | undefined;

  const draw = (): void => {
    const kinds = ATTENTION_KINDS.filter((k) => snap?.maps.some((m) => m.kind === k));
    if (!kinds.includes(state.kind)) state.kind = kinds.includes('cross') ? 'cross' : (kinds[0] ?? 'cross');
    const m = snap?.maps.find((x) => x.kind === state.kind);
    const [layers, count, q, k] = m?.shape ?? [0, 0, 0, 0];
    syncHeadViewControls(card, state, kinds, layers, count);
    const { kind, layer } = state;
    if (!snap || !m) return say('No attention to show.', 0);
    if (m.pool || q > HEAD_VIEW_LIMITS.tokens || k > HEAD_VIEW_LIMITS.tokens)
      return say(
        `The head view draws inputs of up to ${HEAD_VIEW_LIMITS.tokens} tokens a side; these maps are pooled.`,
        0,
      );
    const side = (which: 'src' | 'tgt') => (which === 'src' ? snap!.srcTokens : snap!.tgtTokens);
    const [queryTokens, keyTokens] = [side(KIND_AXES[kind].queries), side(KIND_AXES[kind].keys)];
    const { drawn, cut } = plotHeadView(card, state, float32Of(m.weights), m.shape, queryTokens, keyTokens);
    say(
      `step ${snap.step} · ${KIND_LABELS[kind]} · layer ${layer}: ${drawn} lines${cut}, each as opaque as its ` +
        'weight. Hover a token for its lines; click a head’s colour to hide or show it, double click to show it alone.',
      drawn,
    );
  };
  const card = headViewCard(state, draw, false);
  const say = (text: string, lines: number): void => {
    if (!lines) card.plotEl.replaceChildren();
    card.note.textContent = text;
    card.note.dataset.lines = String(lines);
  };

  return {
    el: card.el,
    show: (s) => {
      snap = s;
      draw();
    },
  };
}
