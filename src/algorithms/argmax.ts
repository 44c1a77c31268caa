/**
 * The position of a row's largest value, as attention telemetry (a head's largest weight:
 * engine/telemetry/stats.ts, alignment.ts) and greedy decoding (the most likely token:
 * engine/decode/search.ts) read it. Pure.
 */

/**
 * The first index i in [from, to) of the largest xs[i]: ties go to the earlier index, and NaN is
 * never the largest. `from` where no value is larger than −∞ (all −∞ or NaN, or the range empty).
 */
export function argmax(xs: ArrayLike<number>, from = 0, to = xs.length): number {
  let top = from;
  let max = -Infinity;
  for (let i = from; i < to; i++) {
    const x = xs[i]!;
    if (x > max) {
      max = x;
      top = i;
    }
  }
  return top;
}
