/**
 * Per-head statistics of attention over a probe batch (docs/TELEMETRY.md defines each one): how
 * spread a head's attention is (entropy), how sure (confidence), whether it parks weight on a sink
 * (first key, EOS), whether it is positional (offsets −1, 0, +1, and the offset its largest weight
 * keeps to most often: Voita et al.'s ±k), and, for cross attention, whether
 * it follows the monotone or the mirrored diagonal. Pure functions of AttentionMaps: the engine
 * computes them from its own snapshots, and from those a PyTorch RunWriter writes.
 */
import { argmax } from '../../algorithms/argmax';
import type { AttentionKind, AttentionMaps } from '../../protocol/attention';

/** The statistics telemetry.jsonl carries per head, in this order. */
export const ATTENTION_STATS = [
  'entropy',
  'entropy_norm',
  'confidence',
  'sink_first',
  'sink_eos',
  'offset_prev',
  'offset_same',
  'offset_next',
  'diagonal',
  'mirrored',
  'top_prev',
  'top_next',
  'top_diagonal',
  'top_mirrored',
  'top_offset',
  'top_offset_share',
] as const;
export type AttentionStat = (typeof ATTENTION_STATS)[number];

/** One probe pair's maps, with where its source ends (EOS is its last token). */
export interface ProbePair {
  maps: AttentionMaps[];
}

/** Per head (layer-major, [L·H]) the mean of each statistic over the rows of every pair; null where undefined. */
export type HeadStats = Record<AttentionStat, (number | null)[]>;

/** The keys query row q may see: all of them, or q + 1 under the causal mask of decoder self-attention. */
function keysOf(kind: AttentionKind, q: number, keys: number): number {
  return kind === 'decoder_self' ? Math.min(q + 1, keys) : keys;
}

/**
 * The diagonal a cross-attention row follows when target and source run in step: row q (the
 * decoder input at position q, BOS first, predicting target token q) on source token
 * round(q·(S′−1)/(T′−1)), S′ = source tokens without EOS, T′ = target tokens it predicts (rows
 * but the last, which predicts EOS). Mirrored: S′ − 1 − that.
 */
export function diagonalKey(q: number, rows: number, keys: number): { diagonal: number; mirrored: number } {
  const s = Math.max(1, keys - 1);
  const t = Math.max(1, rows - 1);
  const diagonal = t === 1 ? 0 : Math.round((q * (s - 1)) / (t - 1));
  return { diagonal, mirrored: s - 1 - diagonal };
}

/**
 * Per head, for each offset d = key − query its largest weight took: in how many rows it did, and in
 * how many rows key q + d existed (a row of n keys allows d from −q to n − 1 − q).
 */
type OffsetTally = Map<number, { hits: number; rows: number }>;

/**
 * The offset taken most often (ties: the smaller |d|, then the negative one) and its share of the
 * rows where it was possible: top_prev's rule for any d. Null for a head with no rows.
 */
export function topOffset(tally: OffsetTally): { offset: number; share: number } | null {
  let best: [number, { hits: number; rows: number }] | undefined;
  for (const [d, t] of tally) {
    if (t.hits === 0) continue;
    const b = best?.[1].hits ?? 0;
    const closer =
      best !== undefined && (Math.abs(d) < Math.abs(best[0]) || (Math.abs(d) === Math.abs(best[0]) && d < best[0]));
    if (t.hits > b || (t.hits === b && closer)) best = [d, t];
  }
  return best ? { offset: best[0], share: best[1].hits / best[1].rows } : null;
}

/**
 * Statistics of one kind over a batch of pairs: each is the mean over every (pair, row) it is
 * defined for, but top_offset (the mode of the largest weight's offset, self-attention only) and
 * top_offset_share (topOffset's share).
 */
export function headStats(kind: AttentionKind, pairs: ProbePair[]): HeadStats {
  const first = pairs.map((p) => p.maps.find((m) => m.kind === kind)).find((m) => m !== undefined);
  if (!first) throw new Error(`no ${kind} maps in the probe batch`);
  const [L, H] = first.shape;
  const sums = Object.fromEntries(ATTENTION_STATS.map((s) => [s, new Float64Array(L * H)])) as Record<
    AttentionStat,
    Float64Array
  >;
  const counts = Object.fromEntries(ATTENTION_STATS.map((s) => [s, new Float64Array(L * H)])) as Record<
    AttentionStat,
    Float64Array
  >;
  const add = (stat: AttentionStat, head: number, value: number): void => {
    sums[stat][head] += value;
    counts[stat][head] += 1;
  };
  const offsets: OffsetTally[] = Array.from({ length: L * H }, () => new Map());
  const tally = (head: number, q: number, n: number, top: number): void => {
    const t = offsets[head]!;
    for (let d = -q; d < n - q; d++) {
      const e = t.get(d) ?? { hits: 0, rows: 0 };
      e.rows += 1;
      if (d === top - q) e.hits += 1;
      t.set(d, e);
    }
  };
  for (const pair of pairs) {
    const m = pair.maps.find((x) => x.kind === kind);
    if (!m) continue;
    const [layers, heads, Q, K] = m.shape;
    if (layers !== L || heads !== H) throw new Error(`${kind}: pairs of a batch disagree on layers × heads`);
    const keysAreSource = kind !== 'decoder_self';
    for (let lh = 0; lh < L * H; lh++) {
      for (let q = 0; q < Q; q++) {
        const row = m.weights.subarray((lh * Q + q) * K, (lh * Q + q + 1) * K);
        const n = keysOf(kind, q, K);
        let entropy = 0;
        for (let k = 0; k < n; k++) {
          const p = row[k];
          if (p > 0) entropy -= p * Math.log(p);
        }
        const top = argmax(row, 0, n); // the first of equals
        add('entropy', lh, entropy);
        if (n > 1) add('entropy_norm', lh, entropy / Math.log(n));
        add('confidence', lh, row[top]);
        add('sink_first', lh, row[0]);
        if (keysAreSource) add('sink_eos', lh, row[K - 1]);
        for (const [stat, d] of [
          ['offset_prev', -1],
          ['offset_same', 0],
          ['offset_next', 1],
        ] as const)
          if (q + d >= 0 && q + d < n) add(stat, lh, row[q + d]);
        // Voita et al.'s positional heads: the share of rows whose largest weight is one step back or ahead.
        if (q > 0) add('top_prev', lh, top === q - 1 ? 1 : 0);
        if (q + 1 < n) add('top_next', lh, top === q + 1 ? 1 : 0);
        if (kind !== 'cross') tally(lh, q, n, top);
        if (kind === 'cross' && q < Q - 1) {
          const { diagonal, mirrored } = diagonalKey(q, Q, K);
          add('diagonal', lh, row[diagonal]);
          add('mirrored', lh, row[mirrored]);
          add('top_diagonal', lh, top === diagonal ? 1 : 0);
          add('top_mirrored', lh, top === mirrored ? 1 : 0);
        }
      }
    }
  }
  const out = {} as HeadStats;
  for (const s of ATTENTION_STATS) out[s] = Array.from(sums[s], (v, i) => (counts[s][i] > 0 ? v / counts[s][i] : null));
  const modes = offsets.map((t) => (kind === 'cross' ? null : topOffset(t)));
  out.top_offset = modes.map((m) => m?.offset ?? null);
  out.top_offset_share = modes.map((m) => m?.share ?? null);
  return out;
}
