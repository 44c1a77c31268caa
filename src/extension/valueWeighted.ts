/**
 * The attention view's value-weighted toggle and the head inspector's score decomposition, asked of
 * the engine for the selection's run, step and input: attention/get with `valueWeighted` (its base64
 * decoded once here) and heads/scores. Each answer echoes the page's request id.
 */
import type { Attention, HeadRef } from '../protocol/attention';
import type { HeadScores } from '../protocol/headScores';
import { attentionGet, headsScores } from '../protocol/methods';
import type { Selection } from './selection';
import type { EngineClient } from './engineClient';
import { toAttentionInTurns } from './convert';
import { errorText } from './errorText';

const stepOf = (sel: Selection) => (sel.step !== undefined ? { step: sel.step } : {});

/** The attention of the selection with each map's `valueWeighted` (‖α·vW^O‖) beside its weights. */
export async function valueWeightedOf(engine: EngineClient, sel: Selection): Promise<Attention> {
  const r = await engine.request(attentionGet, {
    runDir: sel.runDir,
    input: sel.input,
    ...stepOf(sel),
    valueWeighted: true,
  });
  return toAttentionInTurns(r.attention, 'attention/get result.attention');
}

/** One query row of a head split into its parts (heads/scores), or why the engine gave none. */
export async function scoresOf(
  engine: EngineClient,
  sel: Selection,
  ref: HeadRef,
  query: number,
): Promise<{ scores: HeadScores } | { error: string }> {
  try {
    const { kind, layer, head } = ref;
    const scores = await engine.request(headsScores, {
      runDir: sel.runDir,
      input: sel.input,
      ...stepOf(sel),
      ...{ kind, layer, head, query },
    });
    return { scores };
  } catch (err) {
    return { error: errorText(err) };
  }
}
