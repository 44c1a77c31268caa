/**
 * The stream of training batches: token-budget batches of similar-length pairs (§5.1), reshuffled
 * each epoch from the run's seed, so that a position (epoch, batch) names the same batch again after
 * a resume.
 */
import { makeBatches } from './batching';
import { decoderInput, EOS, PAD } from './specialTokens';
import type { IdPair } from './dataset';

/** A batch as token ids: target input starts with BOS, target output is it shifted left (ends with EOS). */
export interface Batch {
  src: number[][]; // [B, S], padded with pad_id
  tgtIn: number[][]; // [B, T]
  tgtOut: number[][]; // [B, T]
}

function padRows(rows: number[][]): number[][] {
  const width = Math.max(...rows.map((r) => r.length));
  return rows.map((r) => [...r, ...new Array<number>(width - r.length).fill(PAD)]);
}

/** Pairs → padded id matrices: tgtIn = [BOS, y…], tgtOut = [y…, EOS] (teacher forcing). */
export function toBatch(pairs: readonly IdPair[]): Batch {
  return {
    src: padRows(pairs.map((p) => p.src)),
    tgtIn: padRows(pairs.map((p) => decoderInput(p.tgt))),
    tgtOut: padRows(pairs.map((p) => [...p.tgt, EOS])),
  };
}

export class BatchStream {
  private epochBatches: number[][] = [];
  private loadedEpoch = -1;

  constructor(
    private readonly pairs: readonly IdPair[],
    private readonly maxTokens: number,
    private readonly seed: number,
  ) {
    if (pairs.length === 0) throw new Error('the training set is empty');
  }

  private batchesOf(epoch: number): number[][] {
    if (epoch !== this.loadedEpoch) {
      const src = this.pairs.map((p) => p.src.length);
      const tgt = this.pairs.map((p) => p.tgt.length + 1);
      this.epochBatches = makeBatches(src, tgt, { maxTokens: this.maxTokens, seed: this.seed * 7919 + epoch });
      this.loadedEpoch = epoch;
    }
    return this.epochBatches;
  }

  /** The batch at a position and the position after it. */
  at(position: { epoch: number; batch: number }): { batch: Batch; next: { epoch: number; batch: number } } {
    let { epoch, batch } = position;
    if (batch >= this.batchesOf(epoch).length) {
      epoch++;
      batch = 0;
    }
    const indices = this.batchesOf(epoch)[batch];
    return { batch: toBatch(indices.map((i) => this.pairs[i])), next: { epoch, batch: batch + 1 } };
  }

  /**
   * The position after `steps` batches from the start: where a run stands after `steps` updates
   * (each takes one batch), for a checkpoint whose optimizer file, which records it, is lost.
   */
  positionAfter(steps: number): { epoch: number; batch: number } {
    let left = steps;
    for (let epoch = 0; ; epoch++) {
      const n = this.batchesOf(epoch).length;
      if (left <= n) return { epoch, batch: left };
      left -= n;
    }
  }

  /** Batches of a fixed list (validation), in order. */
  static evaluationBatches(pairs: readonly IdPair[], maxTokens: number): Batch[] {
    if (pairs.length === 0) return [];
    const batches = makeBatches(
      pairs.map((p) => p.src.length),
      pairs.map((p) => p.tgt.length + 1),
      { maxTokens, shuffle: false },
    );
    return batches.map((b) => toBatch(b.map((i) => pairs[i])));
  }
}
