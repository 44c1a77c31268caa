/**
 * The selection every panel shows (a run, a step, an input pair, a head), as it is kept in the
 * workspace state and checked when read back, and the inputs that have nothing to show.
 */
import type { Attention, InputPair, HeadRef } from '../protocol/attention';
import { checkHeadRef, checkInputPair } from '../protocol/attention';
import { type Check, isIndex, isString, object, optional } from '../protocol/check';
import type { AttentionResult } from '../protocol/inspection';

export interface Selection {
  runDir: string;
  /** The step the views point at; undefined: the newest (a live run's views follow it). */
  step?: number;
  input: InputPair;
  head?: HeadRef;
}

export const checkSelection: Check = object({
  runDir: isString,
  step: optional(isIndex),
  input: checkInputPair,
  head: optional(checkHeadRef),
});

export const STATE_KEY = 'attentionDebugger.selection';

/** Why a typed input has nothing to show (an empty or blank source), said before anything changes. */
export function emptyInput(input: InputPair): string | undefined {
  if (input.kind === 'text' && !input.src.trim())
    return 'the source sentence is empty: type a sentence to decode (nothing was changed)';
  if (input.kind === 'ids' && !input.src.length)
    return 'the source has no token ids: type ids such as 5 6 7 (nothing was changed)';
  return undefined;
}

export const PROBE: InputPair = { kind: 'probe' };

/** The attention of an input, and what the model decoded when no target was given. */
export type InputAttention = Omit<AttentionResult, 'attention'> & { attention: Attention };
