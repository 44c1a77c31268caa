// Parallel text as translation tools keep it: two plain files with one sentence a line and the same
// number of lines (train.en / train.de, as fairseq and OpenNMT), or one TSV file (source<TAB>target).
// Errors name the file and the 1-based line. Pairs longer than maxLength tokens on either side, and
// pairs with an empty side, are skipped and counted, never fatal.
import { readRegularFile } from '../io/regularFile';
import { pretokenize } from './tokenize';
import { mulberry32, shuffleInPlace } from './random';

export interface SentencePair {
  src: string;
  tgt: string;
}

/** Where a set of pairs comes from: two aligned files, or one TSV file. */
export type CorpusSource = { src: string; tgt: string } | { tsv: string };

export interface CorpusStats {
  /** Lines read (pairs seen). */
  lines: number;
  /** Pairs kept. */
  kept: number;
  /** Pairs skipped because a side had more than maxLength tokens. */
  tooLong: number;
  /** Pairs skipped because a side was empty (after trimming). */
  empty: number;
}

export interface ReadOptions {
  /** Longest side allowed, in tokens (default: no limit). */
  maxLength?: number;
  /** Token counter for maxLength (default: pretokenize(text).length, i.e. words and punctuation). */
  countTokens?: (text: string) => number;
}

export interface CorpusOptions extends ReadOptions {
  train: CorpusSource;
  /** A separate validation set; when absent, validFraction of the training pairs is held out. */
  valid?: CorpusSource;
  /** Fraction of training pairs held out for validation when no valid source is given (default 0.05). */
  validFraction?: number;
  /** Seed of the held-out split (default 1). */
  seed?: number;
}

export interface ParallelCorpus {
  train: SentencePair[];
  valid: SentencePair[];
  stats: { train: CorpusStats; valid: CorpusStats | null };
}

export class CorpusError extends Error {
  constructor(
    readonly file: string,
    readonly line: number | null,
    detail: string,
  ) {
    super(line === null ? `${file}: ${detail}` : `${file}:${line}: ${detail}`);
    this.name = 'CorpusError';
  }
}

/**
 * Decode UTF-8 bytes into lines (split on \n, trailing \r stripped, a final newline does not make an
 * extra line, a leading BOM is dropped). Throws CorpusError naming the first line with invalid UTF-8.
 */
export function decodeLines(bytes: Uint8Array, file: string): string[] {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new CorpusError(file, firstInvalidLine(bytes), 'invalid UTF-8');
  }
  if (text.length === 0) return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i] as string;
    if (l.endsWith('\r')) lines[i] = l.slice(0, -1);
  }
  return lines;
}

function firstInvalidLine(bytes: Uint8Array): number {
  const dec = new TextDecoder('utf-8', { fatal: true });
  let start = 0;
  let line = 1;
  while (start <= bytes.length) {
    let end = bytes.indexOf(0x0a, start);
    if (end < 0) end = bytes.length;
    try {
      dec.decode(bytes.subarray(start, end));
    } catch {
      return line;
    }
    start = end + 1;
    line++;
  }
  return line - 1;
}

export function readLines(file: string): string[] {
  return decodeLines(readRegularFile(file, 'text'), file);
}

function describe(source: CorpusSource): string {
  return 'tsv' in source ? source.tsv : `${source.src}/${source.tgt}`;
}

/** Read one set of pairs, applying the length filter. Throws CorpusError on malformed input. */
export function readPairs(
  source: CorpusSource,
  options: ReadOptions = {},
): { pairs: SentencePair[]; stats: CorpusStats } {
  const raw: SentencePair[] = [];
  if ('tsv' in source) {
    const lines = readLines(source.tsv);
    if (lines.length === 0) throw new CorpusError(source.tsv, null, 'empty corpus (no lines)');
    lines.forEach((line, i) => {
      const cols = line.split('\t');
      if (cols.length !== 2) {
        const found = cols.length === 1 ? 'no TAB' : `${cols.length - 1} TABs`;
        throw new CorpusError(source.tsv, i + 1, `expected source<TAB>target, found ${found}`);
      }
      raw.push({ src: cols[0] as string, tgt: cols[1] as string });
    });
  } else {
    const srcLines = readLines(source.src);
    const tgtLines = readLines(source.tgt);
    if (srcLines.length !== tgtLines.length) {
      const line = Math.min(srcLines.length, tgtLines.length) + 1;
      const longer = srcLines.length > tgtLines.length ? source.src : source.tgt;
      throw new CorpusError(
        longer,
        line,
        `unequal line counts: ${source.src} has ${srcLines.length} lines, ${source.tgt} has ${tgtLines.length}`,
      );
    }
    if (srcLines.length === 0) throw new CorpusError(source.src, null, `empty corpus (no lines; ${source.tgt} too)`);
    srcLines.forEach((src, i) => raw.push({ src, tgt: tgtLines[i] as string }));
  }
  const count = options.countTokens ?? ((t: string) => pretokenize(t).length);
  const max = options.maxLength ?? Infinity;
  const stats: CorpusStats = { lines: raw.length, kept: 0, tooLong: 0, empty: 0 };
  const pairs: SentencePair[] = [];
  for (const p of raw) {
    const src = p.src.trim();
    const tgt = p.tgt.trim();
    if (src === '' || tgt === '') stats.empty++;
    else if (count(src) > max || count(tgt) > max) stats.tooLong++;
    else pairs.push({ src, tgt });
  }
  stats.kept = pairs.length;
  if (pairs.length === 0) {
    throw new CorpusError(
      describe(source),
      null,
      `empty corpus: no pairs left of ${stats.lines} (${stats.empty} with an empty side, ${stats.tooLong} longer than ${max} tokens)`,
    );
  }
  return { pairs, stats };
}

/**
 * Split pairs deterministically: a seeded shuffle of the indices, the first round(fraction * n)
 * held out. The pairs keep their corpus order within each part.
 */
export function holdOut<T>(items: readonly T[], fraction: number, seed: number): { kept: T[]; heldOut: T[] } {
  if (!(fraction >= 0 && fraction < 1)) throw new RangeError(`validFraction must be in [0, 1), got ${fraction}`);
  const idx = shuffleInPlace(
    items.map((_, i) => i),
    mulberry32(seed),
  );
  const nOut = Math.round(fraction * items.length);
  const out = new Set(idx.slice(0, nOut));
  const kept: T[] = [];
  const heldOut: T[] = [];
  items.forEach((it, i) => (out.has(i) ? heldOut : kept).push(it));
  return { kept, heldOut };
}

/** Load a training set and a validation set (a separate source, or held out from training). */
export function loadCorpus(options: CorpusOptions): ParallelCorpus {
  const train = readPairs(options.train, options);
  if (options.valid) {
    const valid = readPairs(options.valid, options);
    return { train: train.pairs, valid: valid.pairs, stats: { train: train.stats, valid: valid.stats } };
  }
  const { kept, heldOut } = holdOut(train.pairs, options.validFraction ?? 0.05, options.seed ?? 1);
  return { train: kept, valid: heldOut, stats: { train: train.stats, valid: null } };
}
