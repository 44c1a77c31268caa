// Corpus BLEU (Papineni et al., 2002) computed exactly as sacreBLEU 2.x computes its default
// `BLEU().corpus_score(hyps, [refs])`: the mteval-v13a tokenizer ("13a"), case kept, maximum
// n-gram order 4, smoothing "exp", no effective order. The rules below were read from sacreBLEU's
// source (sacrebleu/tokenizers/tokenizer_13a.py, tokenizer_re.py, metrics/bleu.py, metrics/base.py)
// and are re-stated here in our own words; the tests compare against numbers sacreBLEU printed.
//
//   BLEU = BP · exp( Σ_{n=1..N} w_n · log p_n ),  w_n = 1/N,  N = 4
//   BP   = 1 if c > r, else exp(1 − r/c)            (c: hypothesis length, r: reference length)
//
// with p_n the modified (clipped) n-gram precision pooled over the whole corpus, c and r summed
// over segments, and r per segment the reference length closest to the hypothesis length (ties to
// the shorter). sacreBLEU reports everything in percent, so the score is 100 · BLEU.
//
// Zero counts, as sacreBLEU handles them:
//  - no matching n-gram of any order → score 0, all precisions printed as 0;
//  - "exp" smoothing (NIST mteval-v13a): each order n with 0 matches but >0 hypothesis n-grams
//    gets p_n = 1 / (2^k · total_n), k = 1, 2, … counting such orders from the lowest;
//  - an order with no hypothesis n-grams at all stops the loop: it and the higher orders keep
//    p_n = 0, whose log is floored to −9999999999, so the score is 0 (unless effective order);
//  - c = 0 gives BP = 0.

/** Smoothing methods of sacreBLEU (Chen & Cherry, 2014); "exp" is its default. */
export type BleuSmoothing = 'exp' | 'none' | 'floor' | 'add-k';

export interface BleuOptions {
  /** Lowercase before tokenizing (default false). Uses JS toLowerCase, which matches Python's str.lower for ordinary text. */
  lowercase?: boolean;
  /** Default "exp". */
  smoothMethod?: BleuSmoothing;
  /** Value for "floor" (default 0.1) and "add-k" (default 1). */
  smoothValue?: number;
  /** Maximum n-gram order (default 4). */
  maxNgramOrder?: number;
  /** Average only over orders up to the last one with hypothesis n-grams (default false; for sentence BLEU). */
  effectiveOrder?: boolean;
}

export interface BleuScore {
  /** BLEU in percent (0..100), like sacreBLEU's `score`. */
  score: number;
  /** Clipped matching n-gram counts per order 1..N. */
  counts: number[];
  /** Hypothesis n-gram counts per order 1..N. */
  totals: number[];
  /** Precisions in percent per order (after smoothing), as sacreBLEU reports them. */
  precisions: number[];
  /** Brevity penalty. */
  bp: number;
  /** sys_len / ref_len (0 when ref_len is 0). */
  ratio: number;
  sysLen: number;
  refLen: number;
}

// Python's str.isspace() set, which str.split() and str.rstrip() use. It differs from JS `\s`:
// it includes U+001C..U+001F and U+0085 and excludes U+FEFF.
const PY_WS = '\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const PY_SPLIT = new RegExp(`[${PY_WS}]+`, 'u');
const PY_RSTRIP = new RegExp(`[${PY_WS}]+$`, 'u');

/** Python's `s.split()`: split on runs of whitespace, dropping empty pieces. */
function pySplit(s: string): string[] {
  return s.split(PY_SPLIT).filter((t) => t.length > 0);
}

// mteval-v13a's language-dependent rules, applied in order, each as a global, non-overlapping
// left-to-right substitution:
//  1. pad with spaces the ASCII symbols { | } ~ [ \ ] ^ _ ` space ! " # $ % & ( ) * + : ; < = > ? @ /
//     (not the apostrophe, hyphen, period or comma);
//  2. split off a period or comma that follows a non-digit;
//  3. split off a period or comma that precedes a non-digit;
//  4. split off a hyphen that follows a digit.
const RULES: ReadonlyArray<readonly [RegExp, string]> = [
  [/([\x7b-\x7e\x5b-\x60\x20-\x26\x28-\x2b\x3a-\x40/])/gu, ' $1 '],
  [/([^0-9])([.,])/gu, '$1 $2 '],
  [/([.,])([^0-9])/gu, ' $1 $2'],
  [/([0-9])(-)/gu, '$1 $2 '],
];

