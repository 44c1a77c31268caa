/**
 * The attention view's head view (issue 13), after BertViz's: for one layer of one kind, the query
 * tokens on the left, the key tokens on the right, and one line per head and token pair, coloured by
 * head, its opacity the attention weight (or the value-weighted norm, scaled by the page). A click
 * on a head's colour hides or shows its lines (a double click shows that head alone); hovering a
 * token shows only its lines. The geometry, colours
 * and switches are webview/lib/headView.ts, the SVG and its hover webview/lib/headViewPlot.ts (the
 * run report draws its head view with them too); this file is the card and its state.
 *
 * Issue 34: the card is drawn only while on screen (lazyParts.ts), once per snapshot, and only when
 * what it shows changed (its kind's layer, the tokens, the heads shown). Its controls, token labels
 * and listeners (delegated to the card) are made once per shape; lines are kept and reused, a new
 * snapshot only moves their ends and opacities (spare ones hidden, class `spare`).
 */
import { ATTENTION_KINDS, type Attention, type AttentionKind, findMaps, tokensOf } from '../../src/protocol/attention';
import type { ViewHeader } from '../../src/protocol/webview';
import { h, renderHeader } from '../common';
import { lazyPart, markStale } from './lazyParts';
import { sameValues } from '../heatmap';
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

let card: ReturnType<typeof build> | null = null;
let kind: AttentionKind = 'encoder_self';
let layer = 0;
let shown: boolean[] = [];
let last: { a: Attention; header: ViewHeader | null; measure: string } | null = null;
/** What the card's SVG is built for (kind, tokens), and its parts kept between snapshots. */
let plot: HeadViewPlot | null = null;
/** What the card's lines last showed: a snapshot that changes none of them moves none. */
let drawnKey = '';

function build() {
  document.head.append(h('style', {}, HEAD_VIEW_CSS));
  const kindSel = h('select', { id: 'head-view-kind', 'aria-label': 'attention kind' });
  const layerSel = h('select', { id: 'head-view-layer', 'aria-label': 'layer' });
  const headerEl = h('div', { class: 'hv-header' });
  const heads = h('div', { class: 'hv-heads', id: 'head-view-heads' });
  const note = h('div', { class: 'muted', id: 'head-view-note' });
  const plotEl = h('div', { class: 'hv-plot' });
  const el = h(
    'section',
    { class: 'card', id: 'head-view' },
    h('header', {}, h('h2', {}, 'Head view'), h('span', { class: 'actions' }, kindSel, layerSel)),
    headerEl,
    heads,
    note,
    plotEl,
  );
  kindSel.addEventListener('change', () => {
    kind = kindSel.value as AttentionKind;
    redraw();
  });
  layerSel.addEventListener('change', () => {
    layer = Number(layerSel.value);
    redraw();
  });
  // Head `hd`'s colour: a click hides or shows its lines, a double click shows it alone.
  const swatchOf = (e: Event) => (e.target instanceof Element ? e.target.closest<HTMLElement>('.head-swatch') : null);
  heads.addEventListener('click', (e) => {
    const b = swatchOf(e);
    if (!b) return;
    shown = toggleHead(shown, Number(b.dataset.head));
    redraw();
  });
  heads.addEventListener('dblclick', (e) => {
    const b = swatchOf(e);
    if (!b) return;
    shown = soloHead(shown, Number(b.dataset.head));
    redraw();
  });
  // Hovering a token shows only its lines.
  hoverTokens(plotEl, () => ({ plot, shown }));
  lazyPart(el, redraw);
  return { el, kindSel, layerSel, headerEl, heads, note, plot: plotEl };
}

/**
 * Shows the head view of `a` at the end of `parent` (the card keeps its kind, layer and switches),
 * drawn now if it is on screen, else when it comes into view. `measure`: what the opacities are
 * when not the weights (value-weighted norms over the view's largest), as the card's note says.
 */
export function showHeadView(parent: HTMLElement, a: Attention, header: ViewHeader | null, measure?: string): void {
  card ??= build();
  last = { a, header, measure: measure ?? '' };
  if (card.el.parentElement !== parent || parent.lastElementChild !== card.el) parent.append(card.el);
  markStale(card.el);
}

