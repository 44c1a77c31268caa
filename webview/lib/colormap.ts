/**
 * The colour map of attention heatmaps (pure; no DOM): viridis, matplotlib's default, sampled at
 * nine stops (0, 1/8, …, 1) and interpolated linearly in RGB. Its lightness rises monotonically
 * from a dark violet to a light yellow and it stays apart from both a dark (#1e1e1e) and a light
 * (#ffffff) editor background at the ends that matter (high weights are bright on dark themes and
 * saturated on light ones); it is readable in greyscale and by colour-blind readers.
 */

export type Rgb = readonly [number, number, number];

/** viridis at t = 0, 0.125, …, 1 (matplotlib's _viridis_data, every 32nd entry). */
export const VIRIDIS_STOPS: readonly Rgb[] = [
  [0x44, 0x01, 0x54],
  [0x47, 0x2c, 0x7a],
  [0x3b, 0x51, 0x8b],
  [0x2c, 0x71, 0x8e],
  [0x21, 0x90, 0x8d],
  [0x27, 0xad, 0x81],
  [0x5c, 0xc8, 0x63],
  [0xaa, 0xdc, 0x32],
  [0xfd, 0xe7, 0x25],
];

/** The colour of t ∈ [0, 1] (clamped; NaN maps to 0). */
export function viridis(t: number): Rgb {
  const c = Number.isFinite(t) ? Math.min(1, Math.max(0, t)) : 0;
  const pos = c * (VIRIDIS_STOPS.length - 1);
  const i = Math.min(VIRIDIS_STOPS.length - 2, Math.floor(pos));
  const f = pos - i;
  const a = VIRIDIS_STOPS[i];
  const b = VIRIDIS_STOPS[i + 1];
  return [
    Math.round(a[0] + (b[0] - a[0]) * f),
    Math.round(a[1] + (b[1] - a[1]) * f),
    Math.round(a[2] + (b[2] - a[2]) * f),
  ];
}

/** A 256-entry RGBA lookup table of the map, for filling ImageData quickly. */
export function colormapLut(map: (t: number) => Rgb = viridis): Uint8ClampedArray {
  const lut = new Uint8ClampedArray(256 * 4);
  for (let i = 0; i < 256; i++) {
    const [r, g, b] = map(i / 255);
    lut.set([r, g, b, 255], i * 4);
  }
  return lut;
}

/** The map as a plotly colorscale ([[t, 'rgb(…)'], …]) so plotly views match canvas ones. */
export function plotlyColorscale(): [number, string][] {
  return VIRIDIS_STOPS.map((c, i) => [i / (VIRIDIS_STOPS.length - 1), `rgb(${c[0]},${c[1]},${c[2]})`]);
}

/**
 * Colours `values` (row-major, width × height) into RGBA pixels: value/vmax through the lookup
 * table (vmax ≤ 0 treated as 1). Writes into `out` when given (ImageData.data).
 */
export function colorize(
  values: ArrayLike<number>,
  vmax: number,
  lut: Uint8ClampedArray,
  out?: Uint8ClampedArray,
): Uint8ClampedArray {
  const px = out ?? new Uint8ClampedArray(values.length * 4);
  const scale = 255 / (vmax > 0 ? vmax : 1);
  for (let i = 0; i < values.length; i++) {
    const v = values[i] * scale;
    const j = (v >= 255 ? 255 : v > 0 ? Math.round(v) : 0) * 4;
    px[i * 4] = lut[j];
    px[i * 4 + 1] = lut[j + 1];
    px[i * 4 + 2] = lut[j + 2];
    px[i * 4 + 3] = 255;
  }
  return px;
}
