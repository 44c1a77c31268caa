/**
 * What the attention view calls things: each kind's title, a head's identity, the run and input an
 * attention belongs to (as the header names them), token labels of the large card's axes, and what
 * the view says when it has nothing to draw.
 */
import {
  type Attention,
  type AttentionKind,
  describeShownInput,
  headId,
  type HeadRef,
} from '../../src/protocol/attention';
import type { ViewHeader } from '../../src/protocol/webview';
import { plotlyText, runName } from '../common';

/** Each kind's title, as the grid and the large card name it. */
export const KIND_TITLES: Record<AttentionKind, string> = {
  encoder_self: 'Encoder self-attention',
  decoder_self: 'Decoder self-attention (masked)',
  cross: 'Encoder–decoder (cross) attention',
};

/** Whether a is the head b (null is none). */
export function sameHead(a: HeadRef | null, b: HeadRef): boolean {
  return !!a && a.kind === b.kind && a.layer === b.layer && a.head === b.head;
}

/** The run folder's name and the source of an attention, as the header names them. */
export function shownOf(a: Attention): { run: string; input: string } {
  return {
    run: runName(a.source.runDir),
    input: a.source.input === 'probe' ? 'probe pair' : `“${describeShownInput(a)}”`,
  };
}

/** What the large head card shows: run, step, input and head, so a change of any of them is seen. */
export function detailKey(a: Attention, ref: HeadRef): string {
  const { run, input } = shownOf(a);
  return `${run} step ${a.source.step} ${input} ${headId(ref)}`;
}

/** An axis label of a token (or a pooled range of them), escaped for plotly. */
export function label(tokens: string[], from: number, to: number): string {
  const tok = plotlyText(tokens[from] ?? '');
  return to - from <= 1 ? `${tok} ‹${from}›` : `${tok}… ‹${from}–${to - 1}›`;
}

/** What the view says when it has nothing to draw: what to do next. */
export function emptyStatus(header: ViewHeader | null): string {
  if (!header)
    return 'No run selected: train one (Attention Debugger: Train) or open a run folder (Open Run / Load Checkpoint).';
  // A run without a vocabulary reads token ids (the form's boxes say so too).
  const type = header.vocab ? 'type a sentence above' : 'type token ids above';
  return header.live
    ? `${header.run} is training: its probe's attention arrives with the first snapshot; or ${type}.`
    : `No attention of ${header.run} to show yet: ${type}, or pick a checkpoint in the Runs view.`;
}
