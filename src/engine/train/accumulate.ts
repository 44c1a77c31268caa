/**
 * Gradient accumulation (`--accumulate N`, training setting `accumulate`): the step's batch, of the
 * run's batch_tokens, is split by rows into N micro-batches; each runs forward and backward alone,
 * with its loss normalised by the target tokens of the whole batch (not its own), so the sum of their
 * gradients is the gradient of the whole batch and one Adam step follows. The step is the step of
 * the whole batch (to rounding) at about 1/N of its activation memory: the paper's 25,000 + 25,000
 * tokens a step (batch_tokens 50000) fit where the whole batch does not. The data stream does not
 * depend on N, so a run may change it when it resumes.
 */
import type { Batch } from '../data/batchStream';

/** Drops the columns every row pads at its end. */
function trimmed(rows: number[][], width: number): number[][] {
  return rows.map((r) => r.slice(0, width));
}

/** The width up to the last column in which any row holds a token that is not padding. */
function usedWidth(rows: number[][], padId: number): number {
  let width = 0;
  for (const row of rows) {
    let last = row.length;
    while (last > 0 && row[last - 1] === padId) last--;
    width = Math.max(width, last);
  }
  return Math.max(width, 1);
}

/** The batch's rows in n consecutive parts of nearly equal row counts (fewer when it has fewer rows), each trimmed. */
export function microBatches(batch: Batch, n: number, padId: number): Batch[] {
  const rows = batch.src.length;
  const parts = Math.max(1, Math.min(n, rows));
  if (parts === 1) return [batch];
  const out: Batch[] = [];
  for (let k = 0; k < parts; k++) {
    const [from, to] = [Math.floor((k * rows) / parts), Math.floor(((k + 1) * rows) / parts)];
    const src = batch.src.slice(from, to);
    const [tgtIn, tgtOut] = [batch.tgtIn.slice(from, to), batch.tgtOut.slice(from, to)];
    const t = Math.max(usedWidth(tgtIn, padId), usedWidth(tgtOut, padId));
    out.push({ src: trimmed(src, usedWidth(src, padId)), tgtIn: trimmed(tgtIn, t), tgtOut: trimmed(tgtOut, t) });
  }
  return out;
}
