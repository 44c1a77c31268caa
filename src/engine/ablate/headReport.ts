/**
 * The head report of a run's checkpoint (protocol/heads.ts): importance on held-out pairs, then
 * pruning curves in increasing importance and in a seeded random order, scored on the test split
 * (exact match for built-in tasks, BLEU for corpora). `heads` on the CLI and `heads/report` on the
 * wire both come here.
 */
import type { HeadReport, PruningPoint } from '../../protocol/heads';
import { checkpointStep, loadCheckpoint } from '../checkpoint';
import { toBatch } from '../data/batchStream';
import type { TranslateOptions } from '../decode/translate';
import { scoreHeldOut } from '../metrics/heldOut';
import { headImportance } from '../telemetry/importance';
import { testSplit } from './score';
import { allHeads, byImportance, importanceOf, prunable, pruningCurve, randomOrder } from './pruning';

export interface HeadReportOptions {
  /** The checkpoint file; the run's newest when absent. */
  checkpoint: string;
  /** Held-out pairs the importance is averaged over. */
  pairs: number;
  /** Test sentences the metric is taken on. */
  limit: number;
  /** Heads to remove at most (default all). */
  upTo?: number;
  seed: number;
  decoding: TranslateOptions;
  /** Each point as it is measured (for progress), with the number of heads each curve removes. */
  onPoint?: (order: 'byImportance' | 'random', p: PruningPoint, upTo: number) => void;
}

export async function headReport(runDir: string, o: HeadReportOptions): Promise<HeadReport> {
  const { run, data, test, refs, metric: name } = testSplit(runDir, o.limit);
  const task = name === 'exact_match_percent';
  const held = (data.valid.length ? data.valid : data.train).slice(0, o.pairs);
  const model = loadCheckpoint(o.checkpoint);
  try {
    const total = allHeads(model).length;
    const upTo = o.upTo ?? total;
    if (!(Number.isInteger(upTo) && upTo >= 0 && upTo <= total))
      throw new RangeError(`upTo: the model has ${total} heads, got ${upTo}`);
    const batches = Array.from({ length: Math.ceil(held.length / 32) }, (_, i) =>
      toBatch(held.slice(i * 32, (i + 1) * 32)),
    );
    const importance = await headImportance(model, batches);
    const order = byImportance(importance, model);
    const metric = async (heads: TranslateOptions['heads']) => {
      const s = await scoreHeldOut(model, test, refs, data.vocab, { ...o.decoding, ...(heads ? { heads } : {}) });
      return task ? (100 * s.exact) / test.length : s.bleu.score;
    };
    const ranked = await pruningCurve(model, order, metric, upTo, (p) => o.onPoint?.('byImportance', p, upTo));
    const random = await pruningCurve(model, randomOrder(model, o.seed), metric, upTo, (p) =>
      o.onPoint?.('random', p, upTo),
    );
    const tolerance = task ? 1 : 0.5;
    return {
      run: run.path,
      checkpoint: o.checkpoint,
      step: checkpointStep(o.checkpoint),
      metric: name,
      sentences: test.length,
      tolerance,
      importance: Object.fromEntries(order.map((id) => [id, importanceOf(importance, model, id)])),
      byImportance: ranked,
      random: { seed: o.seed, points: random },
      prunable: { byImportance: prunable(ranked, tolerance), random: prunable(random, tolerance) },
    };
  } finally {
    model.dispose();
  }
}
