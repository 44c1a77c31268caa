/**
 * How far cross-attention heads are from the exact alignment a built-in task defines (copy,
 * reverse, sort: data/tasks.ts's taskAlignment): `align_err`, the share of the rows that predict a
 * target token whose largest weight is not on the source token that target token comes from
 * (docs/TELEMETRY.md). 0 is a head that reads exactly the task's answer; a pure function of the maps.
 */
import { argmax } from '../../algorithms/argmax';
import type { AttentionMaps } from '../../protocol/attention';

/** One probe pair's maps, with the task's alignment of its target tokens (source position per target position). */
export interface AlignedPair {
  maps: AttentionMaps[];
  align: readonly number[];
}

/**
 * Per cross-attention head ([L·H], layer-major) the share of rows q < min(Q − 1, align.length) of
 * every pair whose argmax (the first of equals) is not align[q]; null for a head with no such row.
 * Row q of the decoder input (BOS first) predicts target token q; the last row predicts EOS.
 */
export function alignmentError(pairs: readonly AlignedPair[]): (number | null)[] {
  const first = pairs.map((p) => p.maps.find((m) => m.kind === 'cross')).find((m) => m !== undefined);
  if (!first) throw new Error('no cross maps in the probe batch');
  const [L, H] = first.shape;
  const misses = new Float64Array(L * H);
  const rows = new Float64Array(L * H);
  for (const pair of pairs) {
    const m = pair.maps.find((x) => x.kind === 'cross');
    if (!m) continue;
    const [layers, heads, Q, K] = m.shape;
    if (layers !== L || heads !== H) throw new Error('cross: pairs of a batch disagree on layers × heads');
    const n = Math.min(Q - 1, pair.align.length);
    for (let lh = 0; lh < L * H; lh++)
      for (let q = 0; q < n; q++) {
        const row = m.weights.subarray((lh * Q + q) * K, (lh * Q + q + 1) * K); // [K]
        rows[lh] += 1;
        if (argmax(row) !== pair.align[q]) misses[lh] += 1;
      }
  }
  return Array.from(misses, (v, i) => (rows[i] > 0 ? v / rows[i] : null));
}
