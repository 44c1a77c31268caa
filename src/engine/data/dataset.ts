/**
 * Where a run's sentence pairs come from, and their ids. A data spec is saved in config.json so that
 * `train --resume` and `decode` rebuild exactly the same data and vocabulary.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Bpe } from './bpe';
import { loadCorpus, type CorpusSource, type SentencePair } from './corpus';
import { buildGettextCorpus } from './gettext';
import { taskSplits, TASKS, type TaskName } from './tasks';
import { EOS } from './specialTokens';
import { BpeVocabulary, loadVocabulary, TaskVocabulary, type Vocabulary } from './vocabulary';

export type DataSpec =
  | {
      kind: 'task';
      task: TaskName;
      vocabSize: number;
      minLength: number;
      maxLength: number;
      seed: number;
      train: number;
      valid: number;
      test: number;
    }
  | { kind: 'files'; dir: string; srcLang?: string; tgtLang?: string }
  | { kind: 'gettext'; lang: string };

/** A pair as ids: source ends with EOS; target has neither BOS nor EOS (the batcher adds them). */
export interface IdPair {
  src: number[];
  tgt: number[];
}

export interface PreparedData {
  vocab: Vocabulary;
  train: IdPair[];
  valid: IdPair[];
  test: IdPair[];
  /** The test split as text, for BLEU against references (empty for tasks). */
  testText: SentencePair[];
  validText: SentencePair[];
  summary: string;
}

export const TASK_DEFAULTS = {
  vocabSize: 11,
  minLength: 1,
  maxLength: 10,
  seed: 1,
  train: 20000,
  valid: 500,
  test: 200,
};

export function taskSpec(task: string, overrides: Partial<Extract<DataSpec, { kind: 'task' }>> = {}): DataSpec {
  if (!TASKS.includes(task as TaskName))
    throw new Error(`--task: unknown task "${task}" (expected ${TASKS.join(', ')})`);
  return { kind: 'task', task: task as TaskName, ...TASK_DEFAULTS, ...overrides };
}

/** Finds `<split>.<lang>` pairs or `<split>.tsv` in a folder. */
function filesOf(spec: Extract<DataSpec, { kind: 'files' }>, split: string): CorpusSource | undefined {
  const tsv = join(spec.dir, `${split}.tsv`);
  if (existsSync(tsv)) return { tsv };
  const langs = readdirSync(spec.dir)
    .filter((f) => f.startsWith(`${split}.`))
    .map((f) => f.slice(split.length + 1));
  const src = spec.srcLang ?? (langs.length === 2 ? langs.sort()[0] : undefined);
  const tgt = spec.tgtLang ?? (langs.length === 2 ? langs.sort()[1] : undefined);
  if (!src || !tgt) {
    if (split !== 'train') return undefined;
    throw new Error(
      `${spec.dir}: expected train.tsv or two files train.<src> and train.<tgt> (found ${langs.length ? langs.map((l) => `train.${l}`).join(', ') : 'none'}); name the languages with --src-lang/--tgt-lang`,
    );
  }
  const pair = { src: join(spec.dir, `${split}.${src}`), tgt: join(spec.dir, `${split}.${tgt}`) };
  if (!existsSync(pair.src) || !existsSync(pair.tgt)) {
    if (split !== 'train') return undefined;
    throw new Error(`${spec.dir}: ${existsSync(pair.src) ? pair.tgt : pair.src} not found`);
  }
  return pair;
}

function textSplits(
  spec: Exclude<DataSpec, { kind: 'task' }>,
  maxLength: number,
): { train: SentencePair[]; valid: SentencePair[]; test: SentencePair[]; summary: string } {
  if (spec.kind === 'gettext') {
    const c = buildGettextCorpus({ lang: spec.lang });
    if (c.train.length === 0)
      throw new Error(
        `--gettext ${spec.lang}: no English–${spec.lang} pairs found in /usr/share/locale/${spec.lang}/LC_MESSAGES (${c.stats.catalogs} catalogs)`,
      );
    return {
      ...c,
      summary: `gettext ${spec.lang}: ${c.stats.catalogs} catalogs, ${c.stats.pairs} pairs (train ${c.train.length}, valid ${c.valid.length}, test ${c.test.length})`,
    };
  }
  const train = filesOf(spec, 'train')!;
  const valid = filesOf(spec, 'valid');
  const test = filesOf(spec, 'test');
  const corpus = loadCorpus({ train, ...(valid ? { valid } : {}), maxLength });
  const testPairs = test ? loadCorpus({ train: test, valid: test, maxLength }).valid : [];
  const s = corpus.stats.train;
  return {
    train: corpus.train,
    valid: corpus.valid,
    test: testPairs,
    summary: `${spec.dir}: ${s.kept} training pairs (${s.tooLong} longer than ${maxLength} tokens and ${s.empty} empty skipped), ${corpus.valid.length} validation, ${testPairs.length} test`,
  };
}

/**
 * Builds the run's data. The vocabulary is read from `vocabPath` when it exists (a resumed run),
 * otherwise learned on the training pairs (BPE, shared by both sides) and saved there.
 */
export function prepareData(
  spec: DataSpec,
  vocabPath: string,
  opts: { vocabSize: number; maxLength: number },
): PreparedData {
  if (spec.kind === 'task') {
    const s = taskSplits(spec, { train: spec.train, valid: spec.valid, test: spec.test });
    const vocab = existsSync(vocabPath) ? loadVocabulary(vocabPath) : new TaskVocabulary(spec.vocabSize);
    if (!existsSync(vocabPath)) vocab.save(vocabPath);
    const ids = (pairs: { src: number[]; tgt: number[] }[]): IdPair[] =>
      pairs.map((p) => ({ src: [...p.src, EOS], tgt: p.tgt }));
    return {
      vocab,
      train: ids(s.train),
      valid: ids(s.valid),
      test: ids(s.test),
      testText: [],
      validText: [],
      summary: `${spec.task} task: ${spec.train} training, ${spec.valid} validation, ${spec.test} test sequences of ${spec.minLength}–${spec.maxLength} symbols`,
    };
  }
  const text = textSplits(spec, opts.maxLength);
  let vocab: Vocabulary;
  if (existsSync(vocabPath)) vocab = loadVocabulary(vocabPath);
  else {
    vocab = new BpeVocabulary(
      Bpe.learn(
        text.train.flatMap((p) => [p.src, p.tgt]),
        { vocabSize: opts.vocabSize },
      ),
    );
    vocab.save(vocabPath);
  }
  // Pairs whose subword sequences exceed max_length are left out; ids and text stay aligned.
  const encode = (pairs: SentencePair[]): { ids: IdPair[]; text: SentencePair[] } => {
    const out = { ids: [] as IdPair[], text: [] as SentencePair[] };
    for (const p of pairs) {
      const pair = { src: [...vocab.encode(p.src), EOS], tgt: vocab.encode(p.tgt) };
      if (pair.src.length > opts.maxLength + 1 || pair.tgt.length > opts.maxLength) continue;
      out.ids.push(pair);
      out.text.push(p);
    }
    return out;
  };
  const [train, valid, test] = [encode(text.train), encode(text.valid), encode(text.test)];
  return {
    vocab,
    train: train.ids,
    valid: valid.ids,
    test: test.ids,
    testText: test.text,
    validText: valid.text,
    summary: `${text.summary}; BPE vocabulary of ${vocab.size}`,
  };
}
