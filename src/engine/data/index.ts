// Public API of the data pipeline (plain TypeScript, no tfjs): special ids, corpora, BPE,
// synthetic tasks, gettext catalogs, token-budget batching.
export { PAD, BOS, EOS, UNK, SPECIAL_TOKENS, NUM_SPECIAL, isSpecial } from './vocab';
export { mulberry32, randInt, shuffleInPlace, deriveSeed, stableFraction } from './random';
export { JOINER, pretokenize, detokenize, stripJoiners } from './tokenize';
export { CorpusError, decodeLines, readLines, readPairs, holdOut, loadCorpus } from './corpus';
export type { SentencePair, CorpusSource, CorpusStats, ReadOptions, CorpusOptions, ParallelCorpus } from './corpus';
export { Bpe, END_OF_WORD } from './bpe';
export type { BpeLearnOptions } from './bpe';
export { TASKS, solveTask, generateTask, taskSplits } from './tasks';
export type { TaskName, TokenPair, TaskOptions, TaskSplitSizes } from './tasks';
export {
  MO_MAGIC,
  parseMo,
  readMo,
  cleanMessage,
  wordCount,
  splitOf,
  catalogFiles,
  buildGettextCorpus,
} from './gettext';
export type { MoEntry, MoCatalog, GettextOptions, GettextStats, GettextCorpus, Split } from './gettext';
export { makeBatches, paddedTokens } from './batching';
export type { BatchOptions } from './batching';
