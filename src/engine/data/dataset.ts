/**
 * Where a run's sentence pairs come from, and their ids. A data spec is saved in config.json so that
 * `train --resume` and `decode` rebuild exactly the same data and vocabulary.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
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
  /** The built-in task the pairs come from (its exact alignment: taskAlignment); undefined for corpora. */
  task?: TaskName | undefined;
  /** Which way a corpus folder translates (files only; undefined for train.tsv, tasks and gettext). */
  direction?: Direction | undefined;
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

export type FilesSpec = Extract<DataSpec, { kind: 'files' }>;
/** Which way a corpus folder translates: `<split>.<srcLang>` → `<split>.<tgtLang>`. */
export interface Direction {
  srcLang: string;
  tgtLang: string;
}

/**
 * The direction of a corpus folder of `train.<lang>` files (undefined for `train.tsv`: source in the
 * first column). Languages that --src-lang/--tgt-lang name are taken as they are; one named, the
 * other is the remaining suffix; none named, the two suffixes are ordered: English (`en`) first when
 * one is English, as the paper's English→German and English→French, else alphabetically.
 * `alphabetical` is the order of runs recorded before their direction was (format 2 runs that lack
 * `data.srcLang`), so that they resume the way they were trained.
 */
export function corpusDirection(
  spec: FilesSpec,
  order: 'english-first' | 'alphabetical' = 'english-first',
): Direction | undefined {
  if (!existsSync(spec.dir) || !statSync(spec.dir).isDirectory())
    throw new Error(
      `--data ${spec.dir}: no such folder; give a folder with train.<src> and train.<tgt> (or train.tsv)`,
    );
  if (existsSync(join(spec.dir, 'train.tsv'))) return undefined;
  const langs = readdirSync(spec.dir)
    .filter((f) => f.startsWith('train.') && f.length > 'train.'.length)
    .map((f) => f.slice('train.'.length))
    .sort();
  const found = `found ${langs.length ? langs.map((l) => `train.${l}`).join(', ') : 'none'}`;
  const { srcLang, tgtLang } = spec;
  if (srcLang !== undefined && srcLang === tgtLang)
    throw new Error(`--src-lang and --tgt-lang are both "${srcLang}": name two different languages (${found})`);
  for (const [flag, lang] of [
    ['--src-lang', srcLang],
    ['--tgt-lang', tgtLang],
  ] as const)
    if (lang !== undefined && !langs.includes(lang))
      throw new Error(`${flag} ${lang}: ${join(spec.dir, `train.${lang}`)} not found (${found})`);
  const named = srcLang ?? tgtLang;
  const others = langs.filter((l) => l !== named);
  if (srcLang !== undefined && tgtLang !== undefined) return { srcLang, tgtLang };
  if (named !== undefined) {
    if (others.length !== 1)
      throw new Error(
        `${spec.dir}: ${srcLang ? '--tgt-lang' : '--src-lang'} is needed: ${found}, ` +
          `which leaves ${others.length} candidates`,
      );
    return srcLang ? { srcLang, tgtLang: others[0]! } : { srcLang: others[0]!, tgtLang: tgtLang! };
  }
  if (langs.length !== 2)
    throw new Error(
      `${spec.dir}: expected train.tsv or two files train.<src> and train.<tgt> (${found}); ` +
        'name the languages with --src-lang/--tgt-lang',
    );
  const [a, b] = langs as [string, string];
  return order === 'english-first' && b === 'en' ? { srcLang: b, tgtLang: a } : { srcLang: a, tgtLang: b };
}

/** `<split>.tsv`, or `<split>.<src>`/`<split>.<tgt>` in the direction's order; undefined for a missing split. */
function filesOf(dir: string, split: string, direction: Direction | undefined): CorpusSource | undefined {
  const tsv = join(dir, `${split}.tsv`);
  if (existsSync(tsv)) return { tsv };
  if (!direction) return undefined;
  const pair = { src: join(dir, `${split}.${direction.srcLang}`), tgt: join(dir, `${split}.${direction.tgtLang}`) };
  if (!existsSync(pair.src) || !existsSync(pair.tgt)) {
    if (split !== 'train') return undefined;
    throw new Error(`${dir}: ${existsSync(pair.src) ? pair.tgt : pair.src} not found`);
  }
  return pair;
}

