/**
 * The attention of any sentence pair at any checkpoint of a run: the probe pair (its ids are in the
 * run's snapshots), text through the run's vocabulary, or token ids (a PyTorch checkpoint folder
 * has no vocabulary). Without a target, the source is decoded first (beam search) and the attention
 * is the teacher-forced pass over what was chosen. Training is never touched: the weights come from
 * the checkpoint file.
 */
import { existsSync } from 'node:fs';
import type { Attention, InputPair } from '../../protocol/attention';
import type { Decoded } from '../../protocol/decoded';
import { checkpointStep, listCheckpoints, loadCheckpoint, resolveCheckpoint } from '../checkpoint';
import { SPECIAL_TOKENS } from '../data/specialTokens';
import { loadVocabulary, type Vocabulary } from '../data/vocabulary';
import { translate } from '../decode/translate';
import { attentionOfPairs } from './attentionOfPairs';
import type { Transformer } from '../model/transformer';
import { longPass } from '../longAttention';
import { POOL_ABOVE, thumbnailPool } from '../../algorithms/pool';
import { ATTENTION_KINDS, type AttentionKind, type AttentionMaps } from '../../protocol/attention';
import { keepPass, passKey } from './attentionBlock';
import { checkAttentionSize, checkDecodeSize, checkLongPassSize } from './attentionSize';
import { RunDir } from '../run/runDir';

export interface AttentionAt {
  attention: Attention;
  decoded?: Decoded;
  /** log p(y_t | y_<t, X) of each target token after BOS, then of EOS. */
  tokenLogProbs: number[];
}

/** The checkpoint file of `step`, or the run's newest (a PyTorch folder's model.safetensors). */
export function checkpointOf(run: RunDir, step: number | undefined): string {
  if (step === undefined) return resolveCheckpoint(run.path).weightsPath;
  const path = run.weightsPath(step);
  if (existsSync(path)) return path;
  const have = listCheckpoints(run.path).map((c) => c.step);
  throw new Error(
    `${run.path} has no checkpoint at step ${step}` +
      (have.length ? ` (its checkpoints: steps ${have.join(', ')})` : ' (it has no checkpoints yet)'),
  );
}

/** The probe pair's ids, from the newest snapshot that recorded them. */
function probeIds(run: RunDir): { src: number[]; tgt: number[] } {
  for (const step of run.snapshotSteps().reverse()) {
    const p = run.readSnapshot(step).pairs[0];
    if (p?.srcIds && p.tgtIds) return { src: p.srcIds, tgt: p.tgtIds };
  }
  throw new Error(
    `${run.path}: no snapshot records the probe pair's ids (written by runs of this version), ` +
      'so the probe cannot be run at other checkpoints; type a sentence instead',
  );
}

function parseIds(text: string, what: string): number[] {
  const words = text.trim().split(/\s+/).filter(Boolean);
  if (!words.length || !words.every((w) => /^\d+$/.test(w)))
    throw new Error(
      `this run has no vocab.json (a checkpoint folder written by PyTorch?), so its ${what} cannot be read ` +
        `as text: type token ids separated by spaces, e.g. "5 6 7"`,
    );
  return words.map(Number);
}

interface Ids {
  src: number[];
  tgt?: number[];
}

function idsOf(run: RunDir, input: InputPair, vocab: Vocabulary | undefined, model: Transformer): Ids {
  const { bos_id: bos, eos_id: eos } = model.config;
  const withEos = (ids: number[]) => (ids[ids.length - 1] === eos ? ids : [...ids, eos]);
  const withBos = (ids: number[]) => (ids[0] === bos ? ids : [bos, ...ids]);
  if (input.kind === 'probe') return probeIds(run);
  if (input.kind === 'ids') return { src: withEos(input.src), ...(input.tgt ? { tgt: withBos(input.tgt) } : {}) };
  if (!input.src.trim()) throw new Error('the source sentence is empty');
  const encode = (text: string, what: string) => (vocab ? vocab.encode(text) : parseIds(text, what));
  return {
    src: withEos(encode(input.src, 'source')),
    ...(input.tgt !== undefined && input.tgt.trim() ? { tgt: withBos(encode(input.tgt, 'target')) } : {}),
  };
}

/** The words of a typed pair that the vocabulary reads as <unk>, for the answer's source; `{}` when none. */
function unknownWordsOf(vocab: Vocabulary | undefined, input: InputPair): { unknownWords?: string[] } {
  if (!vocab || input.kind !== 'text') return {};
  const words = vocab.unknownWords(`${input.src} ${input.tgt ?? ''}`);
  return words.length ? { unknownWords: words } : {};
}

/** Token labels: the vocabulary's, or ids as numbers with the special ids named. */
function labeller(vocab: Vocabulary | undefined, model: Transformer): (ids: number[]) => string[] {
  if (vocab) return (ids) => vocab.tokens(ids);
  const { pad_id, bos_id, eos_id } = model.config;
  const names = new Map([
    [pad_id, SPECIAL_TOKENS[0]],
    [bos_id, SPECIAL_TOKENS[1]],
    [eos_id, SPECIAL_TOKENS[2]],
  ]);
  return (ids) => ids.map((id) => names.get(id) ?? String(id));
}

