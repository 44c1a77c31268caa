/**
 * What turns text into ids for a run: a BPE vocabulary learned on the corpus (shared by source and
 * target, §5.1), or, for the built-in tasks, their symbols written as numbers ("4 7 5"). Saved as
 * `vocab.json` in the run folder and applied the same way to training, validation and decoding.
 */
import { Bpe } from './bpe';
import { NUM_SPECIAL, UNK } from './specialTokens';
import { writeFileAtomic } from '../io/atomicFile';
import { readJsonFile } from '../io/json';

export interface Vocabulary {
  readonly kind: 'bpe' | 'task';
  readonly size: number;
  /** Text → ids, without BOS/EOS. */
  encode(text: string): number[];
  /** Ids (specials dropped) → text. */
  decode(ids: readonly number[]): string;
  /** Ids → their token strings, for axis labels. */
  tokens(ids: readonly number[]): string[];
  save(path: string): void;
}

const SPECIAL_NAMES = ['<pad>', '<s>', '</s>', '<unk>'];

export class TaskVocabulary implements Vocabulary {
  readonly kind = 'task';
  constructor(readonly size: number) {}
  encode(text: string): number[] {
    return text
      .split(/\s+/)
      .filter(Boolean)
      .map((w) => (/^\d+$/.test(w) && Number(w) >= NUM_SPECIAL && Number(w) < this.size ? Number(w) : UNK));
  }
  decode(ids: readonly number[]): string {
    return ids.filter((id) => id >= NUM_SPECIAL).join(' ');
  }
  tokens(ids: readonly number[]): string[] {
    return ids.map((id) => (id < NUM_SPECIAL ? SPECIAL_NAMES[id] : String(id)));
  }
  save(path: string): void {
    writeFileAtomic(path, [Buffer.from(`${JSON.stringify({ kind: 'task', size: this.size })}\n`)]);
  }
}

export class BpeVocabulary implements Vocabulary {
  readonly kind = 'bpe';
  constructor(readonly bpe: Bpe) {}
  get size(): number {
    return this.bpe.size;
  }
  encode(text: string): number[] {
    return this.bpe.encode(text);
  }
  decode(ids: readonly number[]): string {
    return this.bpe.decode(ids.filter((id) => id >= NUM_SPECIAL));
  }
  tokens(ids: readonly number[]): string[] {
    return ids.map((id) => this.bpe.idToToken(id));
  }
  save(path: string): void {
    this.bpe.save(path);
  }
}

export function loadVocabulary(path: string): Vocabulary {
  const raw = readJsonFile(path) as { kind?: string; size?: number };
  if (raw.kind === 'task') {
    if (!Number.isInteger(raw.size) || raw.size! <= NUM_SPECIAL)
      throw new Error(`${path}: size: expected an integer > ${NUM_SPECIAL}`);
    return new TaskVocabulary(raw.size!);
  }
  return new BpeVocabulary(Bpe.load(path));
}
