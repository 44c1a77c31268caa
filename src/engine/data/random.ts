// Seeded randomness for the data pipeline: everything that shuffles or samples takes a seed so that
// splits, synthetic tasks and batch orders are reproducible run to run.
import { createHash } from 'node:crypto';

/** mulberry32 (Tommy Ettinger): a 32-bit state PRNG returning floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Integer in [lo, hi] (both inclusive). */
export function randInt(rand: () => number, lo: number, hi: number): number {
  return lo + Math.floor(rand() * (hi - lo + 1));
}

/** Fisher-Yates shuffle in place; returns the same array. */
export function shuffleInPlace<T>(items: T[], rand: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    const t = items[i] as T;
    items[i] = items[j] as T;
    items[j] = t;
  }
  return items;
}

/** Derive an independent 32-bit seed from a base seed and a label (e.g. "train", "valid"). */
export function deriveSeed(seed: number, label: string): number {
  return createHash('sha256')
    .update(`${seed >>> 0}:${label}`)
    .digest()
    .readUInt32BE(0);
}

/** A stable number in [0, 1) from a string (SHA-1 of its UTF-8 bytes); used for hash-based splits. */
export function stableFraction(text: string): number {
  return createHash('sha1').update(text, 'utf8').digest().readUInt32BE(0) / 4294967296;
}
