/**
 * What the Global Q/K view's scatter shows of each point (pure; no DOM): its colour under each
 * colouring (token: one hue a token; position: viridis from 0 to the view's last position, on a light
 * theme stopped before its pale yellow, on a dark one started after its dark violet; role:
 * queries in the theme's first chart colour, keys in its second), the axes' titles, and what hovering
 * it says (its sentence, role, token, position and the pair's text). canvas.ts draws them.
 */
import { type GlobalView, type Role, sideOf } from '../../src/protocol/globalView';
import type { Theme } from '../common';
import { type Rgb, viridis } from '../lib/colormap';
import { cssRgb, viridisSpanOn } from '../lib/contrast';
import { tokenOrder } from './tokenKey';

export const COLOUR_BY = ['token', 'position', 'role'] as const;
export type ColourBy = (typeof COLOUR_BY)[number];

/** Twelve hues that read on dark and light backgrounds (a token's colour: its rank among the view's tokens). */
export const TOKEN_HUES = [
  '#4e79a7',
  '#f28e2b',
  '#e15759',
  '#76b7b2',
  '#59a14f',
  '#edc948',
  '#b07aa1',
  '#ff9da7',
  '#9c755f',
  '#bab0ac',
  '#17becf',
  '#bcbd22',
];

/** The view's distinct tokens in the key's order (tokenOrder), each with its hue (cycling past twelve). */
export function tokenColours(view: GlobalView): Map<string, string> {
  const tokens = [...new Set(view.points.token)].sort(tokenOrder);
  return new Map(tokens.map((t, i) => [t, TOKEN_HUES[i % TOKEN_HUES.length]!]));
}

/** The last position of any point: the top of the position colouring (at least 1). */
export const maxPosition = (view: GlobalView): number => Math.max(1, ...view.points.position);

/** The least contrast a position's colour keeps against the theme's background (WCAG's for graphics). */
export const POSITION_CONTRAST = 3;

/**
 * The position colouring from 0 (the first position) to 1 (the last): the part of viridis that keeps
 * POSITION_CONTRAST against the background throughout (lib/contrast.ts viridisSpanOn). On a light
 * theme viridis from its dark violet up to about 0.6 of it (a teal green on white: its yellow end is
 * faint on a near-white page); on a dark theme from about 0.375 of it (a steel blue on VS Code's
 * #1f1f1f: its violet start is near-invisible on a dark page) up to its yellow end. Viridis whole
 * where the background is not a colour cssRgb reads.
 */
export function positionScale(t: Theme): (f: number) => Rgb {
  const bg = cssRgb(t.bg);
  const [start, end] = bg ? viridisSpanOn(bg, POSITION_CONTRAST) : [0, 1];
  return (f) => viridis(start + f * (end - start));
}

/** Each point's colour (a CSS colour) under colouring `by`; `hues`, the token hues where known already. */
export function pointColours(view: GlobalView, by: ColourBy, t: Theme, hues?: Map<string, string>): string[] {
  const pt = view.points;
  if (by === 'role') return pt.role.map((r) => (r === 'q' ? t.accent : t.accent2));
  if (by === 'token') {
    const hue = hues ?? tokenColours(view);
    return pt.token.map((tok) => hue.get(tok)!);
  }
  const top = maxPosition(view);
  const scale = positionScale(t);
  const cache = new Map<number, string>();
  return pt.position.map((p) => {
    let c = cache.get(p);
    if (c === undefined) cache.set(p, (c = `rgb(${scale(p / top).join(',')})`));
    return c;
  });
}

/** Axis n's title (0: x, 1: y): `PC1 (60.0% of the variance)` or `UMAP 1`. */
export function axisTitle(view: GlobalView, n: 0 | 1): string {
  return view.projection === 'pca'
    ? `PC${n + 1}${view.explained ? ` (${(100 * view.explained[n]!).toFixed(1)}% of the variance)` : ''}`
    : `UMAP ${n + 1}`;
}

/** A pair as one line: source → target (the decoder input without BOS). */
export function pairText(view: GlobalView, sentence: number): string {
  const p = view.pairs[sentence]!;
  return `${p.srcTokens.join(' ')} → ${p.tgtTokens.slice(1).join(' ')}`;
}

/** What hovering point `i` says: two lines of plain text (shown with textContent). */
export function hoverLines(view: GlobalView, i: number): [string, string] {
  const pt = view.points;
  const role = pt.role[i]!;
  const side = sideOf(view.kind, role);
  return [
    `sentence ${pt.sentence[i]} · ${role === 'q' ? 'query' : 'key'} “${pt.token[i]}” at ${side} position ${pt.position[i]}`,
    pairText(view, pt.sentence[i]!),
  ];
}

/** The indices of role `role`'s points, in order. */
export function pointsOf(view: GlobalView, role: Role): number[] {
  const out: number[] = [];
  view.points.role.forEach((r, i) => r === role && out.push(i));
  return out;
}
