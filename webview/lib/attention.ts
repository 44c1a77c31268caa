/**
 * Pure builders over attention weights (no DOM): pooling a map down to a thumbnail, entropy per
 * query row and the top-k keys of each query. (Slicing one head out of a [L, H, Tq, Tk] buffer is
 * the protocol's headMap.)
 */
import { poolMaxSimd } from './poolMaxSimd';
/**
 * Resamples a rows × cols map to outRows × outCols cells. Where the map is larger than the output,
 * each output cell takes the MAXIMUM of the input cells it covers (a sharp attention peak stays
 * visible in a thumbnail, where averaging would wash it out); where it is smaller, each input cell
 * covers a block of output cells (nearest neighbour). Input cell (r, c) owns the output cells
 * whose centres fall inside it.
 */
export function poolMax(
  src: ArrayLike<number>,
  rows: number,
  cols: number,
  outRows: number,
  outCols: number,
  /**
   * `transient`: the cells where the next pooling may overwrite them (on WebAssembly, its memory:
   * nothing copied out), for a caller that uses them at once, as drawHeatmap colours them.
   */
  { transient = false } = {},
): Float32Array {
  const simd = poolMaxSimd(src, rows, cols, outRows, outCols);
  return (transient ? simd : simd?.slice()) ?? poolMaxScalar(src, rows, cols, outRows, outCols);
}

/** poolMax in JavaScript: where WebAssembly cannot run, and the reference poolMax.wat is tested against. */
export function poolMaxScalar(
  src: ArrayLike<number>,
  rows: number,
  cols: number,
  outRows: number,
  outCols: number,
): Float32Array {
  const out = new Float32Array(outRows * outCols);
  const colStart = new Int32Array(outCols);
  const colEnd = new Int32Array(outCols);
  for (let x = 0; x < outCols; x++) {
    colStart[x] = Math.min(cols - 1, Math.floor((x * cols) / outCols));
    colEnd[x] = Math.max(colStart[x] + 1, Math.floor(((x + 1) * cols) / outCols));
  }
  // Input rows in order, each folded into the running maxima of its output row: the map is read
  // once, front to back (a third less time than an output cell at a time, which jumped rows).
  const acc = new Float32Array(outCols); // [outCols]: the output row's maxima so far
  for (let y = 0; y < outRows; y++) {
    const r0 = Math.min(rows - 1, Math.floor((y * rows) / outRows));
    const r1 = Math.max(r0 + 1, Math.floor(((y + 1) * rows) / outRows));
    acc.fill(-Infinity);
    for (let r = r0; r < r1; r++) {
      const base = r * cols;
      for (let x = 0; x < outCols; x++) {
        let m = acc[x];
        const end = base + colEnd[x];
        for (let i = base + colStart[x]; i < end; i++) {
          const v = src[i];
          if (v > m) m = v;
        }
        acc[x] = m;
      }
    }
    out.set(acc, y * outCols);
  }
  return out;
}

/** The largest value of a map (the colour scale's top when maps are scaled to their own max). */
export function maxOf(a: ArrayLike<number>): number {
  let m = -Infinity;
  for (let i = 0; i < a.length; i++) if (a[i] > m) m = a[i];
  return m;
}

/**
 * Shannon entropy (nats) of each query row: H = −Σ_k p_k ln p_k, with 0·ln 0 = 0. A uniform row
 * over n keys has ln n, a one-hot row 0. Rows are renormalised to sum 1 first (masked decoder rows
 * and float round-off), so the value is a property of the distribution.
 */
export function rowEntropy(weights: ArrayLike<number>, rows: number, cols: number): Float64Array {
  const out = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    let sum = 0;
    for (let c = 0; c < cols; c++) sum += Math.max(0, weights[r * cols + c]);
    if (!(sum > 0)) continue;
    let h = 0;
    for (let c = 0; c < cols; c++) {
      const p = Math.max(0, weights[r * cols + c]) / sum;
      if (p > 0) h -= p * Math.log(p);
    }
    out[r] = h;
  }
  return out;
}

export interface TopKey {
  key: number;
  weight: number;
}

/** The k largest weights of one row, largest first; ties go to the earlier key. */
export function topK(weights: ArrayLike<number>, row: number, cols: number, k: number): TopKey[] {
  const best: TopKey[] = [];
  for (let c = 0; c < cols; c++) {
    const w = weights[row * cols + c];
    if (best.length < k || w > best[best.length - 1].weight) {
      let i = best.length;
      while (i > 0 && best[i - 1].weight < w) i--;
      best.splice(i, 0, { key: c, weight: w });
      if (best.length > k) best.pop();
    }
  }
  return best;
}
