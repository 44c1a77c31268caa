// Byte-pair encoding as in Sennrich, Haddow & Birch (2016), "Neural Machine Translation of Rare
// Words with Subword Units": words are split into characters, the last one carrying the end-of-word
// marker "</w>", and the most frequent adjacent symbol pair is merged repeatedly. One vocabulary is
// shared by source and target (learn on both sides), as in the Transformer paper (~37k for en-de).
// Ties between equally frequent pairs go to the pair whose left symbol, then right symbol, sorts
// first (JS string order), so the learned merges are deterministic. Learning keeps pair counts and
// a pair -> words index up to date incrementally; only the words containing the merged pair are
// revisited per merge.
import { writeFileAtomic } from '../io/atomicFile';
import { SPECIAL_TOKENS, NUM_SPECIAL, PAD, BOS, EOS, UNK } from './specialTokens';
import { pretokenize, detokenize, stripJoiners } from './tokenize';
import { MaxHeap } from './heap';
import { readJsonFile } from '../io/json';

export const END_OF_WORD = '</w>';
const FORMAT = 'attention-debugger-bpe';

export interface BpeLearnOptions {
  /** Target vocabulary size including the 4 special ids and the characters (default 37000). */
  vocabSize?: number;
  /** Upper bound on the number of merges (default: as many as vocabSize allows). */
  numMerges?: number;
  /** Stop when the most frequent pair occurs fewer times than this (default 2, as subword-nmt). */
  minFrequency?: number;
}

/** Split a word into its initial symbols: code points, the last one marked end-of-word. */
function initialSymbols(word: string): string[] {
  const chars = Array.from(word);
  if (chars.length > 0) chars[chars.length - 1] += END_OF_WORD;
  return chars;
}

const SHIFT = 2 ** 22; // pair key = left * SHIFT + right; symbol ids stay below 2^22

export class Bpe {
  /** id -> symbol; ids 0..3 are the special tokens. */
  readonly vocab: readonly string[];
  /** Merges in the order they were learned (rank = index). */
  readonly merges: readonly (readonly [string, string])[];
  private readonly ids = new Map<string, number>();
  private readonly ranks = new Map<string, Map<string, number>>();
  private readonly cache = new Map<string, number[]>();

  constructor(vocab: readonly string[], merges: readonly (readonly [string, string])[]) {
    this.vocab = vocab;
    this.merges = merges;
    vocab.forEach((s, i) => {
      if (!this.ids.has(s)) this.ids.set(s, i);
    });
    merges.forEach(([a, b], r) => {
      let m = this.ranks.get(a);
      if (!m) this.ranks.set(a, (m = new Map()));
      if (!m.has(b)) m.set(b, r);
    });
  }

  get size(): number {
    return this.vocab.length;
  }

  tokenToId(symbol: string): number {
    return this.ids.get(symbol) ?? UNK;
  }

  idToToken(id: number): string {
    return this.vocab[id] ?? (SPECIAL_TOKENS[UNK] as string);
  }

