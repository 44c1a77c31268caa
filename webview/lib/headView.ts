/**
 * The head view's pure part (no DOM), after BertViz's head view: one layer's heads drawn as lines
 * from each query token (left column) to each key token (right column), one line per head and
 * token pair, its opacity the attention weight, its colour the head's. Here: which lines to draw
 * (the shown heads; none too faint to see; at most a bounded number), where tokens and lines sit,
 * each head's theme colour, and the head switches (click: toggle; double click: this head alone).
 */

/** What the head view draws at most, and the faintest line it draws. */
export const HEAD_VIEW_LIMITS = {
  /** Tokens a column: past this the view says so rather than draw thousands of rows. */
  tokens: 150,
  /** Lines in all: past this only the strongest are drawn (SVG slows past some tens of thousands). */
  lines: 20_000,
  /** A weight below this is drawn at an opacity no screen shows (under 1/2 of one 8-bit step): left out. */
  minWeight: 1 / 512,
};

/** One line: head `head`'s attention from query `q` to key `k`, weight `w`. */
export interface HeadLine {
  head: number;
  q: number;
  k: number;
  w: number;
}

/**
 * The lines of layer `layer` of a `[layers, heads, queries, keys]` map for the heads `shown[h]`,
 * head-major then query then key. `total` counts every line at least `minWeight`; when more than
 * `maxLines`, only the `maxLines` strongest are returned (ties: the earlier first), in the same order.
 */
export function headViewLines(
  weights: ArrayLike<number>,
  shape: readonly number[],
  layer: number,
  shown: readonly boolean[],
  { minWeight = HEAD_VIEW_LIMITS.minWeight, maxLines = HEAD_VIEW_LIMITS.lines } = {},
): { lines: HeadLine[]; total: number } {
  const [layers, heads, queries, keys] = shape as [number, number, number, number];
  if (layer < 0 || layer >= layers) throw new Error(`layer ${layer} is not one of the ${layers} layers`);
  const lines: HeadLine[] = [];
  for (let head = 0; head < heads; head++) {
    if (!shown[head]) continue;
    const base = (layer * heads + head) * queries * keys;
    for (let q = 0; q < queries; q++)
      for (let k = 0; k < keys; k++) {
        const w = weights[base + q * keys + k]!;
        if (w >= minWeight) lines.push({ head, q, k, w });
      }
  }
  const total = lines.length;
  if (total <= maxLines) return { lines, total };
  const order = lines.map((_, i) => i).sort((a, b) => lines[b]!.w - lines[a]!.w || a - b);
  const kept = order.slice(0, maxLines).sort((a, b) => a - b);
  return { lines: kept.map((i) => lines[i]!), total };
}

/** Where the parts of the view sit, in CSS pixels. */
export interface HeadViewLayout {
  width: number;
  height: number;
  /** Right edge of the query labels (text anchored at its end). */
  leftTextX: number;
  /** Where lines start (left) and end (right). */
  lineX1: number;
  lineX2: number;
  /** Left edge of the key labels. */
  rightTextX: number;
  rowHeight: number;
  /** Top of the first token row. */
  top: number;
}

/** The layout for `left` query and `right` key tokens: two text columns with the lines between. */
export function headViewLayout(
  left: number,
  right: number,
  { column = 110, gap = 200, rowHeight = 20, pad = 6, top = 4 } = {},
): HeadViewLayout {
  return {
    width: column * 2 + gap,
    height: top * 2 + Math.max(left, right, 1) * rowHeight,
    leftTextX: column - pad,
    lineX1: column,
    lineX2: column + gap,
    rightTextX: column + gap + pad,
    rowHeight,
    top,
  };
}

/** The vertical centre of token row `i`. */
export function rowCenter(layout: HeadViewLayout, i: number): number {
  return layout.top + (i + 0.5) * layout.rowHeight;
}

/** VS Code's chart colours (theme variables, with Dark Modern's values where a page has none). */
const CHART = Object.fromEntries(
  [
    ['blue', '#3794ff'],
    ['orange', '#d18616'],
    ['green', '#89d185'],
    ['red', '#f14c4c'],
    ['purple', '#b180d7'],
    ['yellow', '#cca700'],
  ].map(([name, fallback]) => [name, `var(--vscode-charts-${name}, ${fallback})`]),
) as Record<'blue' | 'orange' | 'green' | 'red' | 'purple' | 'yellow', string>;
const BASE = [CHART.blue, CHART.orange, CHART.green, CHART.red, CHART.purple, CHART.yellow];
/** Mixes of neighbours on the colour wheel (never of opposites, which mix to grey): teal, magenta, … */
const NEIGHBOURS = [
  [CHART.blue, CHART.green],
  [CHART.red, CHART.purple],
  [CHART.orange, CHART.red],
  [CHART.blue, CHART.purple],
  [CHART.green, CHART.yellow],
  [CHART.orange, CHART.yellow],
];

/**
 * Head `h`'s colour, as CSS that follows the theme: heads 1–6 VS Code's six chart colours; 7–12
 * half-and-half mixes of neighbouring ones; 13–18 each chart colour mixed with the foreground; then again.
 */
export function headColor(h: number): string {
  const n = BASE.length;
  const i = h % (3 * n);
  if (i < n) return BASE[i]!;
  if (i < 2 * n) {
    const [a, b] = NEIGHBOURS[i - n]!;
    return `color-mix(in srgb, ${a} 50%, ${b})`;
  }
  return `color-mix(in srgb, ${BASE[i - 2 * n]} 55%, var(--vscode-editor-foreground, #cccccc))`;
}

/** Each head's slot among the heads shown (a token's box is split into one slot each), or -1 when hidden. */
export function headSlots(shown: readonly boolean[]): number[] {
  let slot = 0;
  return shown.map((on) => (on ? slot++ : -1));
}

/** The head switches for `heads` heads: `previous` kept when it has as many, else every head on. */
export function headsShown(heads: number, previous?: readonly boolean[]): boolean[] {
  return previous && previous.length === heads ? [...previous] : new Array<boolean>(heads).fill(true);
}

/** A click on head `h`'s colour: that head off if on, on if off. */
export function toggleHead(shown: readonly boolean[], h: number): boolean[] {
  return shown.map((on, i) => (i === h ? !on : on));
}

/** A double click on head `h`'s colour: only that head; on the only head shown, every head again. */
export function soloHead(shown: readonly boolean[], h: number): boolean[] {
  const alone = shown[h] && shown.every((on, i) => on === (i === h));
  return shown.map((_, i) => alone || i === h);
}