/** log p of each target token after BOS and of EOS, from teacher-forced log-probs [T, V]. Finite: JSON has no −∞. */
export function tokenLogProbs(logProbs: Float32Array, tgt: number[], vocab: number, eos: number): number[] {
  return tgt.map((_, t) => Math.max(logProbs[t * vocab + (t + 1 < tgt.length ? tgt[t + 1] : eos)], -1e30));
}

/** A checkpoint of a run opened for one input: the model, the input's ids and the token labels. */
export interface OpenedInput {
  run: RunDir;
  checkpoint: string;
  model: Transformer;
  vocab: Vocabulary | undefined;
  ids: Ids;
  label: (ids: number[]) => string[];
}

/** Opens `step`'s checkpoint (the newest when absent) for `input`, runs `use`, and frees the model. */
export async function withCheckpoint<T>(
  runDir: string,
  step: number | undefined,
  input: InputPair,
  use: (o: OpenedInput) => Promise<T>,
): Promise<T> {
  const run = new RunDir(runDir);
  const checkpoint = checkpointOf(run, step);
  const vocab = existsSync(run.vocabPath) ? loadVocabulary(run.vocabPath) : undefined;
  // A NaN checkpoint computes no attention to show: refused naming the tensor, not failed later.
  const model = loadCheckpoint(checkpoint, true);
  try {
    return await use({
      run,
      checkpoint,
      model,
      vocab,
      ids: idsOf(run, input, vocab, model),
      label: labeller(vocab, model),
    });
  } finally {
    model.dispose();
  }
}

/** The input's target (BOS first), or, when it gave none, what beam search of `beam` chose, with what it decoded. */
export async function targetOf(
  { model, vocab, ids, label }: Pick<OpenedInput, 'model' | 'vocab' | 'ids' | 'label'>,
  beam: number,
): Promise<{ tgt: number[]; decoded?: Decoded }> {
  if (ids.tgt) return { tgt: ids.tgt };
  const [t] = await translate(model, [ids.src], { beamSize: beam });
  const text = vocab ? vocab.decode(t!.tokens) : t!.tokens.join(' ');
  const decoded = { text, tokens: label(t!.tokens), score: t!.score, logProb: t!.logProb };
  return { tgt: [model.config.bos_id, ...t!.tokens], decoded };
}

/** `valueWeighted`: each map also holds ‖α_ij · v_j W^O_h‖ (valueWeighted.ts); refused for pooled maps. */
export async function attentionAt(
  runDir: string,
  step: number | undefined,
  input: InputPair,
  beam = 4,
  valueWeighted = false,
): Promise<AttentionAt> {
  return withCheckpoint(runDir, step, input, async ({ checkpoint: weightsPath, model, vocab, ids, label }) => {
    const c = model.config;
    if (!ids.tgt) {
      checkDecodeSize(c, ids.src.length); // max_len first: the advice of the attention's limit must then decode
      checkAttentionSize(c, ids.src.length, 1, c.max_len);
    }
    const { tgt, decoded } = await targetOf({ model, vocab, ids, label }, beam);
    const S = ids.src.length;
    let pair: { maps: AttentionMaps[]; tokenLogProbs: number[] };
    if (isLong(model, S, tgt.length)) {
      if (valueWeighted)
        throw new RangeError(
          `attention/get params: valueWeighted needs every weight, so inputs of at most ${POOL_ABOVE} tokens a side ` +
            `within max_len ${c.max_len}; this pair has ${S} source and ${tgt.length} target tokens`,
        );
      // Layer by layer, pooled past POOL_ABOVE tokens; Q and K kept for attention/block.
      checkLongPassSize(c, S, tgt.length);
      const pools = poolsOf(S, tgt.length);
      const pass = await longPass(model, ids.src, tgt, pools, true);
      keepPass(passKey(runDir, step, input), pass, c.pad_id);
      pair = pass;
    } else {
      checkAttentionSize(c, S, tgt.length);
      const [p] = await attentionOfPairs(model, [ids.src], [tgt], undefined, { valueWeighted });
      pair = { maps: p!.maps, tokenLogProbs: tokenLogProbs(p!.logProbs, tgt, c.tgt_vocab, c.eos_id) };
    }
    const attention: Attention = {
      source: {
        runDir,
        step: checkpointStep(weightsPath),
        checkpoint: weightsPath,
        input: input.kind === 'probe' ? 'probe' : 'input',
        ...unknownWordsOf(vocab, input),
      },
      srcTokens: label(ids.src),
      tgtTokens: label(tgt),
      maps: pair.maps,
    };
    return { attention, ...(decoded ? { decoded } : {}), tokenLogProbs: pair.tokenLogProbs };
  });
}

/** Whether a pair takes the layer-by-layer pass: its maps are pooled, or it passes max_len (positions extend). */
function isLong(model: Transformer, S: number, T: number): boolean {
  const { max_len } = model.config;
  return S > max_len || T > max_len || ATTENTION_KINDS.some((k) => poolsOf(S, T)[k].rows * poolsOf(S, T)[k].cols > 1);
}

/** Each kind's thumbnail pool for S source and T target tokens (1 × 1: whole). */
function poolsOf(S: number, T: number): Record<AttentionKind, { rows: number; cols: number }> {
  const whole = { rows: 1, cols: 1 };
  return {
    encoder_self: thumbnailPool(S, S) ?? whole,
    decoder_self: thumbnailPool(T, T) ?? whole,
    cross: thumbnailPool(T, S) ?? whole,
  };
}
