/**
 * The attention view's head view (issue 13), after BertViz's: for one layer of one kind, the query
 * tokens on the left, the key tokens on the right, and one line per head and token pair, coloured by
 * head, its opacity the attention weight (or the value-weighted norm, scaled by the page). A click
 * on a head's colour hides or shows its lines (a double click shows that head alone); hovering a
 * token shows only its lines. The geometry, colours
 * and switches are webview/lib/headView.ts; this file is the DOM (an SVG) and the card's state.
 *
 * Issue 34: the card is drawn only while on screen (lazyParts.ts), once per snapshot, and only when
 * what it shows changed (its kind's layer, the tokens, the heads shown). Its controls, token labels
 * and listeners (delegated to the card) are made once per shape; lines are kept and reused, a new
 * snapshot only moves their ends and opacities (spare ones hidden, class `spare`).
 */
import {
  ATTENTION_KINDS,
  type Attention,
  type AttentionKind,
  findMaps,
  headId,
  tokensOf,
} from '../../src/protocol/attention';
import type { ViewHeader } from '../../src/protocol/webview';
import { h, renderHeader } from '../common';
import { lazyPart, markStale } from './lazyParts';
import { sameValues } from '../heatmap';
import {
  HEAD_VIEW_LIMITS,
  headColor,
  headSlots,
  headsShown,
  headViewLayout,
  type HeadViewLayout,
  headViewLines,
  rowCenter,
  soloHead,
  toggleHead,
} from '../lib/headView';

const SVG = 'http://www.w3.org/2000/svg';
const KIND_LABELS: Record<AttentionKind, string> = {
  encoder_self: 'encoder self',
  decoder_self: 'decoder self',
  cross: 'cross (encoder–decoder)',
};
/** Characters of a token label before it is cut (the whole token is its tooltip). */
const LABEL_CHARS = 14;

const CSS = `
#head-view .hv-heads { display: flex; flex-wrap: wrap; gap: 4px; margin: 6px 0; }
#head-view button.head-swatch { display: inline-flex; align-items: center; gap: 4px; background: transparent;
  color: var(--vscode-editor-foreground); border: 1px solid var(--vscode-editorWidget-border, #454545); padding: 1px 6px; }
#head-view button.head-swatch .chip { width: 12px; height: 12px; display: inline-block; border-radius: 2px; }
#head-view button.head-swatch[aria-pressed="false"] { opacity: 0.45; text-decoration: line-through; }
#head-view .hv-plot { overflow: auto; max-height: 70vh; }
#head-view svg text { fill: var(--vscode-editor-foreground); font-family: var(--vscode-editor-font-family, monospace);
  font-size: 12px; dominant-baseline: central; cursor: default; user-select: none; }
#head-view .hv-token rect { fill: transparent; }
#head-view .hv-token.hot rect { fill: var(--vscode-editor-selectionBackground, rgba(128, 128, 128, 0.35)); }
#head-view svg.focus line { visibility: hidden; }
#head-view svg.focus line.hot { visibility: visible; stroke-width: 3; }
#head-view .hv-header { margin-bottom: 4px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
`;

let card: ReturnType<typeof build> | null = null;
let kind: AttentionKind = 'encoder_self';
let layer = 0;
let shown: boolean[] = [];
let last: { a: Attention; header: ViewHeader | null; measure: string } | null = null;
/** What the card's SVG is built for (kind, tokens), and its parts kept between snapshots. */
let plot: {
  key: string;
  svg: SVGSVGElement;
  layout: HeadViewLayout;
  groups: SVGGElement[];
  lines: SVGLineElement[][];
} | null = null;
/** What the card's lines last showed: a snapshot that changes none of them moves none. */
let drawnKey = '';

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number> = {}) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

