/**
 * The Global Q/K view's scatter: one trace of queries (filled dots) and one of keys (rings), coloured by token
 * (one hue a token), position (a colour scale) or role (queries in the theme's first chart colour,
 * keys in its second). Each point's hover names its sentence, role, token and position.
 *
 * SVG (`scatter`), not WebGL (`scattergl`): plotly's WebGL traces compile their shaders' code with
 * eval (regl), which every panel's CSP refuses (no 'unsafe-eval': test/webview/panels.test.ts), so a
 * scattergl trace draws only "WebGL is not supported" there. bench/README.md has what SVG costs.
 */
export const TRACE_TYPE = 'scatter';
import { type GlobalView, type Role, sideOf } from '../../src/protocol/globalView';
import { type Theme, plotlyText } from '../common';

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

/** The view's distinct tokens, sorted, each with its hue (cycling past twelve). */
export function tokenColours(view: GlobalView): Map<string, string> {
  const tokens = [...new Set(view.points.token)].sort();
  return new Map(tokens.map((t, i) => [t, TOKEN_HUES[i % TOKEN_HUES.length]!]));
}

/** A pair as one line: source → target (the decoder input without BOS). */
export function pairText(view: GlobalView, sentence: number): string {
  const p = view.pairs[sentence]!;
  return `${p.srcTokens.join(' ')} → ${p.tgtTokens.slice(1).join(' ')}`;
}

/** What hovering point `i` says (plotly markup: tokens escaped). */
export function hoverText(view: GlobalView, i: number): string {
  const pt = view.points;
  const role = pt.role[i]!;
  const side = sideOf(view.kind, role);
  return (
    `sentence ${pt.sentence[i]} · ${role === 'q' ? 'query' : 'key'} “${plotlyText(pt.token[i]!)}” at ${side} position ${pt.position[i]}` +
    `<br>${plotlyText(pairText(view, pt.sentence[i]!))}`
  );
}

/** The indices of role `role`'s points, in order. */
export function pointsOf(view: GlobalView, role: Role): number[] {
  const out: number[] = [];
  view.points.role.forEach((r, i) => r === role && out.push(i));
  return out;
}

/** The two traces (queries, then keys); each point's customdata is its index in view.points. */
export function traces(view: GlobalView, by: ColourBy, t: Theme): Plotly.Data[] {
  const hues = by === 'token' ? tokenColours(view) : undefined;
  const maxPosition = Math.max(1, ...view.points.position);
  return (['q', 'k'] as const).map((role) => {
    const idx = pointsOf(view, role);
    const colour =
      by === 'role'
        ? role === 'q'
          ? t.accent
          : t.accent2
        : by === 'token'
          ? idx.map((i) => hues!.get(view.points.token[i]!)!)
          : idx.map((i) => view.points.position[i]!);
    return {
      type: TRACE_TYPE,
      mode: 'markers',
      name: role === 'q' ? 'queries (dots)' : 'keys (rings)',
      x: idx.map((i) => view.points.x[i]!),
      y: idx.map((i) => view.points.y[i]!),
      customdata: idx,
      text: idx.map((i) => hoverText(view, i)),
      hovertemplate: '%{text}<extra></extra>',
      marker: {
        size: 6,
        symbol: role === 'q' ? 'circle' : 'circle-open',
        color: colour,
        ...(by === 'position'
          ? {
              colorscale: 'Viridis',
              cmin: 0,
              cmax: maxPosition,
              showscale: role === 'q',
              colorbar: { title: { text: 'position' }, tickfont: { color: t.fg } },
            }
          : {}),
      },
    } as Plotly.Data;
  });
}
