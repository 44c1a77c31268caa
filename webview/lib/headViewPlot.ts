/**
 * The head view's drawing (the DOM half of lib/headView.ts), shared by the attention view's card
 * (webview/attention/headView.ts) and the run report's (webview/report/headView.ts): its styles,
 * the SVG of two token columns with one group of lines per head, the lines of a layer placed on it
 * (kept and reused between draws, spare ones hidden with class `spare`), each head's colour switch,
 * and hovering a token: only its lines, and, as BertViz does, a box across each token split into
 * one slot per head shown, each slot as opaque as that head's weight.
 */
import { headId, type AttentionKind } from '../../src/protocol/attention';
import { h } from '../common';
import { headColor, headSlots, type HeadLine, headViewLayout, type HeadViewLayout, rowCenter } from './headView';

const SVG = 'http://www.w3.org/2000/svg';
/** Characters of a token label before it is cut (the whole token is its tooltip). */
const LABEL_CHARS = 14;

/** Each kind as the head view's picker names it. */
export const KIND_LABELS: Record<AttentionKind, string> = {
  encoder_self: 'encoder self',
  decoder_self: 'decoder self',
  cross: 'cross (encoder–decoder)',
};

/** The card's styles: a card with id `head-view`. */
export const HEAD_VIEW_CSS = `
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

/** One drawn plot: what it is built for (`key`), its SVG and layout, a group and lines per head. */
export interface HeadViewPlot {
  key: string;
  svg: SVGSVGElement;
  layout: HeadViewLayout;
  groups: SVGGElement[];
  lines: SVGLineElement[][];
}

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number> = {}) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

/** The plot for these heads and tokens under `key`: `kept` when it was built for the same, else anew. */
export function headViewPlot(
  kept: HeadViewPlot | null,
  key: string,
  heads: number,
  queryTokens: string[],
  keyTokens: string[],
): HeadViewPlot {
  if (kept?.key === key) return kept;
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
  return { key, svg: el, layout, groups, lines: groups.map(() => []) };
}

/** Places `lines` on the plot (reusing its line elements, hiding the spare ones); hides the heads not `shown`. */
export function placeLines(p: HeadViewPlot, lines: HeadLine[], shown: readonly boolean[]): void {
  const used = new Array<number>(p.groups.length).fill(0);
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
}

/** Each head's colour switch in `box`: made when the count of heads changes, else only pressed or not. */
export function headSwatches(box: HTMLElement, shown: readonly boolean[], kind: AttentionKind, layer: number): void {
  const heads = shown.length;
  if (box.children.length !== heads)
    box.replaceChildren(
      ...Array.from({ length: heads }, (_, hd) =>
        h(
          'button',
          { class: 'head-swatch small', 'data-head': String(hd) },
          h('span', { class: 'chip', style: `background: ${headColor(hd)}` }),
          `H${hd}`,
        ),
      ),
    );
  for (const b of box.querySelectorAll<HTMLButtonElement>('.head-swatch')) {
    const hd = Number(b.dataset.head);
    b.setAttribute('aria-pressed', String(shown[hd]));
    b.title = `${headId({ kind, layer, head: hd })}: click to hide or show its lines; double click to show it alone`;
  }
}

/**
 * Hovering a token in `plotEl` shows only its lines (listeners delegated to `plotEl`, made once);
 * `now` gives the plot drawn and the heads shown at the time of the hover.
 */
export function hoverTokens(plotEl: HTMLElement, now: () => { plot: HeadViewPlot | null; shown: boolean[] }): void {
  const tokenOf = (e: Event) => (e.target instanceof Element ? e.target.closest<SVGGElement>('.hv-token') : null);
  plotEl.addEventListener('mouseover', (e) => {
    const t = tokenOf(e);
    const { plot, shown } = now();
    if (t && plot) focus(plot, shown, t.dataset.side as 'q' | 'k', Number(t.dataset.index), t);
  });
  plotEl.addEventListener('mouseout', (e) => {
    const t = tokenOf(e);
    const { plot, shown } = now();
    if (!t || !plot || (e.relatedTarget instanceof Node && t.contains(e.relatedTarget))) return; // within the token
    focus(plot, shown, t.dataset.side as 'q' | 'k', null, t);
  });
}

/** One column of token labels. */
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

/** Shows only the lines of token `i` of `side` (none: all again), with the token's box of head slots. */
function focus(p: HeadViewPlot, shown: readonly boolean[], side: 'q' | 'k', i: number | null, token: Element): void {
  const { svg: plot, layout } = p;
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
