/**
 * A sentence's beam search at a checkpoint of a run, with the whole search tree (the Beam Tree
 * panel, `beam/tree`): every hypothesis looked at, the n-best, and greedy's output to mark its path.
 * Training is never touched: the weights come from the checkpoint file.
 */
import { describeInput, type InputPair } from '../../protocol/attention';
import type { BeamTreeView, EarlyStop } from '../../protocol/beamTree';
import { checkpointStep } from '../checkpoint';
import { translate } from '../decode/translate';
import { withCheckpoint } from './attentionAt';

/** JSON has no −∞: a forced EOS the model rules out is sent as −1e30. */
const finite = (x: number) => Math.max(x, -1e30);

export async function beamTreeAt(
  runDir: string,
  step: number | undefined,
  input: InputPair,
  opts: { beam?: number; alpha?: number; earlyStop?: EarlyStop } = {},
): Promise<BeamTreeView> {
  return withCheckpoint(runDir, step, input, async ({ checkpoint, model, ids: { src }, label }) => {
    const beam = opts.beam ?? 4;
    const alpha = opts.alpha ?? 0.6;
    const earlyStop = opts.earlyStop ?? 'exact';
    const [t] = await translate(model, [src], { beamSize: beam, alpha, earlyStop, tree: true });
    const [greedy] = await translate(model, [src], { beamSize: 1, alpha });
    const tree = t!.tree!;
    const texts = label(tree.nodes.map((n) => n.token));
    return {
      runDir,
      step: checkpointStep(checkpoint),
      checkpoint,
      input: describeInput(input),
      srcIds: src,
      srcTokens: label(src),
      beam,
      alpha,
      earlyStop,
      nodes: tree.nodes.map((n, i) => ({ ...n, logProb: finite(n.logProb), score: finite(n.score), text: texts[i]! })),
      nBest: tree.nBest,
      greedy: [...greedy!.tokens, model.config.eos_id],
    };
  });
}
