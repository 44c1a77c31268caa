/**
 * How attention changed between two checkpoints for one sentence pair (no DOM): the difference map
 * B − A of a head, the Jensen–Shannon divergence of each query row (natural log: 0 for equal rows,
 * ln 2 for rows with no key in common) averaged over the rows, every head ranked by it, and a
 * diverging colour scale (ColorBrewer's RdBu end points and white) for the difference map.
 */
import { ATTENTION_KINDS, type Attention, type AttentionKind, findMaps } from '../../src/protocol/attention';

/** JS(p, q) = ½ KL(p ‖ m) + ½ KL(q ‖ m), m = ½(p + q), of two rows given as [offset, length] views. */
export function jsDivergence(p: ArrayLike<number>, q: ArrayLike<number>, from = 0, n = p.length): number {
  let js = 0;
  for (let i = from; i < from + n; i++) {
    const a = p[i]!;
    const b = q[i]!;
    const m = (a + b) / 2;
    if (a > 0) js += 0.5 * a * Math.log(a / m);
    if (b > 0) js += 0.5 * b * Math.log(b / m);
  }
  return js;
}

/** The mean over query rows of a head's JS divergence between two [q, k] maps. */
export function headDivergence(a: ArrayLike<number>, b: ArrayLike<number>, q: number, k: number): number {
  let sum = 0;
  for (let r = 0; r < q; r++) sum += jsDivergence(a, b, r * k, k);
  return sum / q;
}

export interface HeadChange {
  kind: AttentionKind;
  layer: number;
  head: number;
  js: number;
}

/** Why two attentions cannot be compared cell by cell (their pairs differ), or undefined. */
export function incomparable(a: Attention, b: Attention): string | undefined {
  if (
    a.srcTokens.join('\u0001') !== b.srcTokens.join('\u0001') ||
    a.tgtTokens.join('\u0001') !== b.tgtTokens.join('\u0001')
  )
    return 'the two show different sentence pairs';
  for (const kind of ATTENTION_KINDS) {
    const ma = findMaps(a, kind);
    const mb = findMaps(b, kind);
    if (!!ma !== !!mb || (ma && mb && ma.shape.join() !== mb.shape.join())) return `their ${kind} maps differ in shape`;
  }
  return undefined;
}

/** Every head of every kind by how much it changed from `a` to `b`, most first. */
export function rankHeads(a: Attention, b: Attention): HeadChange[] {
  const out: HeadChange[] = [];
  for (const kind of ATTENTION_KINDS) {
    const ma = findMaps(a, kind);
    const mb = findMaps(b, kind);
    if (!ma || !mb) continue;
    const [layers, heads, q, k] = ma.shape;
    for (let l = 0; l < layers; l++)
      for (let h = 0; h < heads; h++) {
        const o = (l * heads + h) * q * k;
        const js = headDivergence(ma.weights.subarray(o, o + q * k), mb.weights.subarray(o, o + q * k), q, k);
        out.push({ kind, layer: l, head: h, js });
      }
  }
  return out.sort((x, y) => y.js - x.js);
}

/** B − A, cell by cell. */
export function diffMap(a: ArrayLike<number>, b: ArrayLike<number>): Float32Array {
  const out = new Float32Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = b[i]! - a[i]!;
  return out;
}

const BLUE = [33, 102, 172];
const WHITE = [247, 247, 247];
const RED = [178, 24, 43];

/** The diverging colour of t ∈ [−1, 1]: blue (A had more) through white (no change) to red (B has more). */
export function divergingRgb(t: number): [number, number, number] {
  const x = Math.max(-1, Math.min(1, t));
  const [from, to, f] = x < 0 ? [WHITE, BLUE, -x] : [WHITE, RED, x];
  return [0, 1, 2].map((i) => Math.round(from[i]! + (to[i]! - from[i]!) * f)) as [number, number, number];
}
