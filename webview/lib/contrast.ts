/**
 * How far a colour stands from a background, by WCAG 2's contrast ratio (pure; no DOM): what keeps
 * marks readable where a colour map ends near the page's colour (viridis's yellow on #ffffff, its
 * violet on a dark theme's #1f1f1f).
 */
import { type Rgb, viridis } from './colormap';

/** A CSS colour as VS Code's theme variables give it (#rgb, #rrggbb, #rrggbbaa, rgb() or rgba()), or null. */
export function cssRgb(css: string): Rgb | null {
  const s = css.trim().toLowerCase();
  const hex = /^#([0-9a-f]{3}|[0-9a-f]{6}|[0-9a-f]{8})$/.exec(s)?.[1];
  if (hex) {
    const full = hex.length === 3 ? [...hex].map((c) => c + c).join('') : hex;
    return [0, 2, 4].map((i) => parseInt(full.slice(i, i + 2), 16)) as unknown as Rgb;
  }
  const fn = /^rgba?\(\s*(\d+)[\s,]+(\d+)[\s,]+(\d+)/.exec(s);
  return fn ? (fn.slice(1, 4).map((v) => Math.min(255, Number(v))) as unknown as Rgb) : null;
}

/** WCAG 2's relative luminance of an sRGB colour: 0 (black) to 1 (white). */
export function relativeLuminance(c: Rgb): number {
  const lin = (v: number) => (v <= 0.04045 * 255 ? v / 255 / 12.92 : ((v / 255 + 0.055) / 1.055) ** 2.4);
  return 0.2126 * lin(c[0]) + 0.7152 * lin(c[1]) + 0.0722 * lin(c[2]);
}

/** WCAG 2's contrast ratio of two colours: 1 (the same) to 21 (black on white). */
export function contrastRatio(a: Rgb, b: Rgb): number {
  const [hi, lo] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
}

/**
 * The part [start, end] of viridis (in steps of 1/256) whose every colour keeps a contrast of at least
 * `min` against `bg`, reaching one of viridis's ends. Viridis's luminance rises with t, so its colours
 * that keep `min` are a dark run from t = 0 and a light run up to t = 1: on a light background the dark
 * one ([0, about 0.6] on #ffffff at 3:1, its pale yellow cut), on a dark background the light one ([0.375, 1]
 * on #1f1f1f, its dark violet cut); where both exist, the longer. [0, 1] where every t keeps `min`, or
 * where none does (cutting would then only lose colours).
 */
export function viridisSpanOn(bg: Rgb, min: number): readonly [number, number] {
  const N = 256;
  const keeps = (i: number) => contrastRatio(viridis(i / N), bg) >= min;
  let end = -1; // the dark run: 0 … end
  while (end < N && keeps(end + 1)) end++;
  let start = N + 1; // the light run: start … N
  while (start > 0 && keeps(start - 1)) start--;
  if (end < 0 && start > N) return [0, 1];
  return end >= N - start ? [0, end / N] : [start / N, 1];
}
