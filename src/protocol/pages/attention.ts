/**
 * The attention view's messages (webview/attention/page.ts ↔ panels/attention/panel.ts): attention,
 * the blocks its zoom asked for and value-weighted attention to its page; a head opened, an input
 * asked for, heads switched off, a block of a pooled head and the value-weighted toggle from it. A
 * request carries an `id` and its reply echoes it, so the page knows which of its requests a reply
 * answers.
 */
import { type Attention, type InputPair, checkAttention, checkInputPair } from '../attention';
import { type Ablation, checkAblation } from '../ablation';
import { type AttentionBlock, type BlockRange, checkBlockMsg, checkBlockRange } from '../attentionBlock';
import { isBoolean, isIndex, isString, object, optional } from '../check';
import { type AttentionState, checkStateOf } from '../panelState';
import {
  type AttentionMsg,
  type OpenHeadMsg,
  pageProtocol,
  sharedChecks,
  type StateMsg,
  type Versioned,
} from '../webview';

/** The user asked for the attention of a pair at a checkpoint (the attention view's form). */
export interface InspectInputMsg extends Versioned {
  type: 'inspectInput';
  input: InputPair;
  /** The checkpoint step; the newest when absent. */
  step?: number;
}
/** The user switched heads off (or all back on: no heads); the panel answers with a state showing the effect. */
export interface AblateHeadsMsg extends Versioned {
  type: 'ablateHeads';
  ablation: Ablation;
}
/** The zoom asks for a block of the head it shows; the panel answers with `attentionBlock` and the same id. */
export interface RequestBlockMsg extends Versioned, BlockRange {
  type: 'requestBlock';
  id: number;
}
/** The block asked for by request `id`, weights as a Float32Array. */
export interface AttentionBlockMsg extends Versioned, AttentionBlock {
  type: 'attentionBlock';
  id: number;
}

/**
 * The value-weighted toggle: `on` asks for the shown attention's value-weighted maps (attention/get
 * with valueWeighted, once: the panel keeps them beside the weights); the panel answers `valueWeighted`.
 */
export interface ShowValueWeightedMsg extends Versioned {
  type: 'showValueWeighted';
  id: number;
  on: boolean;
}
/** The answer to `showValueWeighted` `id`: the attention with its `valueWeighted` maps, or why there is none. */
export interface ValueWeightedMsg extends Versioned {
  type: 'valueWeighted';
  id: number;
  attention?: Attention;
  error?: string;
}

export type AttentionToPage = StateMsg<AttentionState> | AttentionMsg | AttentionBlockMsg | ValueWeightedMsg;
export type AttentionFromPage = OpenHeadMsg | InspectInputMsg | AblateHeadsMsg | RequestBlockMsg | ShowValueWeightedMsg;

const withId = object({ id: isIndex });

export const attentionPage = pageProtocol<'attention', AttentionToPage, AttentionFromPage>(
  'attention',
  checkStateOf('attention'),
  {
    attention: sharedChecks.attention,
    attentionBlock: (v, path) => withId(v, path) ?? checkBlockMsg(v, path),
    valueWeighted: object({ id: isIndex, attention: optional(checkAttention), error: optional(isString) }),
  },
  {
    openHead: sharedChecks.openHead,
    inspectInput: object({ input: checkInputPair, step: optional(isIndex) }),
    ablateHeads: object({ ablation: checkAblation }),
    requestBlock: (v, path) => withId(v, path) ?? checkBlockRange(v, path),
    showValueWeighted: object({ id: isIndex, on: isBoolean }),
  },
);
