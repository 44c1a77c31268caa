/**
 * heads/global: one head's queries and keys over many sentences, in 2-D (after AttentionViz, Yeh et
 * al., IEEE VIS 2023). Each query's and key's head projection (q_i = x_i W^Q_h + b^Q_h and
 * k_j = x_j W^K_h + b^K_h, the d_k vectors whose dot products make the head's scores) for up to
 * GLOBAL_MAX_PAIRS validation pairs, projected to 2-D by a basis fitted once at `basisStep` and
 * reused at every step, so a step slider moves the points through training in one frame. Computed
 * by engine/inspect/globalView.ts.
 */
import { checkPairWords, type HeadRef, headRefFields, type PairWords } from './attention';
import {
  type Check,
  arrayOf,
  intIn,
  isAbsolutePath,
  isFiniteNumber,
  isIndex,
  isString,
  object,
  oneOf,
  optional,
} from './check';

/** The most validation pairs one view holds (the 500). */
export const GLOBAL_MAX_PAIRS = 500;
/** UMAP's fit is O(n log n) per epoch in plain JavaScript: it takes at most this many points. */
export const UMAP_MAX_POINTS = 4000;
export const PROJECTIONS = ['pca', 'umap'] as const;
export type Projection2D = (typeof PROJECTIONS)[number];
export const ROLES = ['q', 'k'] as const;
export type Role = (typeof ROLES)[number];

export interface GlobalViewParams extends HeadRef {
  /** A run folder with a validation split (a built-in task's, or a corpus's). */
  runDir: string;
  /** The checkpoint whose vectors are shown; the basis step when absent. */
  step?: number;
  /** The checkpoint the 2-D basis is fitted at; the newest when absent. */
  basisStep?: number;
  /** The first `pairs` validation pairs; default GLOBAL_MAX_PAIRS. */
  pairs?: number;
  /** pca (default) or umap (seeded; fitted at the basis step, other steps placed by its transform). */
  projection?: Projection2D;
}

export const checkGlobalViewParams: Check<GlobalViewParams> = object({
  runDir: isAbsolutePath,
  step: optional(isIndex),
  basisStep: optional(isIndex),
  ...headRefFields,
  pairs: optional(intIn(1, GLOBAL_MAX_PAIRS)),
  projection: optional(oneOf(PROJECTIONS)),
});

/** One validation pair: its ids as the attention view takes them (source with EOS, target without BOS) and its tokens. */
export interface GlobalPair {
  src: number[];
  tgt: number[];
  /** Source and target as words (the run's vocabulary decodes them): what the attention view's form takes. */
  words: PairWords;
  srcTokens: string[];
  /** The decoder's input: BOS first. */
  tgtTokens: string[];
}

/** Every point of the view, one entry each in every list: queries first, then keys. */
export interface GlobalPoints {
  x: number[];
  y: number[];
  role: Role[];
  /** Index into `pairs`. */
  sentence: number[];
  /** The token's position in its side (source for encoder_self's queries and every kind's source keys). */
  position: number[];
  token: string[];
}

export interface GlobalView extends HeadRef {
  runDir: string;
  step: number;
  basisStep: number;
  projection: Projection2D;
  /** The run's checkpoint steps, oldest first: where the slider may go. */
  steps: number[];
  pairs: GlobalPair[];
  points: GlobalPoints;
  /** PCA: the share of the basis step's variance each of the two axes holds. */
  explained?: number[];
  /** How the step was placed: fitted at the basis step, or its transform for another step. */
  note: string;
}

const ids = arrayOf(isIndex);
const strings = arrayOf(isString);
const numbers = arrayOf(isFiniteNumber);

const shallow = object<GlobalView>({
  runDir: isString,
  ...headRefFields,
  step: isIndex,
  basisStep: isIndex,
  projection: oneOf(PROJECTIONS),
  steps: ids,
  pairs: arrayOf(
    object<GlobalPair>({ src: ids, tgt: ids, words: checkPairWords, srcTokens: strings, tgtTokens: strings }),
  ),
  points: object<GlobalPoints>({
    x: numbers,
    y: numbers,
    role: arrayOf(oneOf(ROLES)),
    sentence: ids,
    position: ids,
    token: strings,
  }),
  explained: optional(arrayOf(isFiniteNumber)),
  note: isString,
});

/** Checks a reply: every point list as long as x, each point's sentence a pair and its position within that pair's side. */
export const checkGlobalView: Check<GlobalView> = (v, path) => {
  const why = shallow(v, path);
  if (why) return why;
  const r = v as GlobalView;
  const n = r.points.x.length;
  for (const [name, list] of Object.entries(r.points) as [string, unknown[]][])
    if (list.length !== n) return `${path}.points.${name} must hold ${n} values (points.x.length), got ${list.length}`;
  for (let i = 0; i < n; i++) {
    const pair = r.pairs[r.points.sentence[i]!];
    if (!pair) return `${path}.points.sentence[${i}] must be below ${r.pairs.length} (pairs.length)`;
    const side = sideOf(r.kind, r.points.role[i]!) === 'source' ? pair.srcTokens : pair.tgtTokens;
    if (r.points.position[i]! >= side.length)
      return `${path}.points.position[${i}] must be below ${side.length} (that pair's tokens), got ${r.points.position[i]}`;
  }
  return undefined;
};

/** Which side of a pair a head's queries or keys come from. */
export function sideOf(kind: HeadRef['kind'], role: Role): 'source' | 'target' {
  if (kind === 'encoder_self') return 'source';
  if (kind === 'decoder_self') return 'target';
  return role === 'q' ? 'target' : 'source';
}
