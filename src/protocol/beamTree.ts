/**
 * The search tree of one sentence's beam search (issue 10): what `decode --json --tree` prints and
 * the Beam Tree panel draws. Every hypothesis the search looked at is a node: the root (BOS), and at
 * each step the 2k best extensions of the live hypotheses, whatever became of them.
 */
import {
  type Check,
  arrayOf,
  intIn,
  isBoolean,
  isFiniteNumber,
  isIndex,
  isPositiveInt,
  isString,
  object,
  oneOf,
} from './check';

export const EARLY_STOPS = ['exact', 'first-k'] as const;

/**
 * The widest beam a request or the CLI may ask for: 3 times the paper's widest, 21 (§6.3); every
 * step scores beam × vocabulary hypotheses (engine/run/limits.ts BEAM_LIMIT says it to CLI users).
 */
export const MAX_BEAM = 64;
/**
 * When a sentence's beam search stops.
 * - exact: only when no live hypothesis can still beat the k-th best finished one under the
 *   length penalty (its log-prob can only fall, and lp grows at most to lp(max length)).
 * - first-k: as soon as k hypotheses have finished. Faster, but on a confident model the best
 *   beam's early EOS can fill the list before a better, longer hypothesis ends.
 */
export type EarlyStop = (typeof EARLY_STOPS)[number];

/**
 * - expanded: a live hypothesis that the next step extended;
 * - finished: ended with EOS and kept among the k best finished;
 * - pruned: not among the k kept (live or finished), or pushed out of the finished list later;
 * - open: still live when the search stopped (the stopping rule showed it could not win).
 */
export const BEAM_NODE_STATUSES = ['expanded', 'finished', 'pruned', 'open'] as const;
export type BeamNodeStatus = (typeof BEAM_NODE_STATUSES)[number];

export interface BeamNode {
  /** Index of this node in the tree's `nodes`; the root is 0. */
  id: number;
  /** The node this one extends; -1 for the root. */
  parent: number;
  /** Tokens after BOS (0 for the root). */
  depth: number;
  /** The token this node appends (BOS for the root). */
  token: number;
  /** log P(y_1..y_depth | X). */
  logProb: number;
  /** logProb / lp(depth): the score it would have if it ended here (GNMT length penalty). */
  score: number;
  status: BeamNodeStatus;
  /** On the path to the returned best hypothesis. */
  chosen: boolean;
}

export interface BeamTree {
  nodes: BeamNode[];
  /** Ids of the finished leaves, best first (the n-best list). */
  nBest: number[];
}

/** A node as the Beam Tree panel gets it: with its token's label. */
export interface BeamViewNode extends BeamNode {
  text: string;
}

/**
 * One sentence's beam search at a checkpoint, as the engine answers `beam/tree` and the Beam Tree
 * panel draws it. Log-probs and scores are finite: a −∞ (a forced EOS the model rules out) is sent
 * as −1e30, since JSON has no −∞.
 */
export interface BeamTreeView {
  runDir: string;
  /** The checkpoint's step and file. */
  step: number;
  checkpoint: string;
  /** The source as the user gave it. */
  input: string;
  /** Source ids (EOS last) and their labels. */
  srcIds: number[];
  srcTokens: string[];
  beam: number;
  alpha: number;
  earlyStop: EarlyStop;
  nodes: BeamViewNode[];
  /** Ids of the finished leaves, best first. */
  nBest: number[];
  /** Greedy decoding's tokens (EOS last), to mark its path. */
  greedy: number[];
}

const checkNode = object<BeamViewNode>({
  id: isIndex,
  parent: intIn(-1, Number.MAX_SAFE_INTEGER),
  depth: isIndex,
  token: isIndex,
  logProb: isFiniteNumber,
  score: isFiniteNumber,
  status: oneOf(BEAM_NODE_STATUSES),
  chosen: isBoolean,
  text: isString,
});

/** Checks a tree where it enters a process or a frame: fields, and parents that come before their children. */
export const checkBeamTreeView: Check<BeamTreeView> = (v, path) => {
  const why = object<BeamTreeView>({
    runDir: isString,
    step: isIndex,
    checkpoint: isString,
    input: isString,
    srcIds: arrayOf(isIndex),
    srcTokens: arrayOf(isString),
    beam: isPositiveInt,
    alpha: isFiniteNumber,
    earlyStop: oneOf(EARLY_STOPS),
    nodes: arrayOf(checkNode),
    nBest: arrayOf(isIndex),
    greedy: arrayOf(isIndex),
  })(v, path);
  if (why) return why;
  const t = v as BeamTreeView;
  for (const [i, n] of t.nodes.entries()) {
    if (n.id !== i) return `${path}.nodes[${i}].id must be ${i}, got ${n.id}`;
    if (i > 0 && !(n.parent >= 0 && n.parent < i))
      return `${path}.nodes[${i}].parent must be an earlier node, got ${n.parent}`;
  }
  if (t.nodes.length && t.nodes[0]!.parent !== -1) return `${path}.nodes[0] must be the root (parent -1)`;
  for (const [i, id] of t.nBest.entries())
    if (id >= t.nodes.length) return `${path}.nBest[${i}] must be a node id, got ${id}`;
  return undefined;
};