/** "en→de (train.en → train.de)", as the start of a run prints it. */
export function describeDirection(d: Direction | undefined): string {
  return d
    ? `${d.srcLang}→${d.tgtLang} (train.${d.srcLang} → train.${d.tgtLang})`
    : 'train.tsv (source in the first column, target in the second)';
}

function textSplits(
  spec: Exclude<DataSpec, { kind: 'task' }>,
  maxLength: number,
): {
  train: SentencePair[];
  valid: SentencePair[];
  test: SentencePair[];
  summary: string;
  direction?: Direction | undefined;
} {
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
  const direction = corpusDirection(spec);
  const train = filesOf(spec.dir, 'train', direction)!;
  const valid = filesOf(spec.dir, 'valid', direction);
  const test = filesOf(spec.dir, 'test', direction);
  const corpus = loadCorpus({ train, ...(valid ? { valid } : {}), maxLength });
  const testPairs = test ? loadCorpus({ train: test, valid: test, maxLength }).valid : [];
  const s = corpus.stats.train;
  return {
    train: corpus.train,
    valid: corpus.valid,
    test: testPairs,
    direction,
    summary:
      `${spec.dir}: ${describeDirection(direction)}; ${s.kept} training pairs (${s.tooLong} longer than ` +
      `${maxLength} tokens and ${s.empty} empty skipped), ${corpus.valid.length} validation, ${testPairs.length} test`,
  };
}

/** The vocabulary of a run folder, when it has one, checked against the kind of data it is for. */
function savedVocabulary(spec: DataSpec, vocabPath: string | undefined): Vocabulary | undefined {
  if (vocabPath === undefined || !existsSync(vocabPath)) return undefined;
  const vocab = loadVocabulary(vocabPath);
  const expected = spec.kind === 'task' ? 'task' : 'bpe';
  if (vocab.kind !== expected)
    throw new Error(
      `${vocabPath}: a ${vocab.kind} vocabulary, but the run's data (${spec.kind}) needs a ${expected} one: ` +
        'it belongs to another run; remove it or choose another --out',
    );
  return vocab;
}

/** What the summary says when a learned BPE vocabulary is larger than vocab_size asked (its characters). */
const belowAlphabet = (size: number, asked: number): string =>
  size > asked
    ? ` (vocab_size ${asked} is below the special tokens and the corpus's characters, which every BPE ` +
      'vocabulary holds: it has no merges)'
    : '';

/**
 * Builds the run's data. The vocabulary is read from `vocabPath` when given and it exists (an open
 * run), otherwise learned on the training pairs (BPE, shared by both sides). Nothing is written:
 * the caller saves a learned vocabulary with the run.
 */
export function prepareData(
  spec: DataSpec,
  vocabPath: string | undefined,
  opts: { vocabSize: number; maxLength: number },
): PreparedData {
  const saved = savedVocabulary(spec, vocabPath);
  if (spec.kind === 'task') {
    const s = taskSplits(spec, { train: spec.train, valid: spec.valid, test: spec.test });
    const vocab = saved ?? new TaskVocabulary(spec.vocabSize);
    const ids = (pairs: { src: number[]; tgt: number[] }[]): IdPair[] =>
      pairs.map((p) => ({ src: [...p.src, EOS], tgt: p.tgt }));
    return {
      vocab,
      train: ids(s.train),
      valid: ids(s.valid),
      test: ids(s.test),
      testText: [],
      validText: [],
      task: spec.task,
      summary: `${spec.task} task: ${spec.train} training, ${spec.valid} validation, ${spec.test} test sequences of ${spec.minLength}–${spec.maxLength} symbols`,
    };
  }
  const text = textSplits(spec, opts.maxLength);
  const vocab: Vocabulary =
    saved ??
    new BpeVocabulary(
      Bpe.learn(
        text.train.flatMap((p) => [p.src, p.tgt]),
        { vocabSize: opts.vocabSize },
      ),
    );
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
    direction: text.direction,
    summary:
      `${text.summary}; BPE vocabulary of ${vocab.size}` + (saved ? '' : belowAlphabet(vocab.size, opts.vocabSize)),
  };
}
