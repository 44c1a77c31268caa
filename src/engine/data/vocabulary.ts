/**
 * What turns text into ids for a run: a BPE vocabulary learned on the corpus (shared by source and
 * target, §5.1), or, for the built-in tasks, their symbols written as numbers ("4 7 5"). Saved as
 * `vocab.json` in the run folder and applied the same way to training, validation and decoding.
 */
import { Bpe } from './bpe';
import { NUM_SPECIAL, SPECIAL_TOKENS, UNK } from './specialTokens';
import { writeFileAtomic } from '../io/atomicFile';
import { readJsonFile } from '../io/json';

export interface Vocabulary {
  readonly kind: 'bpe' | 'task';
  readonly size: number;
  /** Text → ids, without BOS/EOS. */
  encode(text: string): number[];
  /** The words of a text (each once) that encode reads as <unk>: what a reader warns of. */
  unknownWords(text: string): string[];
  /** Ids (specials dropped) → text. */
  decode(ids: readonly number[]): string;
  /** Ids → their token strings, for axis labels. */
  tokens(ids: readonly number[]): string[];
  save(path: string): void;
}

/**
 * Refuses a vocabulary size (training setting vocab_size) that cannot hold the special tokens and
 * a word: below it a run would train on a vocabulary of another size than config.json records.
 * `where` names the flag or the file and field.
 */
export function checkVocabSize(size: number, where: string): void {
  if (size <= NUM_SPECIAL)
    throw new Error(
      `${where}: ${size} cannot hold the ${NUM_SPECIAL} special tokens (${SPECIAL_TOKENS.join(' ')}) ` +
        `and a word; give at least ${NUM_SPECIAL + 1} (a BPE vocabulary also holds every character of the corpus)`,
    );
}

export class TaskVocabulary implements Vocabulary {
  readonly kind = 'task';
  constructor(readonly size: number) {}
  encode(text: string): number[] {
    return text
      .split(/\s+/)
      .filter(Boolean)
      .map((w) => (/^\d+$/.test(w) && Number(w) >= NUM_SPECIAL && Number(w) < this.size ? Number(w) : UNK));
  }
  unknownWords(text: string): string[] {
    return [...new Set(text.split(/\s+/).filter((w) => w && this.encode(w)[0] === UNK))];
  }
  decode(ids: readonly number[]): string {
    return ids.filter((id) => id >= NUM_SPECIAL).join(' ');
  }
  tokens(ids: readonly number[]): string[] {
    return ids.map((id) => (id < NUM_SPECIAL ? SPECIAL_TOKENS[id] : String(id)));
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
  unknownWords(text: string): string[] {
    return this.bpe.unknownWords(text);
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

/** A warning naming the words of an input read as <unk>, or undefined when there are none. */
export function unknownWordsWarning(vocab: Vocabulary, text: string, where: string): string | undefined {
  const words = vocab.unknownWords(text);
  if (!words.length) return undefined;
  const shown = words.slice(0, 10).map((w) => JSON.stringify(w));
  return (
    `${where}: ${shown.join(', ')}${words.length > 10 ? ` and ${words.length - 10} more` : ''} ` +
    `not in the run's vocabulary: read as <unk>`
  );
}

/** `{ unknown_words }` for a JSON record of an input with words read as <unk>; `{}` when it has none. */
export function unknownWordsField(vocab: Vocabulary, text: string): { unknown_words?: string[] } {
  const words = vocab.unknownWords(text);
  return words.length ? { unknown_words: words } : {};
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
