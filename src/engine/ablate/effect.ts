/**
 * What ablating heads does to one input at one checkpoint (the attention view's head toggles,
 * `ablation/effect`): the target's token log-probs with the model as trained and with the heads
 * ablated (the same target: the input's own, or what the intact model decoded), and the greedy
 * output of the ablated model. Training is never touched: the weights come from the checkpoint.
 */
import type { InputPair } from '../../protocol/attention';
import type { Ablation, AblationEffect } from '../../protocol/ablation';
import { checkpointStep } from '../checkpoint';
import { translate } from '../decode/translate';
import { attentionOfPairs } from '../inspect/attentionOfPairs';
import { tokenLogProbs, withCheckpoint } from '../inspect/attentionAt';
import { probeBatchOf } from '../run/probe';
import { ablationGates } from './gates';

export async function ablationEffectAt(
  runDir: string,
  step: number | undefined,
  input: InputPair,
  ablation: Ablation,
  beam = 4,
): Promise<AblationEffect> {
  return withCheckpoint(runDir, step, input, async ({ checkpoint, model, vocab, ids, label }) => {
    const gates = ablationGates(model, ablation, ablation.mode === 'mean' ? probeBatchOf(runDir) : undefined);
    try {
      const c = model.config;
      const tgt = ids.tgt ?? [c.bos_id, ...(await translate(model, [ids.src], { beamSize: beam }))[0]!.tokens];
      const [intact] = await attentionOfPairs(model, [ids.src], [tgt]);
      const [ablated] = await attentionOfPairs(model, [ids.src], [tgt], gates.heads);
      const [greedy] = await translate(model, [ids.src], { beamSize: 1, heads: gates.heads });
      const text = vocab ? vocab.decode(greedy!.tokens) : greedy!.tokens.join(' ');
      return {
        ablation,
        runDir,
        step: checkpointStep(checkpoint),
        tgtTokens: label(tgt),
        intact: tokenLogProbs(intact!.logProbs, tgt, c.tgt_vocab, c.eos_id),
        ablated: tokenLogProbs(ablated!.logProbs, tgt, c.tgt_vocab, c.eos_id),
        output: { text, tokens: label(greedy!.tokens) },
      };
    } finally {
      gates.dispose();
    }
  });
}
