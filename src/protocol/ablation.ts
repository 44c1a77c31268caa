/**
 * Head ablation at inference (issue 13), as the CLI's `--ablate` and the attention view's toggles
 * ask for it: which heads, and what replaces their output before W^O.
 */
import {
  type Fields,
  type Check,
  arrayOf,
  intIn,
  isAbsolutePath,
  isFiniteNumber,
  isIndex,
  isString,
  object,
  commaList,
  oneOf,
  optional,
} from './check';
import { checkInputPair, HEAD_ID_FORM, type InputPair, parseHeadId } from './attention';

export const ABLATION_MODES = ['zero', 'mean'] as const;
/** zero: ξ_h = 0, the head's output is removed; mean: it is replaced by its mean over the probe batch. */
export type AblationMode = (typeof ABLATION_MODES)[number];

export interface Ablation {
  /** `kind:layer.head` ids. */
  heads: string[];
  mode: AblationMode;
}

export const isHeadId: Check<string> = (v, path) =>
  typeof v === 'string' && parseHeadId(v)
    ? undefined
    : `${path} must be a head id like ${HEAD_ID_FORM}, got ${JSON.stringify(v)}`;

export const checkAblation: Check<Ablation> = object({ heads: arrayOf(isHeadId), mode: oneOf(ABLATION_MODES) });

/** `--ablate cross:0.1,encoder_self:2.0` → head ids, each checked; throws naming the bad one. */
export function parseAblateList(text: string): string[] {
  return parseHeadList(text, '--ablate');
}

/** A list of head ids a flag names ("cross:0.1, decoder_self:0.2"): each well formed, none empty or twice. */
export function parseHeadList(text: string, flag: string): string[] {
  const ids = commaList(text, flag, HEAD_ID_FORM);
  for (const id of ids)
    if (!parseHeadId(id)) throw new RangeError(`${flag}: ${JSON.stringify(id)} is not a head id like ${HEAD_ID_FORM}`);
  return ids;
}

/** `cross:0.1 (mean)`: an ablation as a person reads it in headers and file names. */
export function describeAblation(a: Ablation): string {
  return a.heads.length ? `${a.heads.join(', ')} ${a.mode}-ablated` : 'no heads ablated';
}

/** What ablating heads does to one input at one checkpoint (the attention view's head toggles). */
export interface AblationEffect {
  ablation: Ablation;
  runDir: string;
  step: number;
  /** The target scored, BOS first: the input's own, or what the intact model decoded. */
  tgtTokens: string[];
  /** log p of each target token after BOS, then of EOS, teacher-forced: the model as trained, and ablated. */
  intact: number[];
  ablated: number[];
  /** Greedy decoding of the source with the heads ablated. */
  output: { text: string; tokens: string[] };
}

export const checkAblationEffect: Check<AblationEffect> = (v, path) => {
  const why = object<AblationEffect>({
    ablation: checkAblation,
    runDir: isString,
    step: isIndex,
    tgtTokens: arrayOf(isString),
    intact: arrayOf(isFiniteNumber),
    ablated: arrayOf(isFiniteNumber),
    output: object({ text: isString, tokens: arrayOf(isString) }),
  })(v, path);
  if (why) return why;
  const e = v as AblationEffect;
  if (e.intact.length !== e.tgtTokens.length || e.ablated.length !== e.tgtTokens.length)
    return `${path}: intact and ablated must hold one log-prob per target token (${e.tgtTokens.length})`;
  return undefined;
};

/** What ablating heads costs on a run's test split (Ablate Heads…), decoded greedily. */
export interface AblationScore {
  ablation: Ablation;
  runDir: string;
  step: number;
  /** Exact match in percent (the built-in tasks) or BLEU (corpora), as the head report scores. */
  metric: 'exact_match_percent' | 'bleu';
  sentences: number;
  intact: number;
  ablated: number;
}

/** The most test sentences one request decodes (twice: intact and ablated). */
export const ABLATION_SCORE_LIMIT = 5000;

export interface AblationScoreParams {
  runDir: string;
  /** The checkpoint's step; the newest when absent. */
  step?: number;
  ablation: Ablation;
  /** Test sentences to decode (default 200). */
  limit?: number;
}
export const checkAblationScoreParams: Check<AblationScoreParams> = object({
  runDir: isAbsolutePath,
  step: optional(isIndex),
  ablation: checkAblation,
  limit: optional(intIn(1, ABLATION_SCORE_LIMIT)),
});

/** A score's fields, checked alone (ablation/score's answer) or in a saved record. */
const scoreFields: Fields<AblationScore> = {
  ablation: checkAblation,
  runDir: isString,
  step: isIndex,
  metric: oneOf(['exact_match_percent', 'bleu']),
  sentences: isIndex,
  intact: isFiniteNumber,
  ablated: isFiniteNumber,
};
export const checkAblationScore: Check<AblationScore> = object(scoreFields);

/** What ablating heads does to an input at a checkpoint (ablation/effect). */
export interface AblationEffectParams {
  runDir: string;
  /** The checkpoint's step; the newest when absent. */
  step?: number;
  input: InputPair;
  ablation: Ablation;
}
export const checkAblationEffectParams: Check<AblationEffectParams> = object({
  runDir: isAbsolutePath,
  step: optional(isIndex),
  input: checkInputPair,
  ablation: checkAblation,
});

/**
 * One ablation tried on a run (Ablate Heads…), as the run folder keeps them (`ablations.json`,
 * RUN_FILES.ablations: a JSON array, oldest first, written whole) and the Ablation Results panel
 * lists them: the score and when it was made.
 */
export interface AblationRecord extends AblationScore {
  /** When it was scored, in milliseconds since 1970. */
  time: number;
}

export const checkAblationRecord: Check<AblationRecord> = object<AblationRecord>({
  ...scoreFields,
  time: isFiniteNumber,
});

/** The most ablations a run folder keeps: the oldest go first past it. */
export const ABLATION_RECORDS_KEPT = 1000;

/** `ablations.json` as read: an array of records, at most ABLATION_RECORDS_KEPT. */
export const checkAblationRecords: Check<AblationRecord[]> = (v, path) =>
  arrayOf(checkAblationRecord)(v, path) ??
  ((v as unknown[]).length > ABLATION_RECORDS_KEPT
    ? `${path} must hold at most ${ABLATION_RECORDS_KEPT} ablations, got ${(v as unknown[]).length}`
    : undefined);
