/**
 * How far a colour stands from a background, by WCAG 2's contrast ratio (pure; no DOM): what keeps
 * a light theme's marks readable where a colour map ends near white (viridis's yellow on #ffffff).
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
 * The largest t (in steps of 1/256) up to which viridis(t) keeps a contrast of at least `min` against
 * `bg`, for a light background, where viridis fades as t rises: 0.6 on #ffffff at 3:1. 1 where every
 * t does, or where even t = 0 does not (stopping early would then only lose colours).
 */
export function viridisEndOn(bg: Rgb, min: number): number {
  if (contrastRatio(viridis(0), bg) < min) return 1;
  let end = 0;
  for (let i = 1; i <= 256 && contrastRatio(viridis(i / 256), bg) >= min; i++) end = i / 256;
  return end;
}
