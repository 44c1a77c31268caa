/**
 * The head view's card and its controls, shared by the attention view (webview/attention/headView.ts)
 * and the run report (webview/report/headView.ts) over one small state both keep: the card (title,
 * kind and layer selects, an optional header line, the heads' colour switches, a note, the plot),
 * its wiring (a select picks the kind or layer; a click on a head's colour hides or shows its lines,
 * a double click shows that head alone; hovering a token shows only its lines), and the controls
 * brought in line with what a view has, and a layer's lines drawn on it (with headViewPlot.ts, the
 * SVG).
 */
import type { AttentionKind } from '../../src/protocol/attention';
import { h } from '../common';
import { headsShown, headViewLines, soloHead, toggleHead } from './headView';
import {
  HEAD_VIEW_CSS,
  KIND_LABELS,
  type HeadViewPlot,
  headSwatches,
  headViewPlot,
  hoverTokens,
  placeLines,
} from './headViewPlot';

/** What the card shows: the kind, the layer, which heads are on, and the plot drawn (kept between draws). */
export interface HeadViewState {
  kind: AttentionKind;
  layer: number;
  shown: boolean[];
  plot: HeadViewPlot | null;
}

/** The card's parts: `headerEl` only when asked for. */
export interface HeadViewCard {
  el: HTMLElement;
  kindSel: HTMLSelectElement;
  layerSel: HTMLSelectElement;
  headerEl: HTMLElement | null;
  heads: HTMLElement;
  note: HTMLElement;
  plotEl: HTMLElement;
}

/**
 * The card (id `head-view`, its styles added to the page), with a header line when `header`, its
 * controls wired to `state`: every change sets it and calls `redraw`.
 */
export function headViewCard(state: HeadViewState, redraw: () => void, header: boolean): HeadViewCard {
  document.head.append(h('style', {}, HEAD_VIEW_CSS));
  const kindSel = h('select', { id: 'head-view-kind', 'aria-label': 'attention kind' });
  const layerSel = h('select', { id: 'head-view-layer', 'aria-label': 'layer' });
  const headerEl = header ? h('div', { class: 'hv-header' }) : null;
  const heads = h('div', { class: 'hv-heads', id: 'head-view-heads' });
  const note = h('div', { class: 'muted', id: 'head-view-note' });
  const plotEl = h('div', { class: 'hv-plot' });
  const el = h(
    'section',
    { class: 'card', id: 'head-view' },
    h('header', {}, h('h2', {}, 'Head view'), h('span', { class: 'actions' }, kindSel, layerSel)),
    ...(headerEl ? [headerEl] : []),
    heads,
    note,
    plotEl,
  );
  kindSel.addEventListener('change', () => {
    state.kind = kindSel.value as AttentionKind;
    redraw();
  });
  layerSel.addEventListener('change', () => {
    state.layer = Number(layerSel.value);
    redraw();
  });
  // Head `hd`'s colour: a click hides or shows its lines, a double click shows it alone.
  const swatchOf = (e: Event) => (e.target instanceof Element ? e.target.closest<HTMLElement>('.head-swatch') : null);
  heads.addEventListener('click', (e) => {
    const b = swatchOf(e);
    if (!b) return;
    state.shown = toggleHead(state.shown, Number(b.dataset.head));
    redraw();
  });
  heads.addEventListener('dblclick', (e) => {
    const b = swatchOf(e);
    if (!b) return;
    state.shown = soloHead(state.shown, Number(b.dataset.head));
    redraw();
  });
  // Hovering a token shows only its lines.
  hoverTokens(plotEl, () => state);
  return { el, kindSel, layerSel, headerEl, heads, note, plotEl };
}

/** Options of a select, replaced only when their labels change. */
function options(sel: HTMLSelectElement, labels: [value: string, text: string][]): void {
  const now = [...sel.options].map((o) => `${o.value}=${o.text}`).join('\n');
  if (now !== labels.map(([v, t]) => `${v}=${t}`).join('\n'))
    sel.replaceChildren(...labels.map(([value, text]) => h('option', { value }, text)));
}

/**
 * The card's controls for a view of `kinds` (state.kind one of them, chosen by the caller), `layers`
 * layers of `heads` heads: the selects, the layer kept in range, the heads' switches sized to
 * `heads`, and the card's `data-kind` and `data-layer`.
 */
export function syncHeadViewControls(
  card: HeadViewCard,
  state: HeadViewState,
  kinds: readonly AttentionKind[],
  layers: number,
  heads: number,
): void {
  options(
    card.kindSel,
    kinds.map((k) => [k, KIND_LABELS[k]]),
  );
  card.kindSel.value = state.kind;
  state.layer = Math.min(state.layer, Math.max(0, layers - 1));
  options(
    card.layerSel,
    Array.from({ length: layers }, (_, l) => [String(l), `layer ${l}`]),
  );
  card.layerSel.value = String(state.layer);
  state.shown = headsShown(heads, state.shown);
  headSwatches(card.heads, state.shown, state.kind, state.layer);
  card.el.dataset.kind = state.kind;
  card.el.dataset.layer = String(state.layer);
}

/**
 * Draws `state`'s layer of `weights` (shape [layers, heads, queries, keys]) on the card, one line
 * per head and token pair (the plot kept when built for the same kind, heads and tokens); answers
 * how many lines it drew of how many, and `cut`, what the note says when some were left out.
 */
export function plotHeadView(
  card: HeadViewCard,
  state: HeadViewState,
  weights: ArrayLike<number>,
  shape: readonly number[],
  queryTokens: string[],
  keyTokens: string[],
): { drawn: number; total: number; cut: string } {
  const { kind, layer, shown } = state;
  const heads = shape[1]!;
  const { lines, total } = headViewLines(weights, shape, layer, shown);
  const key = JSON.stringify([kind, heads, queryTokens, keyTokens]);
  const plot = (state.plot = headViewPlot(state.plot, key, heads, queryTokens, keyTokens));
  placeLines(plot, lines, shown);
  if (card.plotEl.firstChild !== plot.svg) card.plotEl.replaceChildren(plot.svg);
  const cut = total > lines.length ? ` (the strongest ${lines.length} of ${total})` : '';
  return { drawn: lines.length, total, cut };
}
