/**
 * The key tokens over (or under) a map, one a column: written across when every one fits its
 * column, else upwards (html.ts `.key-labels`), so that short tokens such as digits read upright.
 */
import { h } from './common';

let measure: CanvasRenderingContext2D | undefined;

/** Whether each token, in the labels' font (0.85 of the page's), fits a column `column` px wide. */
function fitAcross(tokens: readonly string[], column: number): boolean {
  measure ??= document.createElement('canvas').getContext('2d')!;
  const body = getComputedStyle(document.body);
  measure.font = `${0.85 * parseFloat(body.fontSize)}px ${body.fontFamily}`;
  return tokens.every((t) => measure!.measureText(t).width <= column - 4);
}

/** Fills `el` with a label a key, `column` px each; `across` when they all fit written across. */
export function setKeyLabels(el: HTMLElement, tokens: readonly string[], column: number): void {
  el.replaceChildren(...tokens.map((tok) => h('span', { style: `width:${column}px` }, tok)));
  el.classList.toggle('across', tokens.length > 0 && fitAcross(tokens, column));
}