function build() {
  document.head.append(h('style', {}, CSS));
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
  const tokenOf = (e: Event) => (e.target instanceof Element ? e.target.closest<SVGGElement>('.hv-token') : null);
  plotEl.addEventListener('mouseover', (e) => {
    const t = tokenOf(e);
    if (t && plot) focus(plot.svg, plot.layout, t.dataset.side as 'q' | 'k', Number(t.dataset.index), t);
  });
  plotEl.addEventListener('mouseout', (e) => {
    const t = tokenOf(e);
    if (!t || !plot || (e.relatedTarget instanceof Node && t.contains(e.relatedTarget))) return; // within the token
    focus(plot.svg, plot.layout, t.dataset.side as 'q' | 'k', null, t);
  });
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
  swatches(heads);
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
  const p = plotFor(JSON.stringify([kind, heads, queryTokens, keyTokens]), heads, queryTokens, keyTokens);
  const used = new Array<number>(heads).fill(0);
  for (const l of lines) {
    const pool = p.lines[l.head]!;
    let el = pool[used[l.head]!];
    if (!el) {
      el = svg('line', { x1: p.layout.lineX1, x2: p.layout.lineX2, 'data-head': l.head });
      pool.push(el);
      p.groups[l.head]!.append(el);
    }
    used[l.head]!++;
    el.classList.remove('spare');
    el.removeAttribute('display');
    el.setAttribute('y1', String(rowCenter(p.layout, l.q)));
    el.setAttribute('y2', String(rowCenter(p.layout, l.k)));
    el.setAttribute('stroke-opacity', String(l.w));
    el.dataset.q = String(l.q);
    el.dataset.k = String(l.k);
  }
  p.lines.forEach((pool, hd) => {
    for (const el of pool.slice(used[hd])) {
      el.classList.add('spare');
      el.setAttribute('display', 'none');
      delete el.dataset.q;
      delete el.dataset.k;
    }
  });
  p.groups.forEach((g, hd) => (shown[hd] ? g.removeAttribute('display') : g.setAttribute('display', 'none')));
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

/** The SVG for these heads and tokens: the one kept when they are the same, else made anew. */
function plotFor(key: string, heads: number, queryTokens: string[], keyTokens: string[]) {
  if (plot?.key === key) return plot;
  const layout = headViewLayout(queryTokens.length, keyTokens.length);
  const el = svg('svg', {
    width: layout.width,
    height: layout.height,
    viewBox: `0 0 ${layout.width} ${layout.height}`,
  });
  const groups = Array.from({ length: heads }, (_, hd) =>
    svg('g', { 'data-head': hd, 'stroke-width': 2, style: `stroke: ${headColor(hd)}` }),
  );
  el.append(...groups, tokens(queryTokens, 'q', layout), tokens(keyTokens, 'k', layout));
  plot = { key, svg: el, layout, groups, lines: groups.map(() => []) };
  return plot;
}

function say(text: string, drawn: number, total: number): void {
  if (!card) return;
  if (card.note.textContent !== text) card.note.textContent = text;
  card.note.dataset.lines = String(drawn);
  card.note.dataset.total = String(total);
}

/** Each head's colour switch: made when the count of heads changes, else only pressed or not. */
function swatches(heads: number): void {
  if (!card) return;
  if (card.heads.children.length !== heads)
    card.heads.replaceChildren(
      ...Array.from({ length: heads }, (_, hd) =>
        h(
          'button',
          { class: 'head-swatch small', 'data-head': String(hd) },
          h('span', { class: 'chip', style: `background: ${headColor(hd)}` }),
          `H${hd}`,
        ),
      ),
    );
  for (const b of card.heads.querySelectorAll<HTMLButtonElement>('.head-swatch')) {
    const hd = Number(b.dataset.head);
    b.setAttribute('aria-pressed', String(shown[hd]));
    b.title = `${headId({ kind, layer, head: hd })}: click to hide or show its lines; double click to show it alone`;
  }
}

/** One column of token labels; hovering a token shows only its lines (delegated in build). */
function tokens(labels: string[], side: 'q' | 'k', layout: HeadViewLayout) {
  const g = svg('g', { class: `hv-tokens hv-${side}` });
  labels.forEach((tok, i) => {
    const left = side === 'q';
    const y = rowCenter(layout, i);
    const t = svg('g', { class: 'hv-token', 'data-side': side, 'data-index': i });
    const x = left ? 0 : layout.rightTextX - 4;
    t.append(svg('rect', { x, y: y - layout.rowHeight / 2, width: layout.lineX1 - 2, height: layout.rowHeight }));
    const text = svg('text', {
      x: left ? layout.leftTextX : layout.rightTextX,
      y,
      'text-anchor': left ? 'end' : 'start',
    });
    text.textContent = tok.length > LABEL_CHARS ? `${tok.slice(0, LABEL_CHARS - 1)}…` : tok;
    const title = svg('title');
    title.textContent = `${left ? 'query' : 'key'} ${i} “${tok}”`;
    t.append(text, title);
    g.append(t);
  });
  return g;
}

/**
 * Shows only the lines of token `i` of `side` (none: all again), and, as BertViz does, on each token
 * across a box split into one slot per head shown, each slot as opaque as that head's weight.
 */
function focus(plot: SVGSVGElement, layout: HeadViewLayout, side: 'q' | 'k', i: number | null, token: Element): void {
  for (const el of plot.querySelectorAll('.hot')) el.classList.remove('hot');
  plot.querySelector('.hv-boxes')?.remove();
  plot.classList.toggle('focus', i !== null);
  if (i === null) return;
  token.classList.add('hot');
  const boxes = svg('g', { class: 'hv-boxes' });
  const slots = headSlots(shown);
  const width = (layout.lineX1 - 2) / Math.max(1, shown.filter(Boolean).length);
  const x0 = side === 'q' ? layout.rightTextX - 4 : 0;
  for (const l of plot.querySelectorAll<SVGLineElement>(`line:not(.spare)[data-${side}="${i}"]`)) {
    l.classList.add('hot');
    const head = Number(l.dataset.head);
    const y = Number(l.getAttribute(side === 'q' ? 'y2' : 'y1'));
    const box = svg('rect', {
      x: x0 + slots[head]! * width,
      y: y - layout.rowHeight / 2,
      width,
      height: layout.rowHeight,
      'fill-opacity': l.getAttribute('stroke-opacity')!,
      'data-head': head,
      style: `fill: ${headColor(head)}`,
    });
    boxes.append(box);
  }
  plot.querySelector('.hv-tokens')!.before(boxes);
}
