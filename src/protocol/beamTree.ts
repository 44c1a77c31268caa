/**
 * The search tree of one sentence's beam search (issue 10): what `decode --json --tree` prints and
 * the Beam Tree panel draws. Every hypothesis the search looked at is a node: the root (BOS), and at
 * each step the 2k best extensions of the live hypotheses, whatever became of them.
 */

export const EARLY_STOPS = ['exact', 'first-k'] as const;
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
export type BeamNodeStatus = 'expanded' | 'finished' | 'pruned' | 'open';

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
