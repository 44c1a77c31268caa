/**
 * What removing heads costs on a run's test split (the extension's Ablate Heads…): the split
 * decoded greedily by the checkpoint as trained and with the heads ablated, scored as `heads`
 * scores its pruning curves (exact match in percent for the built-in tasks, BLEU for corpora).
 */
import type { Ablation, AblationScore } from '../../protocol/ablation';
import { checkpointStep, loadCheckpoint } from '../checkpoint';
import type { TranslateOptions } from '../decode/translate';
import { scoreHeldOut } from '../metrics/heldOut';
import { probeBatchOf } from '../run/probe';
import { openRun } from '../run/setup';
import { ablationGates } from './gates';

/** The test pairs a head is scored on, their reference texts and the metric (headReport.ts shares it). */
export function testSplit(runDir: string, limit: number) {
  const { run, data, dataSpec } = openRun(runDir, {}, 'read');
  const test = data.test.slice(0, limit);
  if (!test.length) throw new Error(`${run.path} has no test split to score heads on`);
  const task = dataSpec.kind === 'task';
  const refs = task ? test.map((p) => data.vocab.decode(p.tgt)) : data.testText.slice(0, limit).map((p) => p.tgt);
  const metric = task ? ('exact_match_percent' as const) : ('bleu' as const);
  return { run, data, test, refs, metric };
}

export async function scoreAblation(
  runDir: string,
  checkpoint: string,
  ablation: Ablation,
  limit: number,
): Promise<AblationScore> {
  const { run, data, test, refs, metric } = testSplit(runDir, limit);
  const model = loadCheckpoint(checkpoint);
  const gates = ablationGates(model, ablation, ablation.mode === 'mean' ? probeBatchOf(run.path) : undefined);
  try {
    const score = async (heads?: TranslateOptions['heads']): Promise<number> => {
      const s = await scoreHeldOut(model, test, refs, data.vocab, { beamSize: 1, ...(heads ? { heads } : {}) });
      return metric === 'bleu' ? s.bleu.score : (100 * s.exact) / test.length;
    };
    return {
      ablation,
      runDir: run.path,
      step: checkpointStep(checkpoint),
      metric,
      sentences: test.length,
      intact: await score(),
      ablated: await score(gates.heads),
    };
  } finally {
    gates.dispose();
    model.dispose();
  }
}
