/**
 * What the views ask of the engine for the selection's run, step and input: its attention
 * (attention/get, its base64 decoded here a kind per event-loop turn), with `valueWeighted` for the
 * attention view's toggle, and one head's query row split into its parts (heads/scores) for the head
 * inspector.
 */
import type { HeadRef } from '../protocol/attention';
import type { HeadScores } from '../protocol/headScores';
import { attentionGet, headsScores } from '../protocol/methods';
import type { InputAttention, Selection } from './selection';
import type { EngineClient } from './engineClient';
import { toAttentionInTurns } from './convert';
import { errorText } from './errorText';

const stepOf = (sel: Selection) => (sel.step !== undefined ? { step: sel.step } : {});

/** The attention of the selection; with `valueWeighted`, each map's ‖α·vW^O‖ beside its weights. */
export async function attentionOfSelection(
  engine: EngineClient,
  sel: Selection,
  valueWeighted = false,
): Promise<InputAttention> {
  const r = await engine.request(attentionGet, {
    runDir: sel.runDir,
    input: sel.input,
    ...stepOf(sel),
    ...(valueWeighted ? { valueWeighted } : {}),
  });
  const attention = await toAttentionInTurns(r.attention, 'attention/get result.attention'); // a kind a turn
  return { ...r, attention };
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
