/**
 * attention/block: one head's weights over a block of queries × keys, asked for when a pooled head
 * (algorithms/pool.ts) is opened or zoomed. The block comes back whole when it is at most BLOCK_CELLS a side,
 * else max-pooled to that; so a reply never holds more than 256² weights (256 KB), whatever the
 * input's length. The same block travels to the attention page as `attentionBlock`, with a
 * Float32Array (the engine wire's base64 decoded once, in the extension host).
 */
import { type HeadRef, type InputPair, checkInputPair, headRefFields } from './attention';
import {
  type Check,
  type Fields,
  intIn,
  isAbsolutePath,
  isFloat32Array,
  isIndex,
  isPositiveInt,
  isString,
  object,
  optional,
  shapeOf,
} from './check';
import { BLOCK_CELLS, type Pool, pooledCells } from '../algorithms/pool';

/** The longest axis a block may name: an input's tokens (INPUT_LIMITS.tokens) and its added BOS or EOS. */
export const BLOCK_AXIS_LIMIT = 8193;

/** Queries [q0, q1) × keys [k0, k1) of one head. */
export interface BlockRange extends HeadRef {
  q0: number;
  q1: number;
  k0: number;
  k1: number;
}

const rangeFields: Fields<BlockRange> = {
  ...headRefFields,
  q0: intIn(0, BLOCK_AXIS_LIMIT - 1),
  q1: intIn(1, BLOCK_AXIS_LIMIT),
  k0: intIn(0, BLOCK_AXIS_LIMIT - 1),
  k1: intIn(1, BLOCK_AXIS_LIMIT),
};

/** Checks a range: each end within BLOCK_AXIS_LIMIT, and each start before its end. */
export const checkBlockRange: Check<BlockRange> = (v, path) => {
  const why = object<BlockRange>(rangeFields)(v, path);
  if (why) return why;
  const r = v as BlockRange;
  if (r.q1 <= r.q0) return `${path}.q1 must be more than q0 (${r.q0}), got ${r.q1}`;
  if (r.k1 <= r.k0) return `${path}.k1 must be more than k0 (${r.k0}), got ${r.k1}`;
  return undefined;
};

/** The pool of a block: whole up to BLOCK_CELLS a side, else the smallest block that fits. */
export function blockPool(r: BlockRange): Pool {
  return {
    rows: Math.max(1, Math.ceil((r.q1 - r.q0) / BLOCK_CELLS)),
    cols: Math.max(1, Math.ceil((r.k1 - r.k0) / BLOCK_CELLS)),
  };
}

/** A block of weights: `shape` [⌈(q1 − q0)/pool.rows⌉, ⌈(k1 − k0)/pool.cols⌉], row-major. W: base64 on the wire. */
export interface AttentionBlock<W = Float32Array> extends BlockRange {
  pool: Pool;
  shape: [rows: number, cols: number];
  weights: W;
}

/** Checks a block's pool, shape and number of weights against its range. */
export function blockCheck<W>(checkWeights: Check<W>, length: (w: unknown) => number): Check<AttentionBlock<W>> {
  const shallow = object<AttentionBlock<W>>({
    ...rangeFields,
    pool: object<Pool>({ rows: isPositiveInt, cols: isPositiveInt }),
    shape: shapeOf<AttentionBlock['shape']>(2),
    weights: checkWeights,
  });
  return (v, path) => {
    const why = checkBlockRange(v, path) ?? shallow(v, path);
    if (why) return why;
    const b = v as AttentionBlock<unknown>;
    const want = [pooledCells(b.q1 - b.q0, b.pool.rows), pooledCells(b.k1 - b.k0, b.pool.cols)];
    for (const d of [0, 1])
      if (b.shape[d] !== want[d] || want[d]! > BLOCK_CELLS)
        return `${path}.shape[${d}] must be ${want[d]} (the range over pool, at most ${BLOCK_CELLS}), got ${b.shape[d]}`;
    const got = length(b.weights);
    if (got !== want[0]! * want[1]!) return `${path}.weights must hold ${want[0]! * want[1]!} values, got ${got}`;
    return undefined;
  };
}

/** Base64 of n float32 values: 4·⌈4n/3⌉ characters. */
const base64Values = (w: unknown) => {
  const s = w as string;
  return Math.floor(((s.length - (s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0)) * 3) / 4 / 4);
};

export interface AttentionBlockParams extends BlockRange {
  runDir: string;
  /** The checkpoint's step; the newest when absent. */
  step?: number;
  /** The pair whose attention was shown (its target decoded again when absent; give it for long inputs). */
  input: InputPair;
}

export const checkAttentionBlockParams: Check<AttentionBlockParams> = (v, path) =>
  object<Omit<AttentionBlockParams, keyof BlockRange>>({
    runDir: isAbsolutePath,
    step: optional(isIndex),
    input: checkInputPair,
  })(v, path) ?? checkBlockRange(v, path);

/** A block as the engine wire carries it: weights as base64. */
export const checkWireBlock: Check<AttentionBlock<string>> = blockCheck(isString, base64Values);

/** A block as the attention page gets it (pages/attention.ts `attentionBlock`): weights as a Float32Array. */
export const checkBlockMsg: Check<AttentionBlock> = blockCheck(isFloat32Array, (w) => (w as Float32Array).length);
