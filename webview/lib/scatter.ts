/**
 * The pure parts of a canvas scatter (no DOM): a linear scale from data to pixels, "nice" axis
 * ticks (1, 2 or 5 × 10^k apart), a data range padded so no point sits on the frame, and a hit grid
 * that finds the point nearest the pointer by looking only in the cells around it (a scan of every
 * point per pointer move is what made the SVG scatter's hover slow: bench/README.md).
 */

/** A linear map of [d0, d1] onto [r0, r1] (a zero-width domain maps to the middle of the range). */
export interface Scale {
  (v: number): number;
  /** The data value at pixel `p`. */
  invert(p: number): number;
  domain: readonly [number, number];
  range: readonly [number, number];
}

export function linearScale(domain: readonly [number, number], range: readonly [number, number]): Scale {
  const [d0, d1] = domain;
  const [r0, r1] = range;
  const span = d1 - d0;
  const k = span === 0 ? 0 : (r1 - r0) / span;
  const at = (v: number): number => (span === 0 ? (r0 + r1) / 2 : r0 + (v - d0) * k);
  const invert = (p: number): number => (k === 0 ? d0 : d0 + (p - r0) / k);
  return Object.assign(at, { invert, domain, range });
}

/**
 * At most `count` + 1 ticks inside [lo, hi]: the multiples of the smallest step of 1, 2 or 5 × 10^k
 * that is at least (hi − lo) / count. Each tick rounded to the step's decimals (no 0.6000000000000001).
 */
export function niceTicks(lo: number, hi: number, count = 6): number[] {
  if (!(Number.isFinite(lo) && Number.isFinite(hi))) return [];
  if (hi < lo) [lo, hi] = [hi, lo];
  if (hi === lo) return [lo];
  const raw = (hi - lo) / Math.max(1, count);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  const out: number[] = [];
  for (let i = Math.ceil(lo / step - 1e-9); i * step <= hi + step * 1e-9; i++)
    out.push(Number((i * step).toFixed(decimals)));
  return out;
}

/** A tick's label: at most the decimals its step needs (niceTicks' values), "−" for minus. */
export function tickLabel(v: number, ticks: readonly number[]): string {
  const step = ticks.length > 1 ? Math.abs(ticks[1]! - ticks[0]!) : 1;
  const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  const s = (Object.is(v, -0) ? 0 : v).toFixed(Math.min(10, decimals));
  return s.startsWith('-') ? `−${s.slice(1)}` : s;
}

/** The range of `values` widened by `pad` of its span on each side (±0.5 around a single value; [0, 1] when empty). */
export function paddedExtent(values: ArrayLike<number>, pad = 0.05): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (!(lo <= hi)) return [0, 1];
  if (lo === hi) return [lo - 0.5, hi + 0.5];
  const p = (hi - lo) * pad;
  return [lo - p, hi + p];
}

/**
 * Points (pixel coordinates) sorted into square cells of `cell` pixels, for the nearest point within
 * `radius` ≤ `cell` of the pointer: only the 3 × 3 cells around it are looked at.
 */
export interface HitGrid {
  cols: number;
  rows: number;
  cell: number;
  /** Cell c's points are order[start[c] … start[c + 1]), in drawing order. */
  start: Int32Array;
  order: Int32Array;
  /** Point ids: what `nearest` answers. */
  ids: Int32Array;
  x: Float32Array;
  y: Float32Array;
}

/**
 * A grid over a `width` × `height` box of the points (x[j], y[j]) drawn in the order j = 0, 1, …
 * (`ids[j]` names each; a point outside the box is left out).
 */
export function hitGrid(
  x: ArrayLike<number>,
  y: ArrayLike<number>,
  ids: ArrayLike<number>,
  width: number,
  height: number,
  cell: number,
): HitGrid {
  const cols = Math.max(1, Math.ceil(width / cell));
  const rows = Math.max(1, Math.ceil(height / cell));
  const n = x.length;
  const cellOf = new Int32Array(n);
  const counts = new Int32Array(cols * rows + 1);
  for (let j = 0; j < n; j++) {
    const cx = Math.floor(x[j]! / cell);
    const cy = Math.floor(y[j]! / cell);
    const inside = cx >= 0 && cx < cols && cy >= 0 && cy < rows;
    cellOf[j] = inside ? cy * cols + cx : -1;
    if (inside) counts[cellOf[j]! + 1]!++;
  }
  const start = new Int32Array(cols * rows + 1);
  for (let c = 0; c < cols * rows; c++) start[c + 1] = start[c]! + counts[c + 1]!;
  const fill = start.slice(0, cols * rows);
  const order = new Int32Array(start[cols * rows]!);
  for (let j = 0; j < n; j++) if (cellOf[j]! >= 0) order[fill[cellOf[j]!]!++] = j;
  return {
    cols,
    rows,
    cell,
    start,
    order,
    ids: Int32Array.from(ids),
    x: Float32Array.from(x),
    y: Float32Array.from(y),
  };
}

/**
 * The id of the point nearest (px, py) within `radius` (≤ the grid's cell; a point at exactly `radius`
 * counts), or -1. Of points equally near, the one drawn last (on top) wins.
 */
export function nearest(g: HitGrid, px: number, py: number, radius: number): number {
  const cx = Math.floor(px / g.cell);
  const cy = Math.floor(py / g.cell);
  let best = -1;
  let bestD = radius * radius;
  for (let r = cy - 1; r <= cy + 1; r++) {
    if (r < 0 || r >= g.rows) continue;
    for (let c = cx - 1; c <= cx + 1; c++) {
      if (c < 0 || c >= g.cols) continue;
      const cellId = r * g.cols + c;
      for (let k = g.start[cellId]!; k < g.start[cellId + 1]!; k++) {
        const j = g.order[k]!;
        const dx = g.x[j]! - px;
        const dy = g.y[j]! - py;
        const d = dx * dx + dy * dy;
        if (d < bestD || (d === bestD && j > best)) {
          bestD = d;
          best = j;
        }
      }
    }
  }
  return best < 0 ? -1 : g.ids[best]!;
}
