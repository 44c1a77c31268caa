/** Canvas heatmaps drawn pixel by pixel with ImageData (fast for 512 × 512 maps, unlike SVG). */
import { maxOf, poolMax } from './lib/attention';
import { colorize, colormapLut, viridis } from './lib/colormap';
import type { HeadsView } from './lib/heads';

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
  const img = imageOf(canvas);
  if (rows <= height && cols <= width) enlarge(colorize(src, vmax ?? maxOf(src), LUT), rows, cols, img);
  else {
    // Every cell of the map falls in some pooled cell, so the pooled map's maximum is the map's.
    const pooled = poolMax(src, rows, cols, height, width, { transient: true }); // coloured before the next pooling
    colorize(pooled, vmax ?? maxOf(pooled), LUT, img.data);
  }
  img.ctx.putImageData(img, 0, 0);
}

/**
 * A map no larger than the canvas: each cell's colour (`rgba`, rows × cols) copied to the pixels
 * whose centres fall in it, as poolMax resamples (nearest neighbour), without a value per pixel.
 */
function enlarge(rgba: Uint8ClampedArray, rows: number, cols: number, img: ImageData): void {
  const { width, height } = img;
  const from = new Uint32Array(rgba.buffer, rgba.byteOffset, rows * cols);
  const to = new Uint32Array(img.data.buffer, img.data.byteOffset, width * height);
  const col = Int32Array.from({ length: width }, (_, x) => Math.min(cols - 1, Math.floor((x * cols) / width)));
  let last = -1;
  for (let y = 0; y < height; y++) {
    const r = Math.min(rows - 1, Math.floor((y * rows) / height));
    const o = y * width;
    if (r === last) to.copyWithin(o, o - width, o);
    else for (let x = 0; x < width; x++) to[o + x] = from[r * cols + col[x]!]!;
    last = r;
  }
}

/** Each canvas's 2d context and pixel buffer, made once and reused while its size stays. */
const images = new WeakMap<HTMLCanvasElement, ImageData & { ctx: CanvasRenderingContext2D }>();

function imageOf(canvas: HTMLCanvasElement): ImageData & { ctx: CanvasRenderingContext2D } {
  const had = images.get(canvas);
  if (had && had.width === canvas.width && had.height === canvas.height) return had;
  const ctx = canvas.getContext('2d');
  if (!ctx) throw new Error('no 2d canvas context');
  const img = Object.assign(ctx.createImageData(canvas.width, canvas.height), { ctx });
  images.set(canvas, img);
  return img;
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

/** Whether two maps hold the same values (a snapshot's arrays are new each time: compared, not by identity). */
export function sameValues(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The Heads map: a `cellW` × `cellH` cell per head (row) and telemetry step (column), viridis over
 * the view's range, grey where a head has no value at a step. Sizes the canvas to fit.
 */
export function paintHeadsMap(canvas: HTMLCanvasElement, view: HeadsView, cellW: number, cellH: number): void {
  canvas.width = view.steps.length * cellW;
  canvas.height = view.heads.length * cellH;
  canvas.style.width = `${canvas.width}px`;
  canvas.style.height = `${canvas.height}px`;
  const ctx = canvas.getContext('2d')!;
  const span = view.max - view.min || 1;
  view.values.forEach((line, r) =>
    line.forEach((v, c) => {
      const [red, green, blue] = v === null ? [80, 80, 80] : viridis((v - view.min) / span);
      ctx.fillStyle = `rgb(${red},${green},${blue})`;
      ctx.fillRect(c * cellW, r * cellH, cellW, cellH);
    }),
  );
}

/** The health findings over a Heads map: a bar in the cell of each finding's head at its step (red: it broke). */
export function markFindings(
  canvas: HTMLCanvasElement,
  view: HeadsView,
  events: readonly { head?: string; step: number; severity: string }[],
  cellW: number,
  cellH: number,
): void {
  const ctx = canvas.getContext('2d')!;
  for (const e of events) {
    const r = e.head ? view.heads.indexOf(e.head) : -1;
    const c = view.steps.findIndex((s) => s >= e.step);
    if (r < 0 || c < 0) continue;
    ctx.fillStyle = e.severity === 'breakpoint' ? '#f14c4c' : '#cca700';
    const w = Math.max(2, cellW / 2);
    ctx.fillRect(c * cellW + (cellW - w) / 2, r * cellH + cellH / 2 - 2, w, 4);
  }
}
