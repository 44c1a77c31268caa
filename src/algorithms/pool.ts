/**
 * Max-pooled attention maps, for inputs too long to send whole (4,096 tokens: 144 maps of 16.8 M
 * weights each on the base shape). A pooled map keeps, for each block of `rows` queries × `cols`
 * keys, the largest weight of the block: a sharp weight stays visible where a mean would wash it
 * out. Blocks are aligned to 0 (block i covers queries [i·rows, (i + 1)·rows)); the last block of
 * an axis may be shorter. Pure: the engine pools, the pages draw and label what it pooled, and the
 * protocol's validators check a pooled map's shape by it.
 */

/** Maps whose queries and keys are at most this many a side are sent whole (the common case). */
export const POOL_ABOVE = 256;
/**
 * A pooled thumbnail has at most this many cells a side: 64² × 144 maps × 4 bytes = 2.4 MB (3.1 MB
 * of base64) on the base shape. The grid draws each thumbnail at ~96 px, so more cells would not
 * show; 128 a side made a 12.6 MB reply whose parse alone blocked the extension host 64–82 ms. The
 * open head and its zoom fetch finer blocks on demand (attention/block, BLOCK_CELLS).
 */
export const THUMB_CELLS = 64;
/** A block asked for on demand (attention/block) comes back with at most this many cells a side. */
export const BLOCK_CELLS = 256;

/** The block of a pooled map: `rows` queries × `cols` keys per cell (1 × 1: not pooled). */
export interface Pool {
  rows: number;
  cols: number;
}

/** Cells of an axis of n tokens pooled by `block` per cell. */
export const pooledCells = (n: number, block: number): number => Math.ceil(n / block);

/** The block that brings an axis of n tokens to at most `cells` cells. */
export const blockFor = (n: number, cells: number): number => Math.max(1, Math.ceil(n / cells));

/** The thumbnail pool of a queries × keys map: undefined when it is sent whole (both sides ≤ POOL_ABOVE). */
export function thumbnailPool(queries: number, keys: number): Pool | undefined {
  if (queries <= POOL_ABOVE && keys <= POOL_ABOVE) return undefined;
  const axis = (n: number) => (n > POOL_ABOVE ? blockFor(n, THUMB_CELLS) : 1);
  return { rows: axis(queries), cols: axis(keys) };
}

/** What a view says of pooled data: `pooled 16×16 → max` (queries × keys per cell). */
export function poolCaption(pool: Pool | undefined): string {
  return pool && (pool.rows > 1 || pool.cols > 1) ? `pooled ${pool.rows}×${pool.cols} → max` : '';
}

/**
 * Max-pools a rows × cols map (row-major, from `offset` in `src`) by blocks of br × bc into
 * ⌈rows/br⌉ × ⌈cols/bc⌉ cells, written to `out` from `outOffset` (a fresh array by default).
 * Each cell is the largest value of its block; NaN cells stay NaN only when the whole block is.
 */
export function maxPoolBlocks(
  src: ArrayLike<number>,
  rows: number,
  cols: number,
  br: number,
  bc: number,
  out: Float32Array = new Float32Array(pooledCells(rows, br) * pooledCells(cols, bc)),
  offset = 0,
  outOffset = 0,
): Float32Array {
  const outCols = pooledCells(cols, bc);
  const outRows = pooledCells(rows, br);
  out.fill(-Infinity, outOffset, outOffset + outRows * outCols);
  for (let r = 0; r < rows; r++) {
    const o = outOffset + Math.floor(r / br) * outCols;
    const base = offset + r * cols;
    for (let c = 0, x = 0; c < cols; x++) {
      const end = Math.min(cols, c + bc);
      let m = out[o + x];
      for (; c < end; c++) {
        const v = src[base + c];
        if (v > m) m = v;
      }
      out[o + x] = m;
    }
  }
  for (let i = outOffset; i < outOffset + outRows * outCols; i++) if (out[i] === -Infinity) out[i] = NaN;
  return out;
}

/** Labels of an axis pooled by `block`: the token itself, or `first…last` of the block's tokens. */
export function pooledLabels(tokens: readonly string[], block: number): string[] {
  if (block <= 1) return [...tokens];
  return Array.from({ length: pooledCells(tokens.length, block) }, (_, i) => {
    const from = i * block;
    const to = Math.min(tokens.length, from + block) - 1;
    return to === from ? tokens[from]! : `${tokens[from]}…${tokens[to]}`;
  });
}