/** Options of a select, replaced only when their labels change. */
function options(sel: HTMLSelectElement, labels: [value: string, text: string][]): void {
  const now = [...sel.options].map((o) => `${o.value}=${o.text}`).join('\n');
  if (now !== labels.map(([v, t]) => `${v}=${t}`).join('\n'))
    sel.replaceChildren(...labels.map(([value, text]) => h('option', { value }, text)));
}

function redraw(): void {
  if (!card || !last) return;
  const { a, header, measure } = last;
  const c = card;
  const kinds = ATTENTION_KINDS.filter((k) => findMaps(a, k));
  if (!kinds.includes(kind)) kind = kinds[0] ?? 'encoder_self';
  options(
    c.kindSel,
    kinds.map((k) => [k, KIND_LABELS[k]]),
  );
  c.kindSel.value = kind;
  const maps = findMaps(a, kind);
  const [layers, heads, queries, keys] = maps?.shape ?? [0, 0, 0, 0];
  layer = Math.min(layer, Math.max(0, layers - 1));
  options(
    c.layerSel,
    Array.from({ length: layers }, (_, l) => [String(l), `layer ${l}`]),
  );
  c.layerSel.value = String(layer);
  shown = headsShown(heads, shown);
  const { queryTokens, keyTokens } = tokensOf(a, kind);
  const src = a.source;
  c.el.dataset.kind = kind;
  c.el.dataset.layer = String(layer);
  renderHeader(c.headerEl, header, {
    step: src.step,
    input: src.input === 'probe' ? 'probe' : a.srcTokens.join(' '),
    note: `${KIND_LABELS[kind]} · layer ${layer}`,
  });
  headSwatches(c.heads, shown, kind, layer);
  // The lines: a snapshot that changes none of them (another kind's or layer's maps) moves none.
  const size = queries * keys;
  const layerWeights = maps?.weights.subarray(layer * heads * size, (layer + 1) * heads * size);
  const key = JSON.stringify([kind, layer, shown, queryTokens, keyTokens, maps?.pool ?? null]);
  if (key === drawnKey && plot && layerWeights && lastWeights && sameValues(lastWeights, layerWeights)) return;
  drawnKey = key;
  lastWeights = layerWeights ? Float32Array.from(layerWeights) : null;
  if (!maps) return noPlot('No attention to show.');
  if (maps.pool || queries > HEAD_VIEW_LIMITS.tokens || keys > HEAD_VIEW_LIMITS.tokens)
    return noPlot(
      `The head view draws inputs of up to ${HEAD_VIEW_LIMITS.tokens} tokens a side; this one has ` +
        `${queryTokens.length} × ${keyTokens.length}. Open a head from the grid for its map.`,
    );
  const { lines, total } = headViewLines(maps.weights, maps.shape, layer, shown);
  plot = headViewPlot(plot, JSON.stringify([kind, heads, queryTokens, keyTokens]), heads, queryTokens, keyTokens);
  const p = plot;
  placeLines(p, lines, shown);
  if (c.plot.firstChild !== p.svg) c.plot.replaceChildren(p.svg);
  const cut = total > lines.length ? ` (the strongest ${lines.length} of ${total})` : '';
  say(
    `${lines.length} lines${cut}: ${queryTokens.length} queries × ${keyTokens.length} keys × ${shown.filter(Boolean).length} heads shown, ` +
      `each as opaque as its ${measure || 'weight'} (under ${HEAD_VIEW_LIMITS.minWeight.toFixed(4)} left out). Hover a token for its lines.`,
    lines.length,
    total,
  );
}

/** The layer's weights as last drawn (a copy: a snapshot's arrays are new each time). */
let lastWeights: Float32Array | null = null;

function noPlot(text: string): void {
  card?.plot.replaceChildren();
  drawnKey = ''; // the lines are off the page: the next plot puts them back
  say(text, 0, 0);
}

function say(text: string, drawn: number, total: number): void {
  if (!card) return;
  if (card.note.textContent !== text) card.note.textContent = text;
  card.note.dataset.lines = String(drawn);
  card.note.dataset.total = String(total);
}
