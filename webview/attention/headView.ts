/**
 * The attention view's head view (issue 13), after BertViz's: for one layer of one kind, the query
 * tokens on the left, the key tokens on the right, and one line per head and token pair, coloured by
 * head, its opacity the attention weight (or the value-weighted norm, scaled by the page). A click
 * on a head's colour hides or shows its lines (a double click shows that head alone); hovering a
 * token shows only its lines. The geometry, colours and switches are webview/lib/headView.ts, the
 * SVG and its hover webview/lib/headViewPlot.ts, the card and its controls webview/lib/headViewCard.ts
 * (the run report draws its head view with them too); this file draws a snapshot on the card.
 *
 * Issue 34: the card is drawn only while on screen (lazyParts.ts), once per snapshot, and only when
 * what it shows changed (its kind's layer, the tokens, the heads shown). Its controls, token labels
 * and listeners (delegated to the card) are made once per shape; lines are kept and reused, a new
 * snapshot only moves their ends and opacities (spare ones hidden, class `spare`).
 */
import { ATTENTION_KINDS, type Attention, describeShownInput, findMaps, tokensOf } from '../../src/protocol/attention';
import type { ViewHeader } from '../../src/protocol/webview';
import { renderHeader } from '../common';
import { lazyPart, markStale } from './lazyParts';
import { sameValues } from '../heatmap';
import { HEAD_VIEW_LIMITS } from '../lib/headView';
import {
  type HeadViewCard,
  type HeadViewState,
  headViewCard,
  plotHeadView,
  syncHeadViewControls,
} from '../lib/headViewCard';
import { KIND_LABELS } from '../lib/headViewPlot';
import { counted } from '../lib/counted';

let card: HeadViewCard | null = null;
/** The card's kind, layer, heads shown and plot (what its SVG is built for, kept between snapshots). */
const state: HeadViewState = { kind: 'encoder_self', layer: 0, shown: [], plot: null };
let last: { a: Attention; header: ViewHeader | null; measure: string } | null = null;
/** What the card's lines last showed: a snapshot that changes none of them moves none. */
let drawnKey = '';

/**
 * Shows the head view of `a` at the end of `parent` (the card keeps its kind, layer and switches),
 * drawn now if it is on screen, else when it comes into view. `measure`: what the opacities are
 * when not the weights (value-weighted norms over the view's largest), as the card's note says.
 */
export function showHeadView(parent: HTMLElement, a: Attention, header: ViewHeader | null, measure?: string): void {
  if (!card) {
    card = headViewCard(state, redraw, true);
    lazyPart(card.el, redraw);
  }
  last = { a, header, measure: measure ?? '' };
  if (card.el.parentElement !== parent || parent.lastElementChild !== card.el) parent.append(card.el);
  markStale(card.el);
}

function redraw(): void {
  if (!card || !last) return;
  const { a, header, measure } = last;
  const c = card;
  const kinds = ATTENTION_KINDS.filter((k) => findMaps(a, k));
  if (!kinds.includes(state.kind)) state.kind = kinds[0] ?? 'encoder_self';
  const maps = findMaps(a, state.kind);
  const [layers, heads, queries, keys] = maps?.shape ?? [0, 0, 0, 0];
  syncHeadViewControls(c, state, kinds, layers, heads);
  const { kind, layer, shown } = state;
  const { queryTokens, keyTokens } = tokensOf(a, kind);
  const src = a.source;
  renderHeader(c.headerEl!, header, {
    step: src.step,
    input: describeShownInput(a),
    note: `${KIND_LABELS[kind]} · layer ${layer}`,
  });
  // The lines: a snapshot that changes none of them (another kind's or layer's maps) moves none.
  const size = queries * keys;
  const layerWeights = maps?.weights.subarray(layer * heads * size, (layer + 1) * heads * size);
  const key = JSON.stringify([kind, layer, shown, queryTokens, keyTokens, maps?.pool ?? null]);
  if (key === drawnKey && state.plot && layerWeights && lastWeights && sameValues(lastWeights, layerWeights)) return;
  drawnKey = key;
  lastWeights = layerWeights ? Float32Array.from(layerWeights) : null;
  if (!maps) return noPlot('No attention to show.');
  if (maps.pool || queries > HEAD_VIEW_LIMITS.tokens || keys > HEAD_VIEW_LIMITS.tokens)
    return noPlot(
      `The head view draws inputs of up to ${HEAD_VIEW_LIMITS.tokens} tokens a side; this one has ` +
        `${queryTokens.length} × ${keyTokens.length}. Open a head from the grid for its map.`,
    );
  const { drawn, total, cut } = plotHeadView(c, state, maps.weights, maps.shape, queryTokens, keyTokens);
  say(
    `${counted(drawn, 'line')}${cut}: ${counted(queryTokens.length, 'query', 'queries')} × ` +
      `${counted(keyTokens.length, 'key')} × ${counted(shown.filter(Boolean).length, 'head')} shown, ` +
      `each as opaque as its ${measure || 'weight'} (under ${HEAD_VIEW_LIMITS.minWeight.toFixed(4)} left out). Hover a token for its lines.`,
    drawn,
    total,
  );
}

/** The layer's weights as last drawn (a copy: a snapshot's arrays are new each time). */
let lastWeights: Float32Array | null = null;

function noPlot(text: string): void {
  card?.plotEl.replaceChildren();
  drawnKey = ''; // the lines are off the page: the next plot puts them back
  say(text, 0, 0);
}

function say(text: string, drawn: number, total: number): void {
  if (!card) return;
  if (card.note.textContent !== text) card.note.textContent = text;
  card.note.dataset.lines = String(drawn);
  card.note.dataset.total = String(total);
}