  /** Learn merges from raw sentences (pass both sides of the training corpus for a shared vocabulary). */
  static learn(sentences: Iterable<string>, options: BpeLearnOptions = {}): Bpe {
    const wordCounts = new Map<string, number>();
    for (const s of sentences) for (const w of pretokenize(s)) wordCounts.set(w, (wordCounts.get(w) ?? 0) + 1);

    const symStr: string[] = [];
    const symId = new Map<string, number>();
    const intern = (s: string): number => {
      let id = symId.get(s);
      if (id === undefined) {
        id = symStr.length;
        if (id >= SHIFT) throw new RangeError(`BPE: more than ${SHIFT} symbols`);
        symStr.push(s);
        symId.set(s, id);
      }
      return id;
    };
    const words: number[][] = [];
    const freq: number[] = [];
    for (const [w, c] of wordCounts) {
      words.push(initialSymbols(w).map(intern));
      freq.push(c);
    }
    const alphabet = [...symStr].sort();
    const vocab: string[] = [...SPECIAL_TOKENS, ...alphabet];
    const vocabSize = options.vocabSize ?? 37000;
    const maxMerges = options.numMerges ?? Infinity;
    const minFrequency = options.minFrequency ?? 2;

    const pairCount = new Map<number, number>();
    const where = new Map<number, number[]>();
    words.forEach((syms, w) => {
      for (let i = 0; i + 1 < syms.length; i++) {
        const k = (syms[i] as number) * SHIFT + (syms[i + 1] as number);
        pairCount.set(k, (pairCount.get(k) ?? 0) + (freq[w] as number));
        const list = where.get(k);
        if (list) list.push(w);
        else where.set(k, [w]);
      }
    });
    // Heap order: higher count first; ties by left symbol, then right symbol, in string order.
    const before = (ca: number, ka: number, cb: number, kb: number): boolean => {
      if (ca !== cb) return ca > cb;
      const la = symStr[Math.floor(ka / SHIFT)] as string;
      const lb = symStr[Math.floor(kb / SHIFT)] as string;
      if (la !== lb) return la < lb;
      return (symStr[ka % SHIFT] as string) < (symStr[kb % SHIFT] as string);
    };
    const heap = new MaxHeap(before);
    for (const [k, c] of pairCount) heap.push(c, k);

    const merges: [string, string][] = [];
    const stamp = new Int32Array(words.length).fill(-1);
    while (vocab.length < vocabSize && merges.length < maxMerges) {
      const top = heap.pop();
      if (!top) break;
      const [count, key] = top;
      if (pairCount.get(key) !== count) continue; // stale entry
      if (count < minFrequency) break;
      const a = Math.floor(key / SHIFT);
      const b = key % SHIFT;
      const merged = (symStr[a] as string) + (symStr[b] as string);
      const isNew = !symId.has(merged);
      const c = intern(merged);
      merges.push([symStr[a] as string, symStr[b] as string]);
      if (isNew) vocab.push(merged);

      const iter = merges.length;
      const delta = new Map<number, number>();
      const add = (k: number, d: number): void => {
        delta.set(k, (delta.get(k) ?? 0) + d);
      };
      for (const w of where.get(key) ?? []) {
        if (stamp[w] === iter) continue;
        stamp[w] = iter;
        const syms = words[w] as number[];
        const f = freq[w] as number;
        const out: number[] = [];
        let i = 0;
        while (i < syms.length) {
          if (syms[i] === a && syms[i + 1] === b && i + 1 < syms.length) {
            out.push(c);
            i += 2;
          } else out.push(syms[i++] as number);
        }
        if (out.length === syms.length) continue; // stale index entry
        for (let j = 0; j + 1 < syms.length; j++) add((syms[j] as number) * SHIFT + (syms[j + 1] as number), -f);
        for (let j = 0; j + 1 < out.length; j++) {
          const l = out[j] as number;
          const r = out[j + 1] as number;
          const k = l * SHIFT + r;
          add(k, f);
          if (l === c || r === c) {
            const list = where.get(k);
            if (list) list.push(w);
            else where.set(k, [w]);
          }
        }
        words[w] = out;
      }
      where.delete(key);
      for (const [k, d] of delta) {
        if (d === 0) continue;
        const n = (pairCount.get(k) ?? 0) + d;
        if (n <= 0) pairCount.delete(k);
        else {
          pairCount.set(k, n);
          heap.push(n, k);
        }
      }
    }
    return new Bpe(vocab, merges);
  }

  /** Subword symbols of one pre-tokenized word, merges applied lowest rank first. */
  segmentWord(word: string): string[] {
    let syms = initialSymbols(word);
    for (;;) {
      let best = Infinity;
      for (let i = 0; i + 1 < syms.length; i++) {
        const r = this.ranks.get(syms[i] as string)?.get(syms[i + 1] as string);
        if (r !== undefined && r < best) best = r;
      }
      if (best === Infinity) return syms;
      const [a, b] = this.merges[best] as readonly [string, string];
      const out: string[] = [];
      for (let i = 0; i < syms.length; ) {
        if (syms[i] === a && syms[i + 1] === b && i + 1 < syms.length) {
          out.push(a + b);
          i += 2;
        } else out.push(syms[i++] as string);
      }
      syms = out;
    }
  }

