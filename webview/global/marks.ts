/**
 * The Global Q/K view's marks, one definition for the scatter, its legend and the token key: a query
 * is a filled dot, a key a ring, of DOT_RADIUS CSS pixels in the plot (the legend and the key draw
 * theirs one pixel larger, tokenKey.ts KEY_DOT).
 */

/** A dot's and a ring's radius in CSS pixels. */
export const DOT_RADIUS = 3.5;

/** What painting marks needs of a 2-D canvas context (the token key's layout is unit-tested without a DOM). */
interface MarkContext {
  fillStyle: unknown;
  strokeStyle: unknown;
  fill(): void;
  stroke(): void;
}

/** The current path as a role's marks: queries filled (dots), keys stroked (rings). */
export function paintMarks(ctx: MarkContext, role: 'q' | 'k', colour: string): void {
  if (role === 'q') {
    ctx.fillStyle = colour;
    ctx.fill();
  } else {
    ctx.strokeStyle = colour;
    ctx.stroke();
  }
}
