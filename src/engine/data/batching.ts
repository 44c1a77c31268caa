// Token-budget batching as in the paper (§5.1: "each training batch contained a set of sentence
// pairs containing approximately 25000 source tokens and 25000 target tokens"): pairs of similar
// length are grouped so that padding is small, each batch is filled while its padded size
// (rows * longest source + rows * longest target) stays within the budget, and the batch order is
// shuffled with a seeded PRNG. Returns index lists into the caller's pairs; no tensors.
import { mulberry32, shuffleInPlace } from './random';

export interface BatchOptions {
  /** Padded source + target tokens allowed in one batch (default 25000 + 25000). */
  maxTokens?: number;
  /** Optional cap on pairs per batch. */
  maxSentences?: number;
  /** Seed of the shuffles (tie order among equal lengths, and batch order). Default 1; use e.g. seed + epoch. */
  seed?: number;
  /** Shuffle the batch order (default true). */
  shuffle?: boolean;
}

/**
 * Batches of pair indices. srcLengths[i] / tgtLengths[i] are the lengths the tensors will have
 * (count BOS/EOS if the trainer adds them). Every index appears in exactly one batch; a pair that
 * alone exceeds the budget is an error (filter with the corpus maxLength first).
 */
export function makeBatches(
  srcLengths: readonly number[],
  tgtLengths: readonly number[],
  options: BatchOptions = {},
): number[][] {
  const maxTokens = options.maxTokens ?? 50000;
  const maxSentences = options.maxSentences ?? Infinity;
  if (srcLengths.length !== tgtLengths.length)
    throw new RangeError(`makeBatches: ${srcLengths.length} source lengths but ${tgtLengths.length} target lengths`);
  const rand = mulberry32(options.seed ?? 1);
  // Sort by source length, then target length; equal pairs in a seeded random order.
  const order = shuffleInPlace(
    srcLengths.map((_, i) => i),
    rand,
  );
  order.sort(
    (a, b) =>
      (srcLengths[a] as number) - (srcLengths[b] as number) || (tgtLengths[a] as number) - (tgtLengths[b] as number),
  );
  const batches: number[][] = [];
  let cur: number[] = [];
  let maxS = 0;
  let maxT = 0;
  for (const i of order) {
    const s = srcLengths[i] as number;
    const t = tgtLengths[i] as number;
    if (s + t > maxTokens)
      throw new RangeError(
        `pair ${i} (source ${s}, target ${t} tokens) alone exceeds the batch budget of ${maxTokens} tokens`,
      );
    const ns = Math.max(maxS, s);
    const nt = Math.max(maxT, t);
    if (cur.length > 0 && ((cur.length + 1) * (ns + nt) > maxTokens || cur.length + 1 > maxSentences)) {
      batches.push(cur);
      cur = [i];
      maxS = s;
      maxT = t;
    } else {
      cur.push(i);
      maxS = ns;
      maxT = nt;
    }
  }
  if (cur.length > 0) batches.push(cur);
  if (options.shuffle ?? true) shuffleInPlace(batches, rand);
  return batches;
}
