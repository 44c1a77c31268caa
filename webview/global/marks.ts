/**
 * The Global Q/K view's marks, one definition for the scatter, its legend and the token key: a query
 * is a filled dot, a key a ring, both of DOT_RADIUS CSS pixels.
 */

/** A dot's and a ring's radius in CSS pixels. */
export const DOT_RADIUS = 3.5;

/** The current path as a role's marks: queries filled (dots), keys stroked (rings). */
export function paintMarks(ctx: CanvasRenderingContext2D, role: 'q' | 'k', colour: string): void {
  if (role === 'q') {
    ctx.fillStyle = colour;
    ctx.fill();
  } else {
    ctx.strokeStyle = colour;
    ctx.stroke();
  }
}
