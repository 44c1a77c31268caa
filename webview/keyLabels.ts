/**
 * The key tokens over (or under) a map, one a column: written across when every one fits its
 * column, else upwards (html.ts `.key-labels`), so that short tokens such as digits read upright.
 */
import { h } from './common';

let measure: CanvasRenderingContext2D | undefined;

/** What each labels element last showed, so that a redraw of the same keys costs nothing. */
const shown = new WeakMap<HTMLElement, string>();

/** Whether each token, in the font its span is drawn in, fits a column `column` px wide. */
function fitAcross(spans: readonly HTMLElement[], column: number): boolean {
  measure ??= document.createElement('canvas').getContext('2d')!;
  const style = getComputedStyle(spans[0]);
  measure.font = `${style.fontSize} ${style.fontFamily}`;
  return spans.every((s) => measure!.measureText(s.textContent ?? '').width <= column - 4);
}

/**
 * Fills `el` with a label a key, `column` px each; `across` when they all fit written across. `el`
 * must be in the page: the labels are measured in the font it gives them.
 */
export function setKeyLabels(el: HTMLElement, tokens: readonly string[], column: number): void {
  const key = `${column}\u0000${tokens.join('\u0000')}`;
  if (shown.get(el) === key) return;
  shown.set(el, key);
  const spans = tokens.map((tok) => h('span', { style: `width:${column}px` }, tok));
  el.replaceChildren(...spans);
  el.classList.toggle('across', spans.length > 0 && fitAcross(spans, column));
}
