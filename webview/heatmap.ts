/** Canvas heatmaps drawn pixel by pixel with ImageData (fast for 512 × 512 maps, unlike SVG). */
import { maxOf, poolMax } from './lib/attention';
import { colorize, colormapLut } from './lib/colormap';

const LUT = colormapLut();

/**
 * Draws a rows × cols map onto `canvas`, whose backing store becomes width × height pixels (one
 * pixel per output cell; CSS scales it with image-rendering: pixelated). Maps larger than the
 * canvas are max-pooled. The colour scale runs from 0 to `vmax` (default: the map's own max).
 */
export function drawHeatmap(
  canvas: HTMLCanvasElement,
  src: ArrayLike<number>,
  rows: number,
  cols: number,
  width: number,
  height: number,
  vmax?: number,
): void {
  if (canvas.width !== width) canvas.width = width;
  if (canvas.height !== height) canvas.height = height;
  const ctx = canvas.getContext('2d');
  if (!ctx) throw new Error('no 2d canvas context');
  const pooled = poolMax(src, rows, cols, height, width);
  const img = ctx.createImageData(width, height);
  colorize(pooled, vmax ?? maxOf(src), LUT, img.data);
  ctx.putImageData(img, 0, 0);
}

/** The colour scale as a left-to-right gradient (0 at the left, the map's top at the right). */
export function drawColorBar(canvas: HTMLCanvasElement): void {
  const ctx = canvas.getContext('2d');
  if (!ctx) return;
  const img = ctx.createImageData(canvas.width, canvas.height);
  const ramp = Float32Array.from({ length: canvas.width }, (_, x) => x / Math.max(1, canvas.width - 1));
  const row = colorize(ramp, 1, LUT);
  for (let y = 0; y < canvas.height; y++) img.data.set(row, y * canvas.width * 4);
  ctx.putImageData(img, 0, 0);
}

/** Thumbnail size in pixels for a queries × keys map: the longer side is `side`. */
export function fitSize(queries: number, keys: number, side: number): { width: number; height: number } {
  const s = side / Math.max(queries, keys);
  return { width: Math.max(1, Math.round(keys * s)), height: Math.max(1, Math.round(queries * s)) };
}

/** The map cell under a mouse event on a canvas drawn by drawHeatmap. */
export function cellAt(
  canvas: HTMLCanvasElement,
  e: MouseEvent,
  rows: number,
  cols: number,
): { row: number; col: number } | undefined {
  const r = canvas.getBoundingClientRect();
  const fx = (e.clientX - r.left) / r.width;
  const fy = (e.clientY - r.top) / r.height;
  if (!(fx >= 0 && fx < 1 && fy >= 0 && fy < 1)) return undefined;
  return { row: Math.floor(fy * rows), col: Math.floor(fx * cols) };
}