  /** Subword symbols of a sentence. */
  tokenize(text: string): string[] {
    return pretokenize(text).flatMap((w) => this.segmentWord(w));
  }

  /** Token ids of a sentence (no BOS/EOS added); symbols outside the vocabulary become UNK. */
  encode(text: string): number[] {
    const ids: number[] = [];
    for (const w of pretokenize(text)) {
      let wi = this.cache.get(w);
      if (!wi) {
        wi = this.segmentWord(w).map((s) => this.ids.get(s) ?? UNK);
        if (this.cache.size >= 200_000) this.cache.clear();
        this.cache.set(w, wi);
      }
      for (const id of wi) ids.push(id);
    }
    return ids;
  }

  /** The words of a sentence (each once) holding a symbol outside the vocabulary: encode reads them as <unk>. */
  unknownWords(text: string): string[] {
    const unknown = pretokenize(text).filter((w) => this.segmentWord(w).some((s) => !this.ids.has(s)));
    return [...new Set(stripJoiners(unknown))];
  }

  /**
   * Text of token ids: PAD/BOS/EOS are dropped, UNK shows as "<unk>", symbols are joined up to each
   * end-of-word marker, and the words are detokenized (joiners removed: the original text) unless
   * options.detokenize is false (then the pre-tokens without joiners, joined by single spaces).
   */
  decode(ids: readonly number[], options: { detokenize?: boolean } = {}): string {
    const words: string[] = [];
    let cur = '';
    for (const id of ids) {
      if (id === PAD || id === BOS || id === EOS) continue;
      const s =
        id === UNK || id < 0 || id >= this.vocab.length ? (SPECIAL_TOKENS[UNK] as string) : (this.vocab[id] as string);
      if (s.endsWith(END_OF_WORD)) {
        words.push(cur + s.slice(0, -END_OF_WORD.length));
        cur = '';
      } else cur += s;
    }
    if (cur !== '') words.push(cur);
    return options.detokenize === false ? stripJoiners(words).join(' ') : detokenize(words);
  }

  toJSON(): {
    format: string;
    version: number;
    endOfWord: string;
    vocab: readonly string[];
    merges: readonly (readonly [string, string])[];
  } {
    return { format: FORMAT, version: 1, endOfWord: END_OF_WORD, vocab: this.vocab, merges: this.merges };
  }

  /** Writes the model as JSON, whole or not at all (io/atomicFile.ts). */
  save(path: string): void {
    writeFileAtomic(path, [Buffer.from(JSON.stringify(this.toJSON()))]);
  }

  static fromJSON(json: unknown, file = '<json>'): Bpe {
    const bad = (why: string): Error => new Error(`${file}: not a BPE model: ${why}`);
    if (typeof json !== 'object' || json === null) throw bad('not a JSON object');
    const o = json as Record<string, unknown>;
    if (o['format'] !== FORMAT) throw bad(`format is ${JSON.stringify(o['format'])}, expected "${FORMAT}"`);
    if (o['version'] !== 1) throw bad(`unsupported version ${JSON.stringify(o['version'])}`);
    if (o['endOfWord'] !== END_OF_WORD) throw bad(`end-of-word marker must be "${END_OF_WORD}"`);
    const vocab = o['vocab'];
    const merges = o['merges'];
    if (!Array.isArray(vocab) || !vocab.every((s) => typeof s === 'string'))
      throw bad('vocab must be an array of strings');
    if (vocab.length < NUM_SPECIAL || SPECIAL_TOKENS.some((s, i) => vocab[i] !== s))
      throw bad(`vocab must start with ${SPECIAL_TOKENS.join(' ')}`);
    if (!Array.isArray(merges)) throw bad('merges must be an array');
    merges.forEach((m, i) => {
      if (!Array.isArray(m) || m.length !== 2 || typeof m[0] !== 'string' || typeof m[1] !== 'string')
        throw bad(`merge ${i} is not a pair of strings`);
    });
    return new Bpe(vocab as string[], merges as [string, string][]);
  }

  static load(path: string): Bpe {
    return Bpe.fromJSON(readJsonFile(path), path);
  }
}
