/**
 * Where the pointer is, on every map of a kind: hovering a cell of one thumbnail (a query and a
 * key) or a token of the token lines marks that token's row and column on each thumbnail and
 * across-heads map of the kind, so one token's attention reads across all heads at once.
 */
import { type AttentionKind, KIND_AXES } from '../../src/protocol/attention';
import { h } from '../common';

/** A mark on a thumbnail: the query row and the key column it shows (null: none). */
export interface Crosshair {
  row: number | null;
  col: number | null;
}

/** A bar over a canvas's wrapper (positioned), or its removal. */
function bar(
  canvas: HTMLCanvasElement,
  cls: string,
  box: { top: number; left: number; w: number; hgt: number } | null,
) {
  const wrap = canvas.parentElement!;
  let el = wrap.querySelector<HTMLElement>(`:scope > .${cls}`);
  if (!box) return el?.remove();
  if (!el) wrap.append((el = h('div', { class: `crosshair ${cls}` })));
  Object.assign(el.style, {
    top: `${canvas.offsetTop + box.top}px`,
    left: `${canvas.offsetLeft + box.left}px`,
    width: `${box.w}px`,
    height: `${box.hgt}px`,
  });
}

/** Marks `at` on every map of `kind` (and clears the other kinds). */
export function showCrosshair(root: HTMLElement, kind: AttentionKind | null, at: Crosshair): void {
  for (const canvas of root.querySelectorAll<HTMLCanvasElement>('canvas[data-queries]')) {
    const mine = canvas.dataset.kind === kind;
    const q = Number(canvas.dataset.queries);
    const k = Number(canvas.dataset.keys);
    const w = canvas.clientWidth;
    const hgt = canvas.clientHeight;
    const row = mine && at.row !== null && at.row < q ? at.row : null;
    const col = mine && at.col !== null && at.col < k ? at.col : null;
    bar(canvas, 'xh-row', row === null ? null : { top: (row * hgt) / q, left: 0, w, hgt: Math.max(1, hgt / q) });
    bar(canvas, 'xh-col', col === null ? null : { top: 0, left: (col * w) / k, w: Math.max(1, w / k), hgt });
  }
  root.dataset.crosshair = kind ? `${kind} ${at.row ?? '-'} ${at.col ?? '-'}` : '';
}

/** A token's row and column on a kind's maps: where it is a query, its row; where a key, its column. */
function tokenCrosshair(kind: AttentionKind, side: 'src' | 'tgt', index: number): Crosshair {
  const axes = KIND_AXES[kind];
  return { row: axes.queries === side ? index : null, col: axes.keys === side ? index : null };
}

/** The token line of a kind's card: each token a span whose hover marks it on the kind's maps (watchTokens). */
export function tokenLine(label: string, side: 'src' | 'tgt', tokens: string[], shown = 40): HTMLElement {
  const spans = tokens
    .slice(0, shown)
    .map((t, i) => h('span', { class: 'token', 'data-side': side, 'data-index': String(i) }, t));
  const rest = tokens.length > shown ? [h('span', {}, ' …')] : [];
  return h('div', { class: 'tokens muted' }, `${label} (${tokens.length}): `, ...spaced(spans), ...rest);
}

/**
 * Hovering a token of any token line under `root` (inside an element of `data-kind`) marks it on
 * that kind's maps: two listeners on `root`, attached once, so lines drawn anew attach none.
 */
export function watchTokens(root: HTMLElement): void {
  const tokenOf = (e: Event) => (e.target instanceof Element ? e.target.closest<HTMLElement>('span.token') : null);
  root.addEventListener('mouseover', (e) => {
    const t = tokenOf(e);
    const kind = t?.closest<HTMLElement>('[data-kind]')?.dataset.kind as AttentionKind | undefined;
    if (!t || !kind) return;
    showCrosshair(root, kind, tokenCrosshair(kind, t.dataset.side as 'src' | 'tgt', Number(t.dataset.index)));
  });
  root.addEventListener('mouseout', (e) => {
    if (tokenOf(e)) showCrosshair(root, null, { row: null, col: null });
  });
}

function spaced(spans: HTMLElement[]): (HTMLElement | string)[] {
  return spans.flatMap((s, i) => (i ? [' ', s] : [s]));
}
