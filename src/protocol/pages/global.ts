/**
 * The Global Q/K view's messages (webview/global/page.ts ↔ panels/global/panel.ts): its state to
 * its page; from it, the step the slider moved to, the projection chosen, and a point clicked (that
 * pair's attention at that step, in the attention view).
 */
import { intIn, isIndex, object, oneOf } from '../check';
import { GLOBAL_MAX_PAIRS, PROJECTIONS, type Projection2D } from '../globalView';
import { checkStateOf, type GlobalState } from '../panelState';
import { pageProtocol, type StateMsg, type Versioned } from '../webview';

/** The step slider moved: the same basis, that checkpoint's queries and keys. */
export interface GlobalStepMsg extends Versioned {
  type: 'globalStep';
  step: number;
}
/** PCA or UMAP: the basis is fitted again at the basis step. */
export interface GlobalProjectionMsg extends Versioned {
  type: 'globalProjection';
  projection: Projection2D;
}
/** A point clicked: its pair (an index into the view's pairs) at the step shown, in the attention view. */
export interface OpenPairMsg extends Versioned {
  type: 'openPair';
  sentence: number;
  step: number;
}

export type GlobalToPage = StateMsg<GlobalState>;
export type GlobalFromPage = GlobalStepMsg | GlobalProjectionMsg | OpenPairMsg;

export const globalPage = pageProtocol<'global', GlobalToPage, GlobalFromPage>(
  'global',
  checkStateOf('global'),
  {},
  {
    globalStep: object({ step: isIndex }),
    globalProjection: object({ projection: oneOf(PROJECTIONS) }),
    openPair: object({ sentence: intIn(0, GLOBAL_MAX_PAIRS - 1), step: isIndex }),
  },
);
