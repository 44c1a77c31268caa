/**
 * The report's head view, as the attention view draws it (webview/lib/headView.ts and
 * headViewPlot.ts): for the snapshot and probe pair the attention grid shows, one layer of one kind
 * as lines from each query token to each key token, one colour per head, each line as opaque as its
 * weight; hovering a token shows only its lines, a click on a head's colour hides or shows its
 * lines (a double click shows that head alone).
 */
import { ATTENTION_KINDS, type AttentionKind, KIND_AXES } from '../../src/protocol/attention';
import type { ReportSnapshot } from '../../src/protocol/report';
import { h } from '../common';
import { HEAD_VIEW_LIMITS, headsShown, headViewLines, soloHead, toggleHead } from '../lib/headView';
import {
  HEAD_VIEW_CSS,
  KIND_LABELS,
  type HeadViewPlot,
  headSwatches,
  headViewPlot,
  hoverTokens,
  placeLines,
} from '../lib/headViewPlot';
import { float32Of } from './grid';

/** The head view's card and `show`, which draws it for a snapshot (undefined: none). */
export function headViewSection(): { el: HTMLElement; show: (s: ReportSnapshot | undefined) => void } {
  document.head.append(h('style', {}, HEAD_VIEW_CSS));
  const kindSel = h('select', { id: 'head-view-kind', 'aria-label': 'attention kind' });
  const layerSel = h('select', { id: 'head-view-layer', 'aria-label': 'layer' });
  const heads = h('div', { class: 'hv-heads', id: 'head-view-heads' });
  const note = h('div', { class: 'muted', id: 'head-view-note' });
  const plotEl = h('div', { class: 'hv-plot' });
  const el = h(
    'section',
    { class: 'card', id: 'head-view' },
    h('header', {}, h('h2', {}, 'Head view'), h('span', { class: 'actions' }, kindSel, layerSel)),
    heads,
    note,
    plotEl,
  );
  let snap: ReportSnapshot | undefined;
  let kind: AttentionKind = 'cross';
  let layer = 0;
  let shown: boolean[] = [];
  let plot: HeadViewPlot | null = null;

  const draw = (): void => {
    const kinds = ATTENTION_KINDS.filter((k) => snap?.maps.some((m) => m.kind === k));
    if (!kinds.includes(kind)) kind = kinds.includes('cross') ? 'cross' : (kinds[0] ?? 'cross');
    kindSel.replaceChildren(...kinds.map((k) => h('option', { value: k }, KIND_LABELS[k])));
    kindSel.value = kind;
    const m = snap?.maps.find((x) => x.kind === kind);
    const [layers, count, q, k] = m?.shape ?? [0, 0, 0, 0];
    layer = Math.min(layer, Math.max(0, layers - 1));
    layerSel.replaceChildren(
      ...Array.from({ length: layers }, (_, l) => h('option', { value: String(l) }, `layer ${l}`)),
    );
    layerSel.value = String(layer);
    shown = headsShown(count, shown);
    headSwatches(heads, shown, kind, layer);
    el.dataset.kind = kind;
    el.dataset.layer = String(layer);
    if (!snap || !m) return say('No attention to show.', 0);
    if (m.pool || q > HEAD_VIEW_LIMITS.tokens || k > HEAD_VIEW_LIMITS.tokens)
      return say(
        `The head view draws inputs of up to ${HEAD_VIEW_LIMITS.tokens} tokens a side; these maps are pooled.`,
        0,
      );
    const side = (which: 'src' | 'tgt') => (which === 'src' ? snap!.srcTokens : snap!.tgtTokens);
    const [queryTokens, keyTokens] = [side(KIND_AXES[kind].queries), side(KIND_AXES[kind].keys)];
    const { lines, total } = headViewLines(float32Of(m.weights), m.shape, layer, shown);
    plot = headViewPlot(plot, JSON.stringify([kind, count, queryTokens, keyTokens]), count, queryTokens, keyTokens);
    placeLines(plot, lines, shown);
    if (plotEl.firstChild !== plot.svg) plotEl.replaceChildren(plot.svg);
    const cut = total > lines.length ? ` (the strongest ${lines.length} of ${total})` : '';
    say(
      `step ${snap.step} · ${KIND_LABELS[kind]} · layer ${layer}: ${lines.length} lines${cut}, each as opaque as its ` +
        'weight. Hover a token for its lines; click a head’s colour to hide or show it, double click to show it alone.',
      lines.length,
    );
  };
  const say = (text: string, lines: number): void => {
    if (!lines) plotEl.replaceChildren();
    note.textContent = text;
    note.dataset.lines = String(lines);
  };

  kindSel.addEventListener('change', () => {
    kind = kindSel.value as AttentionKind;
    draw();
  });
  layerSel.addEventListener('change', () => {
    layer = Number(layerSel.value);
    draw();
  });
  const swatchOf = (e: Event) => (e.target instanceof Element ? e.target.closest<HTMLElement>('.head-swatch') : null);
  heads.addEventListener('click', (e) => {
    const b = swatchOf(e);
    if (!b) return;
    shown = toggleHead(shown, Number(b.dataset.head));
    draw();
  });
  heads.addEventListener('dblclick', (e) => {
    const b = swatchOf(e);
    if (!b) return;
    shown = soloHead(shown, Number(b.dataset.head));
    draw();
  });
  hoverTokens(plotEl, () => ({ plot, shown }));
  return {
    el,
    show: (s) => {
      snap = s;
      draw();
    },
  };
}
