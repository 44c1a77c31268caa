// A fake StepModel for the search tests: log-probs come from a function of (sentence, prefix),
// where prefix is the tokens generated after BOS. The state is the list of tokens each row has
// been fed, so the model checks that the search feeds BOS first and then each row's own tokens.
import type { StepModel, StepOutput } from '../../src/engine/decode/search';

export interface FakeState {
  fed: number[][]; // per row: tokens fed so far, BOS first
  sentence: number[]; // per row: which sentence it belongs to
}

export interface StepRecord {
  prefixes: number[][]; // per row: tokens after BOS at this step (what the log-probs condition on)
  sentences: number[];
}

export const BOS = 0;
export const EOS = 1;

export class FakeModel implements StepModel<FakeState> {
  readonly calls: StepRecord[] = [];
  released = 0;
  constructor(
    readonly vocab: number,
    private readonly table: (sentence: number, prefix: number[]) => ArrayLike<number>,
  ) {}

  initial(sentences: number[]): FakeState {
    return { fed: sentences.map(() => []), sentence: [...sentences] };
  }

  async step(state: FakeState, lastTokens: Int32Array): Promise<StepOutput<FakeState>> {
    if (lastTokens.length !== state.fed.length) throw new Error('row count mismatch');
    const fed = state.fed.map((f, r) => [...f, lastTokens[r]!]);
    const prefixes = fed.map((f) => {
      if (f[0] !== BOS) throw new Error('first token fed must be BOS');
      return f.slice(1);
    });
    this.calls.push({ prefixes, sentences: [...state.sentence] });
    const logProbs = new Float32Array(fed.length * this.vocab);
    prefixes.forEach((p, r) => logProbs.set(this.table(state.sentence[r]!, p), r * this.vocab));
    return { logProbs, vocab: this.vocab, state: { fed, sentence: state.sentence } };
  }

  select(state: FakeState, rows: Int32Array): FakeState {
    if (rows.length === 0) throw new Error('select with no rows');
    return { fed: Array.from(rows, (r) => [...state.fed[r]!]), sentence: Array.from(rows, (r) => state.sentence[r]!) };
  }

  release(): void {
    this.released++;
  }
}

/** Log-probs from a sparse table: missing tokens get −∞. */
export function fromTable(vocab: number, entries: Record<number, number>): Float32Array {
  const out = new Float32Array(vocab).fill(-Infinity);
  for (const [t, lp] of Object.entries(entries)) out[Number(t)] = lp;
  return out;
}

/** A deterministic random model: log-softmax of hashed logits; EOS grows likelier with length. */
export function randomTable(seed: number, vocab: number): (sentence: number, prefix: number[]) => Float32Array {
  return (sentence, prefix) => {
    let h = (seed * 2654435761) ^ (sentence * 40503);
    for (const t of prefix) h = Math.imul(h ^ (t + 1), 2246822519) ^ (h >>> 13);
    const logits = new Float64Array(vocab);
    for (let v = 0; v < vocab; v++) {
      h = Math.imul(h ^ (h >>> 15), 2246822507);
      h = Math.imul(h ^ (h >>> 13), 3266489909);
      logits[v] = (((h ^ (h >>> 16)) >>> 0) / 4294967296) * 4;
    }
    logits[BOS] = -Infinity;
    logits[EOS] += prefix.length * 0.4 - 1.5;
    let max = -Infinity;
    for (const x of logits) max = Math.max(max, x);
    let z = 0;
    for (const x of logits) z += Math.exp(x - max);
    return Float32Array.from(logits, (x) => x - max - Math.log(z));
  };
}