/**
 * sacreBLEU's "13a" tokenization of one segment (after its rstrip): drop "<skipped>", join
 * "-\n" line breaks, turn other newlines into spaces, unescape &quot; &amp; &lt; &gt; (in that
 * order), apply the four rules above to " line ", and collapse whitespace to single spaces.
 */
export function tokenize13a(line: string): string {
  let s = line.replace(PY_RSTRIP, '');
  s = s.replaceAll('<skipped>', '').replaceAll('-\n', '').replaceAll('\n', ' ');
  if (s.includes('&')) {
    s = s.replaceAll('&quot;', '"').replaceAll('&amp;', '&').replaceAll('&lt;', '<').replaceAll('&gt;', '>');
  }
  s = ` ${s} `;
  for (const [re, rep] of RULES) s = s.replace(re, rep);
  return pySplit(s).join(' ');
}

/** All n-grams of orders 1..maxOrder with counts; keys join tokens with ' ' (tokens hold no spaces). */
function ngramCounts(tokens: readonly string[], maxOrder: number): Map<string, number> {
  const counts = new Map<string, number>();
  for (let n = 1; n <= maxOrder; n++) {
    for (let i = 0; i + n <= tokens.length; i++) {
      const key = tokens.slice(i, i + n).join(' ');
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  }
  return counts;
}

/** Closest reference length to the hypothesis length; on a tie, the shorter reference. */
function closestRefLen(hypLen: number, refLens: readonly number[]): number {
  let best = -1;
  let bestDiff = -1;
  for (const r of refLens) {
    const d = Math.abs(hypLen - r);
    if (bestDiff === -1 || d < bestDiff || (d === bestDiff && r < best)) {
      bestDiff = d;
      best = r;
    }
  }
  return best;
}

/**
 * Corpus BLEU against one or more reference streams: `references[k][i]` is the k-th reference of
 * segment i (like sacreBLEU's `corpus_score(hyps, [refs1, refs2])`). A null/undefined entry means
 * "no k-th reference for this segment"; every segment needs at least one reference.
 */
export function corpusBleu(
  hypotheses: readonly string[],
  references: ReadonlyArray<ReadonlyArray<string | null | undefined>>,
  options: BleuOptions = {},
): BleuScore {
  const maxOrder = options.maxNgramOrder ?? 4;
  const prep = (s: string): string[] => pySplit(tokenize13a(options.lowercase ? s.toLowerCase() : s));
  if (hypotheses.length === 0)
    throw new RangeError('corpusBleu: no hypotheses (an empty list): BLEU needs at least one segment to score');
  if (references.length === 0)
    throw new RangeError('corpusBleu: no reference stream: give at least one list of references, one per hypothesis');
  for (const stream of references) {
    if (stream.length !== hypotheses.length) {
      throw new RangeError(`corpusBleu: ${hypotheses.length} hypotheses but a reference stream of ${stream.length}`);
    }
  }
  const correct = new Array<number>(maxOrder).fill(0);
  const total = new Array<number>(maxOrder).fill(0);
  let sysLen = 0;
  let refLen = 0;
  hypotheses.forEach((hyp, i) => {
    const refNgrams = new Map<string, number>(); // max count of each n-gram over the references
    const refLens: number[] = [];
    for (const stream of references) {
      const ref = stream[i];
      if (ref === null || ref === undefined) continue;
      const toks = prep(ref);
      refLens.push(toks.length);
      for (const [g, c] of ngramCounts(toks, maxOrder)) refNgrams.set(g, Math.max(refNgrams.get(g) ?? 0, c));
    }
    if (refLens.length === 0) throw new RangeError(`corpusBleu: segment ${i} has no reference`);
    const toks = prep(hyp);
    sysLen += toks.length;
    refLen += closestRefLen(toks.length, refLens);
    for (const [g, c] of ngramCounts(toks, maxOrder)) {
      const n = g.split(' ').length - 1;
      total[n] += c;
      correct[n] += Math.min(c, refNgrams.get(g) ?? 0);
    }
  });
  return bleuFromStats(correct, total, sysLen, refLen, options);
}

/** log with sacreBLEU's floor: log(0) = −9999999999. */
function flooredLog(x: number): number {
  return x === 0 ? -9999999999 : Math.log(x);
}

/** BLEU from sufficient statistics (sacreBLEU's `compute_bleu`). Counts are copied, not changed. */
export function bleuFromStats(
  correctIn: readonly number[],
  totalIn: readonly number[],
  sysLen: number,
  refLen: number,
  options: BleuOptions = {},
): BleuScore {
  const method = options.smoothMethod ?? 'exp';
  const maxOrder = options.maxNgramOrder ?? 4;
  const smoothValue = options.smoothValue ?? (method === 'floor' ? 0.1 : 1);
  const correct = correctIn.slice(0, maxOrder);
  const total = totalIn.slice(0, maxOrder);
  // BP = 1 if c > r, else exp(1 − r/c); sacreBLEU also uses 1 when c = r, and 0 when c = 0.
  const bp = sysLen < refLen ? (sysLen > 0 ? Math.exp(1 - refLen / sysLen) : 0) : 1;
  const ratio = refLen ? sysLen / refLen : 0;
  const precisions = new Array<number>(maxOrder).fill(0);
  const result = { counts: correct, totals: total, precisions, bp, ratio, sysLen, refLen };
  if (!correct.some((c) => c !== 0)) return { score: 0, ...result };
  let smoothMteval = 1;
  let effOrder = maxOrder;
  for (let n = 1; n <= maxOrder; n++) {
    if (method === 'add-k' && n > 1) {
      correct[n - 1] += smoothValue;
      total[n - 1] += smoothValue;
    }
    if (total[n - 1] === 0) break;
    if (options.effectiveOrder) effOrder = n;
    if (correct[n - 1] === 0) {
      if (method === 'exp') {
        smoothMteval *= 2;
        precisions[n - 1] = 100 / (smoothMteval * total[n - 1]);
      } else if (method === 'floor') {
        precisions[n - 1] = (100 * smoothValue) / total[n - 1];
      }
    } else {
      precisions[n - 1] = (100 * correct[n - 1]) / total[n - 1];
    }
  }
  let logSum = 0;
  for (let n = 0; n < effOrder; n++) logSum += flooredLog(precisions[n]);
  return { score: bp * Math.exp(logSum / effOrder), ...result };
}

/**
 * Python's `f"{x:.{d}f}"`: the correctly rounded decimal of the double, with exact ties rounded
 * half to even (JS toFixed rounds exact ties away from zero, e.g. 0.0625 → "0.063" vs "0.062").
 */
export function pyFixed(x: number, digits: number): string {
  const fixed = x.toFixed(digits);
  const long = x.toFixed(Math.min(100, digits + 30)); // a double's tie shows as "…5000…0"
  const tail = long.slice(long.length - 30);
  if (!/^50*$/.test(tail)) return fixed;
  const truncated = long.slice(0, long.length - 30).replace(/\.$/, '');
  const lastDigit = Number(truncated[truncated.length - 1]);
  return lastDigit % 2 === 0 ? truncated : fixed; // even: round down (truncate); odd: toFixed rounds away
}

/**
 * sacreBLEU's signature-free one-line report (`BLEUScore.format()` / `str(score)`):
 * `BLEU = 39.80 70.6/50.0/36.4/25.0 (BP = 1.000 ratio = 1.000 hyp_len = 17 ref_len = 17)`.
 * `width` is the score's decimals (sacreBLEU's API default 2; its CLI default is 1).
 */
export function formatBleu(s: BleuScore, width = 2): string {
  const prec = s.precisions.map((p) => pyFixed(p, 1)).join('/');
  return (
    `BLEU = ${pyFixed(s.score, width)} ${prec} (BP = ${pyFixed(s.bp, 3)} ` +
    `ratio = ${pyFixed(s.ratio, 3)} hyp_len = ${s.sysLen} ref_len = ${s.refLen})`
  );
}
