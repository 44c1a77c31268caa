/**
 * The attention view's head view (issue 13), after BertViz's: for one layer of one kind, the query
 * tokens on the left, the key tokens on the right, and one line per head and token pair, coloured by
 * head, its opacity the attention weight. A click on a head's colour hides or shows its lines (a
 * double click shows that head alone); hovering a token shows only its lines. The geometry, colours
 * and switches are webview/lib/headView.ts; this file is the DOM (an SVG) and the card's state.
 */
import {
  ATTENTION_KINDS,
  type Attention,
  type AttentionKind,
  findMaps,
  headId,
  tokensOf,
} from '../src/protocol/attention';
import type { ViewHeader } from '../src/protocol/webview';
import { h, renderHeader } from './common';
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
} from './lib/headView';

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
let last: { a: Attention; header: ViewHeader | null } | null = null;

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
  const plot = h('div', { class: 'hv-plot' });
  const el = h(
    'section',
    { class: 'card', id: 'head-view' },
    h('header', {}, h('h2', {}, 'Head view'), h('span', { class: 'actions' }, kindSel, layerSel)),
    headerEl,
    heads,
    note,
    plot,
  );
  kindSel.addEventListener('change', () => {
    kind = kindSel.value as AttentionKind;
    redraw();
  });
  layerSel.addEventListener('change', () => {
    layer = Number(layerSel.value);
    redraw();
  });
  return { el, kindSel, layerSel, headerEl, heads, note, plot };
}

/** Shows the head view of `a` at the end of `parent` (the card keeps its kind, layer and switches). */
export function showHeadView(parent: HTMLElement, a: Attention, header: ViewHeader | null): void {
  card ??= build();
  last = { a, header };
  parent.append(card.el);
  redraw();
}

function redraw(): void {
  if (!card || !last) return;
  const { a, header } = last;
  const c = card;
  const kinds = ATTENTION_KINDS.filter((k) => findMaps(a, k));
  if (!kinds.includes(kind)) kind = kinds[0] ?? 'encoder_self';
  c.kindSel.replaceChildren(...kinds.map((k) => h('option', { value: k }, KIND_LABELS[k])));
  c.kindSel.value = kind;
  const maps = findMaps(a, kind);
  const [layers, heads, queries, keys] = maps?.shape ?? [0, 0, 0, 0];
  layer = Math.min(layer, Math.max(0, layers - 1));
  c.layerSel.replaceChildren(
    ...Array.from({ length: layers }, (_, l) => h('option', { value: String(l) }, `layer ${l}`)),
  );
  c.layerSel.value = String(layer);
  shown = headsShown(heads, shown);
  c.el.dataset.kind = kind;
  c.el.dataset.layer = String(layer);
  const src = a.source;
  renderHeader(c.headerEl, header, {
    step: src.step,
    input: src.input === 'probe' ? 'probe' : a.srcTokens.join(' '),
    note: `${KIND_LABELS[kind]} · layer ${layer}`,
  });
  c.plot.replaceChildren();
  c.heads.replaceChildren(...shown.map((_, hd) => swatch(hd)));
  const { queryTokens, keyTokens } = tokensOf(a, kind);
  if (!maps) return say('No attention to show.', 0, 0);
  if (maps.pool || queries > HEAD_VIEW_LIMITS.tokens || keys > HEAD_VIEW_LIMITS.tokens)
    return say(
      `The head view draws inputs of up to ${HEAD_VIEW_LIMITS.tokens} tokens a side; this one has ` +
        `${queryTokens.length} × ${keyTokens.length}. Open a head from the grid for its map.`,
      0,
      0,
    );
  const { lines, total } = headViewLines(maps.weights, maps.shape, layer, shown);
  const layout = headViewLayout(queries, keys);
  const plot = svg('svg', {
    width: layout.width,
    height: layout.height,
    viewBox: `0 0 ${layout.width} ${layout.height}`,
  });
  const groups = shown.map((on, hd) =>
    svg('g', {
      'data-head': hd,
      'stroke-width': 2,
      style: `stroke: ${headColor(hd)}`,
      ...(on ? {} : { display: 'none' }),
    }),
  );
  for (const l of lines)
    groups[l.head]!.append(
      svg('line', {
        x1: layout.lineX1,
        y1: rowCenter(layout, l.q),
        x2: layout.lineX2,
        y2: rowCenter(layout, l.k),
        'stroke-opacity': l.w,
        'data-head': l.head,
        'data-q': l.q,
        'data-k': l.k,
      }),
    );
  plot.append(...groups, tokens(plot, queryTokens, 'q', layout), tokens(plot, keyTokens, 'k', layout));
  c.plot.append(plot);
  const cut = total > lines.length ? ` (the strongest ${lines.length} of ${total})` : '';
  say(
    `${lines.length} lines${cut}: ${queryTokens.length} queries × ${keyTokens.length} keys × ${shown.filter(Boolean).length} heads shown, ` +
      `each as opaque as its weight (under ${HEAD_VIEW_LIMITS.minWeight.toFixed(4)} left out). Hover a token for its lines.`,
    lines.length,
    total,
  );
}

function say(text: string, drawn: number, total: number): void {
  if (!card) return;
  card.note.textContent = text;
  card.note.dataset.lines = String(drawn);
  card.note.dataset.total = String(total);
}

/** Head `hd`'s colour: a click hides or shows its lines, a double click shows it alone. */
function swatch(hd: number): HTMLButtonElement {
  const b = h(
    'button',
    {
      class: 'head-swatch small',
      'data-head': String(hd),
      'aria-pressed': String(shown[hd]),
      title: `${headId({ kind, layer, head: hd })}: click to hide or show its lines; double click to show it alone`,
    },
    h('span', { class: 'chip', style: `background: ${headColor(hd)}` }),
    `H${hd}`,
  );
  b.addEventListener('click', () => {
    shown = toggleHead(shown, hd);
    redraw();
  });
  b.addEventListener('dblclick', () => {
    shown = soloHead(shown, hd);
    redraw();
  });
  return b;
}

/** One column of token labels; hovering a token shows only its lines. */
function tokens(plot: SVGSVGElement, labels: string[], side: 'q' | 'k', layout: HeadViewLayout) {
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
    t.addEventListener('mouseenter', () => focus(plot, layout, side, i, t));
    t.addEventListener('mouseleave', () => focus(plot, layout, side, null, t));
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
  for (const l of plot.querySelectorAll<SVGLineElement>(`line[data-${side}="${i}"]`)) {
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
