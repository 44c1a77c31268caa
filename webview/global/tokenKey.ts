/**
 * The Global Q/K view's token key laid out (pure; canvas.ts draws it right of the plot when coloured
 * by token): each token's hue as a dot and the token, as many rows as the plot's height holds, the
 * last then saying how many more there are; past twelve tokens the hues repeat, and the key shows
 * it. Laid out before the plot (its width narrows the plot), drawn after it.
 */
import { counted, grouped } from '../lib/counted';
import { DOT_RADIUS } from './marks';

/**
 * The order of the key and of the hues: whole numbers first, by value (4 before 10), then every other
 * token by its UTF-16 code units (`</s>` before `<s>`). A total order: a comparison mixing the two
 * kinds on characters alone would put `1a` < `4` < `10` < `1a`.
 */
export function tokenOrder(a: string, b: string): number {
  const [na, nb] = [/^\d+$/.test(a), /^\d+$/.test(b)];
  if (na && nb) return Number(a) - Number(b) || (a < b ? -1 : a > b ? 1 : 0);
  if (na !== nb) return na ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** What the layout needs of a canvas: the width of a text in its font. */
export interface TextMeasure {
  measureText(text: string): { width: number };
}

/** A dot's radius in the key and the legend (a point's, one pixel larger), the room from the dot's left to its token, and the gaps. */
export const KEY_DOT = DOT_RADIUS + 1;
export const KEY_SWATCH = 14;
const GAP_LEFT = 14;
const GAP_RIGHT = 8;

/**
 * A row of the key: the token, or for the last row `+N more` (`more`); the text drawn (cut with an
 * ellipsis where too wide); the centre of its dot (a token's row) or the start of its text (`more`);
 * and where its text ends, in CSS pixels of the canvas.
 */
export interface KeyRow {
  text: string;
  drawn: string;
  more: boolean;
  x: number;
  y: number;
  end: number;
}

/** The key as laid out: its width (with its gaps) and each row's texts, before it has a place. */
export interface KeyPlan {
  width: number;
  rows: { text: string; drawn: string; more: boolean; textWidth: number }[];
  rowHeight: number;
}

/** `text` cut to `most` px with an ellipsis where it is wider: the longest prefix of whole code points that fits. */
function fitted(ctx: TextMeasure, text: string, most: number): string {
  if (ctx.measureText(text).width <= most) return text;
  const chars = Array.from(text);
  let [lo, hi] = [0, chars.length - 1];
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (ctx.measureText(`${chars.slice(0, mid).join('')}…`).width <= most) lo = mid;
    else hi = mid - 1;
  }
  return `${chars.slice(0, lo).join('')}…`;
}

/**
 * The key of `tokens` (in hue order) beside a plot `plotHeight` px high in a canvas `canvasWidth` px
 * wide, in ctx's font: as many rows as fit (the last `+N more`, or where no token row fits, the
 * count), each token's text at most 110 px and the whole key at most 30% of the canvas.
 */
export function planTokenKey(
  ctx: TextMeasure,
  tokens: string[],
  plotHeight: number,
  fontSize: number,
  canvasWidth: number,
): KeyPlan {
  const rowHeight = fontSize + 5;
  const fit = Math.max(1, Math.floor(plotHeight / rowHeight));
  const shown = tokens.length > fit ? tokens.slice(0, fit - 1) : tokens;
  const left = tokens.length - shown.length;
  const most = Math.max(24, Math.min(110, Math.floor(0.3 * canvasWidth) - GAP_LEFT - KEY_SWATCH - GAP_RIGHT));
  const row = (text: string, more: boolean) => {
    const drawn = fitted(ctx, text, more ? most + KEY_SWATCH : most);
    return { text, drawn, more, textWidth: ctx.measureText(drawn).width };
  };
  const rows = shown.map((tok) => row(tok, false));
  if (left > 0) rows.push(row(shown.length ? `+${grouped(left)} more` : counted(tokens.length, 'token'), true));
  const widest = Math.max(0, ...rows.map((r) => (r.more ? 0 : KEY_SWATCH) + r.textWidth));
  return { width: GAP_LEFT + Math.ceil(widest) + GAP_RIGHT, rows, rowHeight };
}
